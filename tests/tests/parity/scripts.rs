//! What each case does, op by op, and the values its thread ends with. `tests/python/parity.py`
//! reads the same ops; `cases.rs` builds the graphs they run on.

use serde_json::{json, Value};

pub(crate) fn interrupt_node() -> (Vec<Value>, Value) {
    let ops =
        vec![json!({"op": "invoke", "input": {"log": ["start"]}}), json!({"op": "resume", "value": "Ada"})];
    (ops, json!({"log": ["start", "ask:Ada"], "answer": "Ada"}))
}

/// A node with two `interrupt()` calls, answered one at a time by alternating sides: the second
/// side finds the first answer recorded and must not ask again.
pub(crate) fn double_interrupt() -> (Vec<Value>, Value) {
    let ops = vec![
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        json!({"op": "resume", "value": "x"}),
        json!({"op": "resume", "value": "y"}),
    ];
    (ops, json!({"log": ["start", "x+y"]}))
}

/// Two parallel nodes interrupt; each is answered by id in a run of its own.
pub(crate) fn interrupts_by_id() -> (Vec<Value>, Value) {
    let ops = vec![
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        json!({"op": "resume_by_node", "answers": {"a": "x"}}),
        json!({"op": "resume_by_node", "answers": {"b": "y"}}),
    ];
    (ops, json!({"log": ["start", "a:x", "b:y"]}))
}

pub(crate) fn subgraph_interrupt() -> (Vec<Value>, Value) {
    let ops =
        vec![json!({"op": "invoke", "input": {"log": ["start"]}}), json!({"op": "resume", "value": "Ada"})];
    // The child returns its whole state, so the shared `log` reducer applies its copy again.
    (ops, json!({"log": ["start", "start", "ask:Ada", "after"], "answer": "Ada"}))
}

/// `interrupt_before=["b"]` and `interrupt_after=["c"]`, continued with `invoke(None)`.
pub(crate) fn breakpoints() -> (Vec<Value>, Value) {
    let ops = vec![
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        json!({"op": "continue"}),
        json!({"op": "continue"}),
    ];
    (ops, json!({"log": ["start", "a", "b", "c"]}))
}

/// A join edge (`add_edge(["a", "b"], "c")`) with a breakpoint before `c`: the paused thread
/// holds the barrier with both sources seen.
pub(crate) fn join_breakpoint() -> (Vec<Value>, Value) {
    let ops = vec![json!({"op": "invoke", "input": {"log": ["start"]}}), json!({"op": "continue"})];
    (ops, json!({"log": ["start", "a", "b", "c"]}))
}

/// Three pushed workers, one failing after the others finished: the step's pending writes are
/// the finished ones, and the other side re-runs only the failed worker.
pub(crate) fn push_failure() -> (Vec<Value>, Value) {
    let ops =
        vec![json!({"op": "invoke", "input": {"log": ["start"]}, "fail": true}), json!({"op": "continue"})];
    // Every item once: the finished workers' pending writes are applied, not run again.
    (ops, json!({"log": ["start", "w1", "w2", "w3"]}))
}

/// `update_state(values, as_node="a")` at a breakpoint before `b`, then continued.
pub(crate) fn update_state() -> (Vec<Value>, Value) {
    let ops = vec![
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        json!({"op": "update", "values": {"log": ["edited"]}, "as_node": "a"}),
        json!({"op": "continue"}),
    ];
    (ops, json!({"log": ["start", "a", "edited", "b", "c"]}))
}

/// Time travel: one side runs the thread to the end, the other replays it from the checkpoint
/// before `b` (a `fork` checkpoint, then new ones; the old history stays).
pub(crate) fn fork() -> (Vec<Value>, Value) {
    let ops =
        vec![json!({"op": "invoke", "input": {"log": ["start"]}}), json!({"op": "fork", "before": "b"})];
    (ops, json!({"log": ["start", "a", "b", "c"]}))
}

/// `Command(update=..., goto=...)` as input at an interrupt, resumed by the other side, then a
/// command on the finished thread: the null task's pending writes, the checkpoints and task ids
/// agree whichever side wrote them.
pub(crate) fn command_at_an_interrupt() -> (Vec<Value>, Value) {
    let ops = vec![
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        // No answer: `ask` interrupts again and `b` finishes beside it; the command's writes stay
        // pending on the interrupted checkpoint for the other side to find.
        json!({"op": "command", "update": {"log": ["edited"]}, "goto": ["b"]}),
        json!({"op": "resume", "value": "Ada"}),
        // On the finished thread: an update, a node and a push together.
        json!({"op": "command", "update": {"answer": "Bob"}, "goto": ["b", {"node": "b", "arg": {"item": "x"}}]}),
    ];
    (ops, json!({"log": ["start", "a", "edited", "ask:Ada", "b", "b", "b"], "answer": "Bob"}))
}

/// Update, goto and resume in one command, taken by the side that did not start the thread.
pub(crate) fn command_with_resume() -> (Vec<Value>, Value) {
    let ops = vec![
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        json!({"op": "command", "update": {"log": ["edited"]}, "goto": ["b"], "resume": "Ada"}),
    ];
    (ops, json!({"log": ["start", "a", "edited", "ask:Ada", "b"], "answer": "Ada"}))
}

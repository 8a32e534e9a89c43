//! A `Command(update=..., goto=..., resume=...)` as a run's input, with LangGraph's semantics
//! (`map_command` and `PregelLoop._first`): on a thread with a checkpoint its writes are the null
//! task's pending writes of that checkpoint, applied before the next step is planned.

use mnemograph_core::checkpoint::{CheckpointSource, ListOptions, NULL_TASK_ID};
use mnemograph_core::prelude::*;
use mnemograph_core::{Input, Resume, StateSnapshot};

use crate::support::*;

/// `START -> a -> ask -> END`, where `ask` interrupts; `b` and `c` are reachable only by a command.
fn asking() -> StateGraph<S> {
    StateGraph::<S>::new()
        .add_node("a", logger("a"))
        .add_node("ask", |_s: S, rt: Runtime| async move {
            let answer: String = rt.interrupt("q?")?;
            Ok::<_, Error>(SUpdate::log(vec![format!("ask:{answer}")]))
        })
        .add_node("b", logger("b"))
        .add_node("c", logger("c"))
        .add_edge(START, "a")
        .add_edge("a", "ask")
        .add_edge("ask", END)
        .add_edge("b", END)
        .add_edge("c", END)
}

fn sources(history: &[StateSnapshot<S>]) -> Vec<(CheckpointSource, i64)> {
    history.iter().map(|s| (s.metadata.as_ref().unwrap().source, s.metadata.as_ref().unwrap().step)).collect()
}

/// The null task's pending writes of the thread's latest checkpoint, `(channel, value)` in order.
async fn null_writes(g: &CompiledGraph<S>, cfg: &RunConfig) -> Vec<(String, serde_json::Value)> {
    let saver = g.checkpointer().unwrap();
    let tuple = saver.get_tuple(&cfg.checkpoint_config().unwrap()).await.unwrap().unwrap();
    tuple
        .pending_writes
        .iter()
        .filter(|w| w.task_id == NULL_TASK_ID)
        .map(|w| (w.channel.clone(), w.value.to_json().unwrap()))
        .collect()
}

/// Update, goto and resume together at an interrupt: the writes are saved on the interrupted
/// checkpoint as the null task's (destinations, updates, then the answer), the update shows in
/// that checkpoint's values, and the next step runs the resumed node beside the command's
/// destination; no checkpoint is made for the command itself. The values are Python's.
#[tokio::test]
async fn test_command_update_goto_resume_as_input() {
    let g = asking().compile_with(InMemoryCheckpointer::new()).unwrap();
    let cfg = RunConfig::thread("t");
    g.invoke(SUpdate::log(vec!["in".into()]), &cfg).await.unwrap();
    let cmd = Command::new().update(SUpdate::hello("u")).update(SUpdate::log(vec!["up".into()])).goto("b");
    let out = g.invoke_input(Input::command_with(cmd, Resume::value("yes")), &cfg).await.unwrap();
    assert!(!out.is_interrupted());
    assert_eq!(out.log, ["in", "a", "up", "ask:yes", "b"]);
    assert_eq!(out.hello, "u");
    let history = g.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    use CheckpointSource::{Input as In, Loop};
    assert_eq!(sources(&history), [(Loop, 2), (Loop, 1), (Loop, 0), (In, -1)]);
    // The interrupted checkpoint shows the command's update, and the tasks planned without it.
    assert_eq!(history[1].values.log, ["in", "a", "up"]);
    assert_eq!(history[1].values.hello, "u");
    assert_eq!(history[1].next, ["ask"]);
    let at = RunConfig::thread("t")
        .checkpoint_id(history[1].config.as_ref().unwrap().checkpoint_id.clone().unwrap());
    let saver = g.checkpointer().unwrap();
    let tuple = saver.get_tuple(&at.checkpoint_config().unwrap()).await.unwrap().unwrap();
    let null: Vec<(String, serde_json::Value)> = tuple
        .pending_writes
        .iter()
        .filter(|w| w.task_id == NULL_TASK_ID)
        .map(|w| (w.channel.clone(), w.value.to_json().unwrap()))
        .collect();
    // Read back by index: the answer's fixed slot (-4) first, then the writes as given.
    assert_eq!(
        null,
        [
            ("__resume__".to_owned(), serde_json::json!("yes")),
            ("branch:to:b".to_owned(), serde_json::json!("__start__")),
            ("hello".to_owned(), serde_json::json!("u")),
            ("log".to_owned(), serde_json::json!(["up"])),
        ]
    );
}

/// LangGraph's `test_command_with_static_breakpoints`: at a breakpoint before the first node, a
/// command's update is applied and the run continues through the interrupted node.
#[tokio::test]
async fn test_command_with_static_breakpoints() {
    let g = StateGraph::<S>::new()
        .add_node(
            "node1",
            |s: S| async move { Ok::<_, Error>(SUpdate::hello(format!("{}|node-1", s.hello))) },
        )
        .add_node(
            "node2",
            |s: S| async move { Ok::<_, Error>(SUpdate::hello(format!("{}|node-2", s.hello))) },
        )
        .add_edge(START, "node1")
        .add_edge("node1", "node2")
        .interrupt_before(["node1"])
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let cfg = RunConfig::thread("t");
    let first = g.invoke(SUpdate::hello("abc"), &cfg).await.unwrap();
    assert!(first.is_interrupted());
    let out =
        g.invoke_input(Input::command(Command::new().update(SUpdate::hello("def"))), &cfg).await.unwrap();
    assert!(!out.is_interrupted());
    assert_eq!(out.hello, "def|node-1|node-2");
}

/// A command that goes somewhere on a finished thread: its destinations run in the next step,
/// several at once; a push runs its node with its own input.
#[tokio::test]
async fn test_command_goto_nodes_and_push_on_finished_thread() {
    let g = asking().compile_with(InMemoryCheckpointer::new()).unwrap();
    let cfg = RunConfig::thread("t");
    g.invoke(SUpdate::log(vec!["in".into()]), &cfg).await.unwrap();
    g.invoke_input(Input::resume("r"), &cfg).await.unwrap();
    let out = g.invoke_input(Input::command(Command::new().goto("b").goto("c")), &cfg).await.unwrap();
    assert_eq!(out.log, ["in", "a", "ask:r", "b", "c"]);
    let pushed = S { hello: "sent".into(), ..S::default() };
    let cmd = Command::new().goto(Push::new("b", pushed)).update(SUpdate::hello("s"));
    let out = g.invoke_input(Input::command(cmd), &cfg).await.unwrap();
    assert_eq!(out.log, ["in", "a", "ask:r", "b", "c", "b"]);
    assert_eq!(out.hello, "s");
    let history = g.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    let steps: Vec<i64> = sources(&history).iter().map(|(_, step)| *step).collect();
    assert_eq!(steps, [4, 3, 2, 1, 0, -1]);
}

/// On a thread without a checkpoint the command is also the input: its update is applied before
/// the input checkpoint and again by START (so an append field gets it twice), and START goes to
/// the command's destination beside its own edge. Python gives the same values and steps.
#[tokio::test]
async fn test_command_on_new_thread_is_also_the_input() {
    let g = asking().compile_with(InMemoryCheckpointer::new()).unwrap();
    let cfg = RunConfig::thread("t");
    let cmd = Command::new().update(SUpdate::log(vec!["up".into()])).goto("b");
    let out = g.invoke_input(Input::command(cmd), &cfg).await.unwrap();
    assert_eq!(out.log, ["up", "up", "a", "b"]);
    assert_eq!(out.interrupts.len(), 1);
    let history = g.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    use CheckpointSource::{Input as In, Loop};
    assert_eq!(sources(&history), [(Loop, 1), (Loop, 0), (In, -1)]);
    assert_eq!(history[2].values.log, ["up"]);
    assert_eq!(history[2].next, ["__start__"]);
    assert_eq!(history[1].values.log, ["up", "up"]);
    assert_eq!(history[1].next, ["a", "b"]);
    // START writes the update, then the command's destination, then its own edge, as in Python.
    let saver = g.checkpointer().unwrap();
    let input = saver.get_tuple(history[2].config.as_ref().unwrap()).await.unwrap().unwrap();
    let channels: Vec<&str> = input.pending_writes.iter().map(|w| w.channel.as_str()).collect();
    assert_eq!(channels, ["log", "branch:to:b", "branch:to:a"]);
}

/// Without a checkpointer the command is the input too.
#[tokio::test]
async fn test_command_without_checkpointer() {
    let g = StateGraph::<S>::new().add_node("b", logger("b")).add_edge(START, "b").compile().unwrap();
    let cmd = Command::new().update(SUpdate::log(vec!["u".into()])).goto("b");
    let out = g.invoke_input(Input::command(cmd), &RunConfig::default()).await.unwrap();
    assert_eq!(out.log, ["u", "u", "b"]);
    let resume = Input::command_with(Command::new(), Resume::value(1));
    assert!(matches!(g.invoke_input(resume, &RunConfig::default()).await, Err(Error::NoCheckpointer)));
}

/// An empty command is refused (LangGraph's `EmptyInputError`); a destination that is no node
/// is refused before anything is saved.
#[tokio::test]
async fn test_empty_and_unknown_command_input() {
    let g = asking().compile_with(InMemoryCheckpointer::new()).unwrap();
    let cfg = RunConfig::thread("t");
    g.invoke(SUpdate::default(), &cfg).await.unwrap();
    let err = g.invoke_input(Input::command(Command::new()), &cfg).await.unwrap_err();
    assert!(matches!(err, Error::EmptyInput), "{err}");
    let err = g.invoke_input(Input::command(Command::new().goto("nope")), &cfg).await.unwrap_err();
    assert!(matches!(err, Error::UnknownNode(ref n) if n == "nope"), "{err}");
    assert!(null_writes(&g, &cfg).await.is_empty());
}

/// A command whose step is interrupted again leaves its writes pending on the same checkpoint:
/// the next resume applies them once more (as LangGraph does), and a second command's writes go
/// after the first's.
#[tokio::test]
async fn test_command_writes_stay_pending_until_the_step_finishes() {
    let g = asking().compile_with(InMemoryCheckpointer::new()).unwrap();
    let cfg = RunConfig::thread("t");
    g.invoke(SUpdate::default(), &cfg).await.unwrap();
    let out = g.invoke_input(Input::command(Command::new().update(SUpdate::hello("x"))), &cfg).await.unwrap();
    assert!(out.is_interrupted(), "ask has no answer yet");
    assert_eq!(out.hello, "x");
    let out = g.invoke_input(Input::command(Command::new().update(SUpdate::total(2))), &cfg).await.unwrap();
    assert!(out.is_interrupted());
    assert_eq!(
        null_writes(&g, &cfg).await,
        [("hello".to_owned(), serde_json::json!("x")), ("total".to_owned(), serde_json::json!(2))]
    );
    let state = g.get_state(&cfg).await.unwrap();
    assert_eq!((state.values.hello.as_str(), state.values.total), ("x", 2));
    let done = g.invoke_input(Input::resume("ok"), &cfg).await.unwrap();
    assert!(!done.is_interrupted());
    assert_eq!(done.log, ["a", "ask:ok"]);
    // `total` is a sum: the null writes applied on each of the three runs from that checkpoint,
    // but each run starts from the stored checkpoint, so the sum holds 2 once.
    assert_eq!((done.hello.as_str(), done.total), ("x", 2));
}

/// A command without an answer on an older checkpoint (time travel) forks: the fork checkpoint
/// holds the command's writes and plans its destination beside the replayed task, and the
/// addressed checkpoint gets no writes. Python gives the same history.
#[tokio::test]
async fn test_command_on_a_replayed_checkpoint_forks() {
    let g = asking().compile_with(InMemoryCheckpointer::new()).unwrap();
    let cfg = RunConfig::thread("t");
    g.invoke(SUpdate::log(vec!["in".into()]), &cfg).await.unwrap();
    g.invoke_input(Input::resume("r"), &cfg).await.unwrap();
    let history = g.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    let target = history.iter().find(|s| s.next == ["ask"]).unwrap();
    let id = target.config.as_ref().unwrap().checkpoint_id.clone().unwrap();
    let at = RunConfig::thread("t").checkpoint_id(id.clone());
    let cmd = Command::new().update(SUpdate::log(vec!["fork".into()])).goto("b");
    let out = g.invoke_input(Input::command(cmd), &at).await.unwrap();
    assert_eq!(out.interrupts.len(), 1, "the replayed ask asks again");
    assert_eq!(g.get_state(&cfg).await.unwrap().values.log, ["in", "a", "fork", "b"]);
    let history = g.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    use CheckpointSource::{Fork, Input as In, Loop};
    assert_eq!(sources(&history), [(Fork, 2), (Loop, 2), (Loop, 1), (Loop, 0), (In, -1)]);
    assert_eq!(history[0].values.log, ["in", "a", "fork"]);
    let mut next = history[0].next.clone();
    next.sort();
    assert_eq!(next, ["ask", "b"]);
    assert_eq!(history[0].tasks.len(), 2);
    let saver = g.checkpointer().unwrap();
    let addressed = saver.get_tuple(&at.checkpoint_config().unwrap()).await.unwrap().unwrap();
    // Only the earlier answer is there (the null task's `__resume__`), none of the command's writes.
    let null: Vec<&str> = addressed
        .pending_writes
        .iter()
        .filter(|w| w.task_id == NULL_TASK_ID)
        .map(|w| w.channel.as_str())
        .collect();
    assert_eq!(null, ["__resume__"]);
}

/// A new input on a thread whose checkpoint holds a command's writes keeps the command's updates
/// (the null writes apply before the input) and discards the tasks that step would have run,
/// the command's destination included. Python gives the same values and history.
#[tokio::test]
async fn test_new_input_after_an_unfinished_command_keeps_its_update() {
    let g = asking().compile_with(InMemoryCheckpointer::new()).unwrap();
    let cfg = RunConfig::thread("t");
    g.invoke(SUpdate::log(vec!["in".into()]), &cfg).await.unwrap();
    let cmd = Command::new().update(SUpdate::hello("u")).update(SUpdate::log(vec!["up".into()])).goto("b");
    let out = g.invoke_input(Input::command(cmd), &cfg).await.unwrap();
    assert!(out.is_interrupted());
    let out = g.invoke(SUpdate::log(vec!["new".into()]), &cfg).await.unwrap();
    assert_eq!(out.log, ["in", "a", "up", "new", "a"]);
    assert_eq!(out.hello, "u");
    let history = g.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    use CheckpointSource::{Input as In, Loop};
    assert_eq!(sources(&history), [(Loop, 4), (Loop, 3), (In, 2), (Loop, 1), (Loop, 0), (In, -1)]);
    assert_eq!(history[2].values.log, ["in", "a", "up"]);
    assert_eq!(history[2].next, ["__start__"]);
}

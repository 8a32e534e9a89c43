"""The Python half of tests/tests/parity: paused threads handed between Python LangGraph and Rust.

Usage: parity.py URL THREAD CASE OP_JSON, or parity.py --serve to read one request a line from
stdin ({"url", "thread", "case", "op"}) and answer each with one line ({"view": ...} or
{"error": traceback}), so that one process serves many operations: starting Python and importing
LangGraph cost more than most operations.

Builds the graph of CASE on LangGraph's own saver at URL (PyMySQLSaver, PostgresSaver for a
postgres:// URL, or SqliteSaver for `sqlite:PATH`), performs OP_JSON
on THREAD (an operation, or null to only read), then prints one JSON object: the thread's state
and history as `view` describes them. The Rust test builds the same graphs node for node
(tests/tests/parity/cases.rs) and prints the same view, so the two can be compared field by field
after each operation, whichever side performed it.

Operations:
  {"op": "invoke", "input": {...}}           a new input
  {"op": "continue"}                          invoke(None): past a breakpoint or a failure
  {"op": "resume", "value": V}                Command(resume=V)
  {"op": "resume_by_node", "answers": {N: V}} Command(resume={id: V}) for the pending interrupt of
                                              each task named N
  {"op": "update", "values": {...}, "as_node": N}
  {"op": "fork", "before": N}                 invoke(None) from the newest checkpoint whose next
                                              node is N (time travel)
  {"op": "command", "update": {...}, "goto": [N or {"node": N, "arg": {...}}], "resume": V}
                                              Command(update=..., goto=..., resume=...) as input,
                                              each part optional; an object in goto is a Send
Any operation may carry "fail": true, which makes the `worker` node of the `push_failure` case
fail on item 2 (the environment's PARITY_FAIL does the same).
"""

import json
import operator
import os
import sys
import time
import traceback
from typing import Annotated, Optional

from typing_extensions import TypedDict

from langgraph.checkpoint.mysql.pymysql import PyMySQLSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send, interrupt


class State(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    answer: Optional[str]
    item: Optional[str]


def builder() -> StateGraph:
    return StateGraph(State)


def step(name):
    """A node that only records that it ran."""
    def node(state: State) -> dict:
        return {"log": [name]}
    return node


def ask(state: State) -> dict:
    answer = interrupt({"question": "name?"})
    # Keys in the order of the state's fields: Rust writes a node's updates in field order.
    return {"log": [f"ask:{answer}"], "answer": answer}


def ask_twice(state: State) -> dict:
    first = interrupt("first?")
    second = interrupt("second?")
    return {"log": [f"{first}+{second}"]}


def asker(name):
    def node(state: State) -> dict:
        answer = interrupt(f"{name}?")
        return {"log": [f"{name}:{answer}"]}
    return node


def fan(state: State) -> Command:
    return Command(goto=[Send("worker", {"item": i}) for i in ("1", "2", "3")])


def worker(state: State) -> dict:
    if state["item"] == "2" and os.environ.get("PARITY_FAIL"):
        # Fails after its siblings have finished, so their writes are the step's pending writes.
        time.sleep(0.3)
        raise ValueError("boom")
    return {"log": [f"w{state['item']}"]}


def graph(case: str, saver):
    g = builder()
    breakpoints = {}
    if case == "interrupt_node":
        g.add_node("ask", ask)
        g.add_edge(START, "ask")
        g.add_edge("ask", END)
    elif case == "double_interrupt":
        g.add_node("ask_twice", ask_twice)
        g.add_edge(START, "ask_twice")
        g.add_edge("ask_twice", END)
    elif case == "interrupts_by_id":
        g.add_node("a", asker("a"))
        g.add_node("b", asker("b"))
        g.add_edge(START, "a")
        g.add_edge(START, "b")
        g.add_edge("a", END)
        g.add_edge("b", END)
    elif case == "subgraph_interrupt":
        child = builder()
        child.add_node("ask", ask)
        child.add_edge(START, "ask")
        child.add_edge("ask", END)
        g.add_node("child", child.compile())
        g.add_node("after", step("after"))
        g.add_edge(START, "child")
        g.add_edge("child", "after")
        g.add_edge("after", END)
    elif case in ("breakpoints", "update_state", "fork"):
        for name in ("a", "b", "c"):
            g.add_node(name, step(name))
        g.add_edge(START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", "c")
        g.add_edge("c", END)
        if case == "breakpoints":
            breakpoints = {"interrupt_before": ["b"], "interrupt_after": ["c"]}
        elif case == "update_state":
            breakpoints = {"interrupt_before": ["b"]}
    elif case == "join_breakpoint":
        for name in ("a", "b", "c"):
            g.add_node(name, step(name))
        g.add_edge(START, "a")
        g.add_edge(START, "b")
        g.add_edge(["a", "b"], "c")
        g.add_edge("c", END)
        breakpoints = {"interrupt_before": ["c"]}
    elif case in ("command", "command_resume"):
        g.add_node("a", step("a"))
        g.add_node("ask", ask)
        g.add_node("b", step("b"))
        g.add_edge(START, "a")
        g.add_edge("a", "ask")
        g.add_edge("ask", END)
        g.add_edge("b", END)
    elif case == "push_failure":
        g.add_node("fan", fan, destinations=("worker",))
        g.add_node("worker", worker)
        g.add_edge(START, "fan")
    else:
        raise SystemExit(f"unknown case {case}")
    return g.compile(checkpointer=saver, **breakpoints)


def clean(values) -> dict:
    """State values without empty fields (Rust has every field; Python only the written ones)."""
    return {k: v for k, v in values.items() if v not in (None, [])}


def config_id(config) -> Optional[str]:
    return config["configurable"]["checkpoint_id"] if config else None


def interrupts(items) -> list:
    return sorted(({"value": i.value, "id": i.id} for i in items), key=lambda i: i["id"])


def snapshot(s) -> dict:
    return {
        "values": clean(s.values),
        "next": sorted(s.next),
        "checkpoint_id": config_id(s.config),
        "parent_id": config_id(s.parent_config),
        "metadata": s.metadata,
        "tasks": sorted(
            (
                {
                    "id": t.id,
                    "name": t.name,
                    "error": t.error is not None,
                    "interrupts": interrupts(t.interrupts),
                }
                for t in s.tasks
            ),
            key=lambda t: t["id"],
        ),
        "interrupts": interrupts(s.interrupts),
    }


def view(g, config) -> dict:
    return {
        "state": snapshot(g.get_state(config)),
        "history": [snapshot(s) for s in g.get_state_history(config)],
    }


def perform(g, config, op: dict) -> None:
    kind = op["op"]
    if kind == "invoke":
        g.invoke(op["input"], config)
    elif kind == "continue":
        g.invoke(None, config)
    elif kind == "resume":
        g.invoke(Command(resume=op["value"]), config)
    elif kind == "resume_by_node":
        state = g.get_state(config)
        answers = {}
        for task in state.tasks:
            if task.name in op["answers"]:
                for i in task.interrupts:
                    answers[i.id] = op["answers"][task.name]
        g.invoke(Command(resume=answers), config)
    elif kind == "update":
        g.update_state(config, op["values"], as_node=op["as_node"])
    elif kind == "fork":
        target = next(s for s in g.get_state_history(config) if list(s.next) == [op["before"]])
        g.invoke(None, target.config)
    elif kind == "command":
        goto = [to if isinstance(to, str) else Send(to["node"], to["arg"]) for to in op.get("goto", [])]
        g.invoke(Command(update=op.get("update"), goto=goto, resume=op.get("resume")), config)
    else:
        raise SystemExit(f"unknown op {kind}")


def open_saver(url: str):
    """LangGraph's saver for URL: its PostgresSaver for a postgres:// URL, its SqliteSaver for
    `sqlite:PATH`, else PyMySQLSaver."""
    if url.startswith("sqlite:"):
        return SqliteSaver.from_conn_string(url[len("sqlite:") :])
    if url.startswith(("postgres://", "postgresql://")):
        from langgraph.checkpoint.postgres import PostgresSaver

        return PostgresSaver.from_conn_string(url)
    return PyMySQLSaver.from_conn_string(url)


def run(url: str, thread: str, case: str, op) -> dict:
    """Performs OP on THREAD of CASE at URL (or only reads, for a null OP); the thread's view."""
    os.environ.pop("PARITY_FAIL", None)
    if op and op.get("fail"):
        os.environ["PARITY_FAIL"] = "1"
    config = {"configurable": {"thread_id": thread}}
    with open_saver(url) as saver:
        g = graph(case, saver)
        if op:
            try:
                perform(g, config, op)
            except ValueError as e:
                # The push_failure worker's failure is the point of its step.
                if str(e) != "boom":
                    raise
        return view(g, config)


def serve() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        try:
            answer = {"view": run(request["url"], request["thread"], request["case"], request["op"])}
        # SystemExit too: an unknown case or op ends a one-shot run, but only fails this request.
        except (Exception, SystemExit):
            answer = {"error": traceback.format_exc()}
        print(json.dumps(answer, ensure_ascii=False, sort_keys=True), flush=True)


def main() -> None:
    if sys.argv[1:] == ["--serve"]:
        serve()
        return
    url, thread, case, op = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    print(json.dumps(run(url, thread, case, op), ensure_ascii=False, sort_keys=True))


if __name__ == "__main__":
    main()

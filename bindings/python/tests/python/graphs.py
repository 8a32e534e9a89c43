"""Python LangGraph graphs on the mnemograph savers, against LangGraph's own InMemorySaver.

Usage: python graphs.py MYSQL_SERVER REDIS_URL   (MYSQL_SERVER without a database; the
script empties graph_py_graphs on it)

One graph — a step that fans out to two nodes, an `interrupt()` answered with `Command(resume=)`,
a reducer channel of LangChain messages, `update_state` and time travel from an older
checkpoint — runs on LangGraph's `InMemorySaver` (the reference) and on each mnemograph saver,
with `invoke` and with `ainvoke`. Every run must give the reference's outputs, state, `next`,
interrupts and history (sources, steps, writes); exits 1 on the first difference.
"""

from __future__ import annotations

import asyncio
import operator
import shutil
import sys
import tempfile
import uuid
from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver as ReferenceSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt

from mnemograph_checkpoint import InMemorySaver, MySQLSaver, RedisSaver, SQLiteSaver
from support import fresh_database


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    log: Annotated[list[str], operator.add]
    approved: bool
    data: bytes


def plan(state: State) -> dict:
    return {"log": ["plan"], "messages": [AIMessage(content=f"plan for {len(state['messages'])}", id="m-plan")]}


def left(state: State) -> dict:
    return {"log": ["left"], "data": b"\x00\x01binary"}


def right(state: State) -> dict:
    return {"log": ["right"]}


def review(state: State) -> dict:
    answer = interrupt({"question": "approve?", "log": state["log"]})
    return {"approved": answer == "yes", "log": [f"review:{answer}"]}


def finish(state: State) -> dict:
    return {"messages": [AIMessage(content=f"done approved={state['approved']}", id="m-done")]}


def build():
    g = StateGraph(State)
    for name, fn in [("plan", plan), ("left", left), ("right", right), ("review", review), ("finish", finish)]:
        g.add_node(name, fn)
    g.add_edge(START, "plan")
    g.add_edge("plan", "left")
    g.add_edge("plan", "right")
    g.add_edge(["left", "right"], "review")
    g.add_edge("review", "finish")
    g.add_edge("finish", END)
    return g


def snapshot(s) -> dict:
    return {
        "values": {k: (v if k != "messages" else [(m.type, m.content, m.id) for m in v]) for k, v in s.values.items()},
        "next": list(s.next),
        "source": s.metadata.get("source") if s.metadata else None,
        "step": s.metadata.get("step") if s.metadata else None,
        "interrupts": [i.value for i in s.interrupts],
        "tasks": [(t.name, [i.value for i in t.interrupts]) for t in s.tasks],
    }


def scenario_sync(saver) -> list:
    graph = build().compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex}"}}
    out = [graph.invoke({"messages": [HumanMessage(content="hello", id="m-1")]}, cfg)]
    out.append(snapshot(graph.get_state(cfg)))
    out.append(graph.invoke(Command(resume="yes"), cfg))
    history = list(graph.get_state_history(cfg))
    out.append([snapshot(s) for s in history])
    graph.update_state(cfg, {"log": ["edited"]})
    out.append(snapshot(graph.get_state(cfg)))
    # Time travel: replay from the checkpoint before `review` ran and answer differently.
    before_review = next(s for s in history if s.next == ("review",))
    out.append(graph.invoke(Command(resume="no"), before_review.config))
    out.append(snapshot(graph.get_state(cfg)))
    out.append(len(list(graph.get_state_history(cfg))))
    return normalise(out)


async def scenario_async(saver) -> list:
    graph = build().compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex}"}}
    out = [await graph.ainvoke({"messages": [HumanMessage(content="hello", id="m-1")]}, cfg)]
    out.append(snapshot(await graph.aget_state(cfg)))
    out.append(await graph.ainvoke(Command(resume="yes"), cfg))
    history = [s async for s in graph.aget_state_history(cfg)]
    out.append([snapshot(s) for s in history])
    await graph.aupdate_state(cfg, {"log": ["edited"]})
    out.append(snapshot(await graph.aget_state(cfg)))
    before_review = next(s for s in history if s.next == ("review",))
    out.append(await graph.ainvoke(Command(resume="no"), before_review.config))
    out.append(snapshot(await graph.aget_state(cfg)))
    out.append(len([s async for s in graph.aget_state_history(cfg)]))
    return normalise(out)


def normalise(value):
    """Messages as (type, content, id); interrupts by value (their ids differ per run)."""
    if isinstance(value, dict):
        if "__interrupt__" in value:
            value = {**value, "__interrupt__": [i.value for i in value["__interrupt__"]]}
        return {k: normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if hasattr(value, "type") and hasattr(value, "content"):
        return (value.type, value.content, value.id)
    return value


async def main() -> int:
    server, redis_url = sys.argv[1], sys.argv[2]
    mysql_url, conn = fresh_database(server, "graph_py_graphs")
    conn.close()
    reference_sync = scenario_sync(ReferenceSaver())
    reference_async = await scenario_async(ReferenceSaver())
    assert reference_sync == reference_async, "the reference differs between invoke and ainvoke"
    mysql = MySQLSaver.connect(mysql_url)
    mysql.setup()
    prefix = f"graphs-{uuid.uuid4().hex}"
    directory = tempfile.mkdtemp(prefix="graphs-")
    savers = {
        "InMemorySaver": (InMemorySaver(), InMemorySaver()),
        "MySQLSaver": (mysql, await MySQLSaver.aconnect(mysql_url)),
        "RedisSaver": (RedisSaver.connect(redis_url, ttl=600, key_prefix=prefix), await RedisSaver.aconnect(redis_url, ttl=600, key_prefix=prefix)),
        "SQLiteSaver": (SQLiteSaver.connect(f"{directory}/sync.sqlite"), await SQLiteSaver.aconnect(f"{directory}/async.sqlite")),
    }
    failed = 0
    for name, (sync_saver, async_saver) in savers.items():
        for mode, result in [("invoke", scenario_sync(sync_saver)), ("ainvoke", await scenario_async(async_saver))]:
            if result == reference_sync:
                print(f"ok    {name} {mode}: {len(result[3])} checkpoints in history, as LangGraph's InMemorySaver")
            else:
                failed += 1
                print(f"FAIL  {name} {mode}")
                for i, (a, b) in enumerate(zip(result, reference_sync)):
                    if a != b:
                        print(f"  item {i}:\n    got      {a}\n    expected {b}")
    shutil.rmtree(directory)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

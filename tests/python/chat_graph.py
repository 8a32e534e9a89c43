"""The Python half of tests/python_continuation.rs: one tool-calling chat graph, in Python LangGraph.

Usage: chat_graph.py [--saver KIND] URL THREAD [MESSAGE ...]
Continues THREAD in a MySQL saver with one turn per MESSAGE, then prints one JSON object: the
thread's messages as LangChain objects see them, the graph's `next` and the (source, step)
history. With no MESSAGE it only reads. KIND is `pymysql` (LangGraph's own PyMySQLSaver, the
default), `mnemograph` (the Rust saver through the `mnemograph_checkpoint` bindings, sync
`invoke`) or `mnemograph-async` (the same saver, `ainvoke`).

The Rust test builds the same graph (`agent` -> tools_condition -> `tools` -> `agent`) with the
same deterministic model, so either side can run any turn of a thread the other started.
"""

import asyncio
import json
import sys

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.mysql.pymysql import PyMySQLSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


@tool
def weather(city: str) -> str:
    """Current weather of a city."""
    return f"{city}：晴，25°C"


def agent(state: MessagesState) -> dict:
    """A deterministic stand-in for a chat model.

    Its answers count the messages it was given, so the test can tell whether the whole history
    written by the other implementation was read.
    """
    messages = state["messages"]
    last, n = messages[-1], len(messages)
    if isinstance(last, HumanMessage) and "天气" in last.content:
        city = "上海" if "上海" in last.content else "北京"
        call = {"name": "weather", "args": {"city": city}, "id": f"call_{n}", "type": "tool_call"}
        return {"messages": [AIMessage(content="", tool_calls=[call])]}
    if isinstance(last, ToolMessage):
        return {"messages": [AIMessage(content=f"{last.content}（共{n}条消息）")]}
    return {"messages": [AIMessage(content=f"收到「{last.content}」（共{n}条消息）")]}


def describe(message) -> dict:
    return {
        "type": message.type,
        "content": message.content,
        "id": message.id,
        "tool_calls": [[c["name"], c["args"], c["id"]] for c in getattr(message, "tool_calls", [])],
        "tool_call_id": getattr(message, "tool_call_id", None),
    }


def build() -> StateGraph:
    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([weather]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder


def report(state, history) -> None:
    print(json.dumps({
        "messages": [describe(m) for m in state.values.get("messages", [])],
        "next": list(state.next),
        "history": [[s.metadata["source"], s.metadata["step"]] for s in history],
    }, ensure_ascii=False))


def run_sync(saver, thread: str, turns: list[str]) -> None:
    graph = build().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": thread}}
    for text in turns:
        graph.invoke({"messages": [HumanMessage(content=text)]}, config)
    report(graph.get_state(config), list(graph.get_state_history(config)))


async def run_async(url: str, thread: str, turns: list[str]) -> None:
    from mnemograph_checkpoint import MySQLSaver

    graph = build().compile(checkpointer=await MySQLSaver.aconnect(url))
    config = {"configurable": {"thread_id": thread}}
    for text in turns:
        await graph.ainvoke({"messages": [HumanMessage(content=text)]}, config)
    history = [s async for s in graph.aget_state_history(config)]
    report(await graph.aget_state(config), history)


def main() -> None:
    args = sys.argv[1:]
    kind = "pymysql"
    if args[:1] == ["--saver"]:
        kind, args = args[1], args[2:]
    url, thread, turns = args[0], args[1], args[2:]
    if kind == "pymysql":
        with PyMySQLSaver.from_conn_string(url) as saver:
            run_sync(saver, thread, turns)
    elif kind == "mnemograph":
        from mnemograph_checkpoint import MySQLSaver

        run_sync(MySQLSaver.connect(url), thread, turns)
    elif kind == "mnemograph-async":
        asyncio.run(run_async(url, thread, turns))
    else:
        sys.exit(f"unknown saver {kind!r}")


if __name__ == "__main__":
    main()

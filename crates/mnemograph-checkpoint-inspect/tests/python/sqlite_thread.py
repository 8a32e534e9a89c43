"""Writes a thread with LangGraph's own SqliteSaver, for tests/sqlite.rs to read with the binary.

Usage: sqlite_thread.py PATH THREAD. Runs START -> ask -> END, where `ask` interrupts with a
question, so the thread stops with the interrupt as a pending write. Prints one JSON object.
Needs `pip install langgraph-checkpoint-sqlite langgraph`.
"""

import json
import operator
import sys
from typing import Annotated, TypedDict

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt


class State(TypedDict):
    messages: Annotated[list, add_messages]
    log: Annotated[list[str], operator.add]


def ask(state: State) -> dict:
    answer = interrupt({"question": "保存吗？"})
    return {"log": [f"answer:{answer}"]}


def main() -> None:
    path, thread = sys.argv[1], sys.argv[2]
    with SqliteSaver.from_conn_string(path) as saver:
        graph = StateGraph(State)
        graph.add_node("ask", ask)
        graph.add_edge(START, "ask")
        config = {"configurable": {"thread_id": thread}}
        graph.compile(checkpointer=saver).invoke(
            {"messages": [HumanMessage("你好，Python", id="h1")], "log": ["py-input"]}, config
        )
        print(json.dumps({"ran": thread}))


if __name__ == "__main__":
    main()

"""The Python side of tests/python_interop.rs: LangGraph's own SqliteSaver on the same file.

Usage: interop.py PATH setup | columns | run THREAD | read THREAD. Prints one JSON object.
Needs `pip install langgraph-checkpoint-sqlite langgraph`.
"""

import json
import operator
import sys
from typing import Annotated, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt


class State(TypedDict):
    log: Annotated[list[str], operator.add]
    count: int


def node(state: State) -> dict:
    answer = interrupt("name?")
    return {"log": [f"py-node:{answer}"], "count": state.get("count", 0) + 1}


def columns(saver: SqliteSaver) -> dict:
    out = {}
    for table in ("checkpoints", "writes"):
        rows = saver.conn.execute(f"PRAGMA table_info({table})").fetchall()
        out[table] = [list(row) for row in rows]
    return out


def main() -> None:
    path, action = sys.argv[1], sys.argv[2]
    thread = sys.argv[3] if len(sys.argv) > 3 else None
    with SqliteSaver.from_conn_string(path) as saver:
        if action == "setup":
            saver.setup()
            print(json.dumps(columns(saver)))
        elif action == "columns":
            print(json.dumps(columns(saver)))
        elif action == "run":
            graph = StateGraph(State)
            graph.add_node("node", node)
            graph.add_edge(START, "node")
            config = {"configurable": {"thread_id": thread}}
            graph.compile(checkpointer=saver).invoke({"log": ["py-input"], "count": 0}, config)
            print(json.dumps({"ran": thread}))
        elif action == "read":
            config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
            latest = saver.get_tuple(config)
            history = [(t.metadata["source"], t.metadata["step"]) for t in saver.list(config)]
            matches = list(saver.list(None, filter={"user": "张三"}))
            print(json.dumps({
                "values": latest.checkpoint["channel_values"],
                "versions": latest.checkpoint["channel_versions"],
                "metadata": latest.metadata,
                "writes": [[t, c, v] for t, c, v in latest.pending_writes],
                "history": history,
                "filtered": [t.config["configurable"]["thread_id"] for t in matches],
            }, ensure_ascii=False))


if __name__ == "__main__":
    main()

"""The Python side of tests/python_interop.rs: LangGraph's own MySQL saver on the same database.

Usage: interop.py [--shallow] URL setup | run THREAD | read THREAD. Prints one JSON object.
With --shallow, LangGraph's ShallowPyMySQLSaver instead of PyMySQLSaver.
Needs `pip install "langgraph-checkpoint-mysql[pymysql]" langgraph`.
"""

import json
import operator
import sys
from typing import Annotated, TypedDict

from langgraph.checkpoint.mysql.pymysql import PyMySQLSaver, ShallowPyMySQLSaver
from langgraph.graph import START, StateGraph


class State(TypedDict):
    log: Annotated[list[str], operator.add]
    count: int


def node(state: State) -> dict:
    return {"log": ["py-node"], "count": state.get("count", 0) + 1}


def main() -> None:
    args = sys.argv[1:]
    saver_class = PyMySQLSaver
    if args[0] == "--shallow":
        saver_class = ShallowPyMySQLSaver
        args = args[1:]
    url, action = args[0], args[1]
    thread = args[2] if len(args) > 2 else None
    with saver_class.from_conn_string(url) as saver:
        if action == "setup":
            saver.setup()
            with saver._cursor() as cur:
                cur.execute("SELECT v FROM checkpoint_migrations ORDER BY v")
                print(json.dumps({"versions": [row["v"] for row in cur.fetchall()]}))
        elif action == "run":
            graph = StateGraph(State)
            graph.add_node("node", node)
            graph.add_edge(START, "node")
            config = {"configurable": {"thread_id": thread}}
            out = graph.compile(checkpointer=saver).invoke({"log": ["py-input"], "count": 0}, config)
            print(json.dumps({"out": out}))
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
                "parent": latest.parent_config["configurable"]["checkpoint_id"] if latest.parent_config else None,
                "history": history,
                "filtered": [t.config["configurable"]["thread_id"] for t in matches],
            }, ensure_ascii=False))


if __name__ == "__main__":
    main()

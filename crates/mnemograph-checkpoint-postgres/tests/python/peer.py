"""The Python side of this crate's tests: LangGraph's own PostgresSaver on the same database.

Usage: peer.py URL setup | put THREAD | read THREAD. Prints one JSON object.
"""

import json
import sys

from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver


def main() -> None:
    url, command = sys.argv[1], sys.argv[2]
    with PostgresSaver.from_conn_string(url) as saver:
        if command == "setup":
            saver.setup()
            print(json.dumps({"ok": True}))
        elif command == "put":
            thread = sys.argv[3]
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = {"log": ["from python"], "count": 1}
            checkpoint["channel_versions"] = {"log": saver.get_next_version(None, None), "count": saver.get_next_version(None, None)}
            config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
            saved = saver.put(config, checkpoint, {"source": "loop", "step": 0, "parents": {}}, checkpoint["channel_versions"])
            saver.put_writes(saved, [("log", ["pending"])], "task-1")
            print(json.dumps({"checkpoint_id": saved["configurable"]["checkpoint_id"]}))
        elif command == "read":
            found = saver.get_tuple({"configurable": {"thread_id": sys.argv[3], "checkpoint_ns": ""}})
            if found is None:
                print(json.dumps(None))
                return
            print(json.dumps({
                "checkpoint_id": found.config["configurable"]["checkpoint_id"],
                "values": found.checkpoint["channel_values"],
                "step": found.metadata.get("step"),
                "writes": [[t, c, v] for t, c, v in found.pending_writes],
            }))
        else:
            raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main()

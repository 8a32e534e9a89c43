"""LangGraph's Python SqliteStore on the file the Rust test names: `put` writes items (with
vectors), `read` reads what Rust wrote, `vectors` checks Rust's vector bytes.

usage: store_interop.py PATH put|read|vectors
Prints one JSON line.
"""

import json
import sqlite3
import sys

import sqlite_vec
from langgraph.store.sqlite import SqliteStore


def embed(texts):
    """The test's model, shared with the Rust side: how often each of a..h occurs."""
    return [[float(t.lower().count(c)) for c in "abcdefgh"] for t in texts]


def main():
    path, command = sys.argv[1], sys.argv[2]
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    if command == "put":
        # The SQLite store reads the embedded fields from `text_fields` (other stores: `fields`).
        store = SqliteStore(conn, index={"dims": 8, "embed": embed, "fields": ["text"], "text_fields": ["text"]})
        # `setup` with an index loads the sqlite-vec extension, which this interpreter's sqlite3
        # cannot load; the Rust side made the tables, and writing needs no extension.
        store.is_setup = True
        store.put(("users", "u1", "prefs"), "coffee", {"text": "dark roast coffee beans", "kind": "pref", "n": 1})
        store.put(("users", "u1", "prefs"), "tea", {"text": "green tea", "kind": "pref", "n": 2})
        store.put(("users", "u2"), "pet", {"text": "a cat named Miso", "kind": "fact", "nested": {"x": [1, 2]}, "名字": "米索"})
        store.put(("users", "u1", "prefs"), "soon", {"text": "expires in an hour", "kind": "pref"}, ttl=60)
        print(json.dumps({"ok": True}))
    elif command == "read":
        store = SqliteStore(conn)
        store.setup()
        item = store.get(("docs", "rust"), "guide")
        found = store.search(("docs",), filter={"lang": "rust"}, limit=10)
        print(json.dumps({
            "value": item.value if item else None,
            "created_at": item.created_at.isoformat() if item else None,
            "filtered": sorted(i.key for i in found),
            "namespaces": [list(n) for n in store.list_namespaces()],
            "newest_first": [i.key for i in store.search(("docs", "rust"), limit=10)],
        }, ensure_ascii=False))
    elif command == "vectors":
        rows = conn.execute(
            "SELECT v.embedding, CAST(s.value AS TEXT), v.field_name FROM store_vectors v "
            "JOIN store s ON s.prefix = v.prefix AND s.key = v.key"
        ).fetchall()
        same = sum(
            1
            for blob, value, field in rows
            if blob == sqlite_vec.serialize_float32(embed([json.loads(value)[field]])[0])
        )
        print(json.dumps({"total": len(rows), "same": same}))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main()

"""LangGraph's Python PostgresStore on the database the Rust test names: `put` sets the store up
and writes items (expiring ones included), `read` reads what Rust wrote.

`vectors` reads and deletes items an indexed Rust store wrote, then sets up a store with an index.
`rank TABLE` (pgvector only) writes items under ("py",) through an index whose vectors are TABLE's
(a JSON file: texts to vectors, made by the Rust test), and ranks both its own items and those an
indexed Rust store wrote under ("rs",) for each query of TABLE.

`setup_index DIMS` (pgvector only) sets up an empty database with an index of DIMS dimensions.

usage: store_peer.py URL put|read|vectors|rank TABLE|setup_index DIMS
Prints one JSON object.
"""

import json
import sys
import time

from langgraph.store.postgres import PostgresStore

# Labels and a key with LIKE, regex and SQL metacharacters, shared with the Rust side.
ODD_NAMESPACE = ("odd%_\\", "it's")
ODD_KEY = "k'; DROP TABLE store; --"


def put(url: str) -> dict:
    with PostgresStore.from_conn_string(url) as store:
        store.setup()
        store.put(("users", "u1", "prefs"), "coffee", {"text": "dark roast coffee beans", "kind": "pref", "n": 1})
        store.put(("users", "u1", "prefs"), "tea", {"text": "green tea", "kind": "pref", "n": 2})
        store.put(("users", "u2"), "pet", {"text": "a cat named Miso", "kind": "fact", "nested": {"x": [1, 2]}, "名字": "米索"})
        store.put(("users", "u1", "prefs"), "soon", {"text": "expires in an hour", "kind": "pref"}, ttl=60)
        # A TTL of 60 ms: expired by the time Rust reads, still in the table until a sweep.
        store.put(("users", "gone"), "flash", {"text": "gone in a blink"}, ttl=0.001)
        store.put(ODD_NAMESPACE, ODD_KEY, {"odd": True})
        time.sleep(0.2)
    return {"ok": True}


def read(url: str) -> dict:
    ttl = {"refresh_on_read": True, "omit_expired": True}
    with PostgresStore.from_conn_string(url, ttl=ttl) as store:
        # Rust created and migrated the table: Python's setup finds nothing to do.
        store.setup()
        item = store.get(("docs", "rust"), "guide")
        found = store.search(("docs",), filter={"lang": "rust"}, limit=10)
        odd = store.get(ODD_NAMESPACE, ODD_KEY)
        # Reading the expiring item refreshes it by its `ttl_minutes`, as Rust's reads do.
        notes = store.get(("docs", "rust"), "notes")
        with store._cursor() as cur:
            cur.execute(
                "SELECT ttl_minutes, EXTRACT(EPOCH FROM expires_at - now())::float8 AS left "
                "FROM store WHERE prefix = 'docs.rust' AND key = 'notes'"
            )
            row = cur.fetchone()
            cur.execute("SELECT v FROM store_migrations ORDER BY v")
            migrations = [r["v"] for r in cur.fetchall()]
        return {
            "value": item.value if item else None,
            "created_at": item.created_at.isoformat() if item else None,
            "same_stamps": item is not None and item.created_at == item.updated_at,
            "filtered": sorted(i.key for i in found),
            "namespaces": [list(n) for n in store.list_namespaces()],
            "newest_first": [i.key for i in store.search(("docs", "rust"), limit=10)],
            "odd": odd.value if odd else None,
            "notes": notes.value if notes else None,
            "notes_ttl_minutes": row["ttl_minutes"],
            "notes_seconds_left": row["left"],
            "expired_visible": store.get(("docs", "old"), "expired") is not None,
            "swept": store.sweep_ttl(),
            "migrations": migrations,
        }


def vectors(url: str) -> dict:
    with PostgresStore.from_conn_string(url) as store:
        store.setup()
        kept = store.get(("vec",), "kept")
        store.delete(("vec",), "gone")
    index = {"dims": 64, "embed": lambda texts: [[1.0] * 64 for _ in texts], "fields": ["text"]}
    try:
        with PostgresStore.from_conn_string(url, index=index) as store:
            store.setup()
        index_setup_error = None
    except Exception as e:  # the error is the result: pgvector missing, or none
        index_setup_error = f"{type(e).__name__}: {e}"
    return {"kept": kept.value if kept else None, "index_setup_error": index_setup_error}


def rank(url: str, table_path: str) -> dict:
    with open(table_path, encoding="utf-8") as f:
        table = json.load(f)
    vectors_of = table["vectors"]
    index = {"dims": table["dims"], "embed": lambda texts: [vectors_of[t] for t in texts], "fields": ["text"]}
    with PostgresStore.from_conn_string(url, index=index) as store:
        # Rust created the vector table and recorded its migrations: nothing is left to do.
        store.setup()
        with store._cursor() as cur:
            cur.execute("SELECT v FROM vector_migrations ORDER BY v")
            vector_migrations = [r["v"] for r in cur.fetchall()]
        for key, text in table["docs"].items():
            store.put(("py",), key, {"text": text})
        ranked = {}
        for namespace in ("py", "rs"):
            ranked[namespace] = {
                query: [[hit.key, hit.score] for hit in store.search((namespace,), query=query, limit=20)]
                for query in table["queries"]
            }
    return {"vector_migrations": vector_migrations, "ranked": ranked}


def setup_index(url: str, dims: int) -> dict:
    index = {"dims": dims, "embed": lambda texts: [[1.0] * dims for _ in texts], "fields": ["text"]}
    with PostgresStore.from_conn_string(url, index=index) as store:
        store.setup()
    return {"ok": True}


def main() -> None:
    url, command = sys.argv[1], sys.argv[2]
    if command == "put":
        out = put(url)
    elif command == "read":
        out = read(url)
    elif command == "vectors":
        out = vectors(url)
    elif command == "setup_index":
        out = setup_index(url, int(sys.argv[3]))
    elif command == "rank":
        out = rank(url, sys.argv[3])
    else:
        raise SystemExit(f"unknown command {command}")
    print(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    main()

"""The boundary between Python and the Rust savers: bytes, errors and panics.

Usage: python boundary.py MYSQL_SERVER REDIS_URL   (MYSQL_SERVER without a database)

1. The same checkpoints and writes, put through the bindings' `MySQLSaver` and through
   LangGraph's `PyMySQLSaver` into two fresh databases, leave identical rows in all three tables
   (blobs byte for byte, the JSON documents as JSON), and the bindings read LangGraph's rows back
   to the same tuples.
2. Values of many Python types round-trip exactly through every saver.
3. Bad input raises the package's typed exceptions with the Rust error's message, and an
   unreachable server raises `BackendError`; nothing stored is changed by a refused call.
4. A Rust panic, in a sync call and in an awaitable, raises `RuntimeError`; the interpreter and
   the savers go on working.
Exits 1 on the first failed check.
"""

from __future__ import annotations

import asyncio
import datetime
import decimal
import json
import pickle
import sys
import uuid

import pymysql
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.mysql.pymysql import PyMySQLSaver

from mnemograph_checkpoint import (
    BackendError,
    InMemorySaver,
    InvalidInputError,
    MySQLSaver,
    RedisSaver,
    UnsupportedError,
    _native,
)
from support import fresh_database

CHECKS = 0


def check(condition: bool, what: str) -> None:
    global CHECKS
    CHECKS += 1
    if not condition:
        raise AssertionError(what)


def rows(conn: pymysql.Connection) -> dict:
    out = {}
    queries = {
        "checkpoints": "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints",
        "checkpoint_blobs": "SELECT thread_id, checkpoint_ns, channel, version, type, `blob` FROM checkpoint_blobs",
        "checkpoint_writes": "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, `blob`, task_path FROM checkpoint_writes",
    }
    with conn.cursor() as cur:
        for table, sql in queries.items():
            cur.execute(sql)
            found = cur.fetchall()
            if table == "checkpoints":
                # The JSON documents compare as JSON: Python keeps the order in which the dicts
                # were filled, the bindings write LangGraph's engine order with channels sorted.
                found = [(*r[:5], json.loads(r[5]), json.loads(r[6])) for r in found]
            out[table] = sorted(found, key=repr)
    return out


VALUES = {
    "text": "héllo 你好",
    "count": 42,
    "ratio": 0.25,
    "flag": True,
    "nothing": None,
    "raw": b"\x00\xffbytes",
    "nested": {"a": [1, 2.5, "x", None], "b": {"c": True}},
    "when": datetime.datetime(2026, 12, 4, 18, 30, tzinfo=datetime.timezone.utc),
    "id": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "amount": decimal.Decimal("12.50"),
    "tags": {"a", "b"},
    "pair": ("x", 1),
    "messages": [
        HumanMessage(content="北京天气？", id="h1"),
        AIMessage(content="", id="a1", tool_calls=[{"name": "weather", "args": {"city": "北京"}, "id": "c1", "type": "tool_call"}]),
        ToolMessage(content="晴", tool_call_id="c1", id="t1"),
    ],
}


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return type(a) is type(b) and a == b


def checkpoint(i: int, values: dict) -> dict:
    return {
        "v": 4,
        "id": f"1f0c0000-0000-6000-8000-00000000000{i}",
        "ts": f"2026-12-04T18:00:0{i}.000000+00:00",
        "channel_values": values,
        "channel_versions": {k: f"{i:032}.0.5" for k in values},
        "versions_seen": {"node": {k: f"{i:032}.0.5" for k in values}},
        "updated_channels": sorted(values),
    }


# LangGraph's MySQL saver writes NaN into the checkpoint's JSON document, which MariaDB's JSON
# check refuses, so it cannot store one; the bindings store it as a blob.
ONLY_OURS = {"nan": float("nan"), "inf": float("-inf")}


def put_thread(saver, thread: str, extra: dict | None = None) -> None:
    cfg = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    first = checkpoint(1, {**VALUES, **(extra or {})})
    cfg1 = saver.put(cfg, first, {"source": "input", "step": -1, "parents": {}, "run_id": "r1"}, first["channel_versions"])
    saver.put_writes(cfg1, [("messages", [HumanMessage(content="w", id="w1")]), ("__interrupt__", "stop"), ("count", 7)], "task-1", "~path")
    second = checkpoint(2, {**VALUES, **(extra or {}), "count": 43})
    # Only `count` changes: the other channels keep the versions their values were stored under.
    second["channel_versions"] = {**first["channel_versions"], "count": f"{2:032}.0.5"}
    saver.put(cfg1, second, {"source": "loop", "step": 0, "parents": {}, "run_id": "r1"}, {"count": second["channel_versions"]["count"]})


def same_rows(server: str) -> None:
    ours_url, ours_conn = fresh_database(server, "graph_py_boundary_ours")
    theirs_url, theirs_conn = fresh_database(server, "graph_py_boundary_theirs")
    ours = MySQLSaver.connect(ours_url)
    ours.setup()
    put_thread(ours, "thread-1")
    with PyMySQLSaver.from_conn_string(theirs_url) as theirs:
        theirs.setup()
        put_thread(theirs, "thread-1")
        a, b = rows(ours_conn), rows(theirs_conn)
        for table in a:
            check(len(a[table]) > 0, f"{table}: nothing stored")
            for x, y in zip(a[table], b[table]):
                check(x == y, f"{table}: row differs\n  bindings:     {x}\n  PyMySQLSaver: {y}")
            check(len(a[table]) == len(b[table]), f"{table}: {len(a[table])} rows != {len(b[table])}")
        # Each reads what the other wrote: the bindings read LangGraph's rows and vice versa.
        cross = MySQLSaver.connect(theirs_url)
        t_ours = ours.get_tuple({"configurable": {"thread_id": "thread-1", "checkpoint_ns": ""}})
        t_cross = cross.get_tuple({"configurable": {"thread_id": "thread-1", "checkpoint_ns": ""}})
        t_theirs = theirs.get_tuple({"configurable": {"thread_id": "thread-1", "checkpoint_ns": ""}})
        for t in (t_ours, t_cross):
            check(t.checkpoint["channel_versions"] == t_theirs.checkpoint["channel_versions"], "versions differ")
            for k, v in t_theirs.checkpoint["channel_values"].items():
                check(same(t.checkpoint["channel_values"][k], v), f"value {k} differs: {t.checkpoint['channel_values'][k]!r} != {v!r}")
            check(t.metadata == t_theirs.metadata, f"metadata differs: {t.metadata} != {t_theirs.metadata}")
        first_cfg = {"configurable": {"thread_id": "thread-1", "checkpoint_ns": "", "checkpoint_id": checkpoint(1, {})["id"]}}
        w_ours, w_theirs = ours.get_tuple(first_cfg).pending_writes, theirs.get_tuple(first_cfg).pending_writes
        check([(t, c) for t, c, _ in w_ours] == [(t, c) for t, c, _ in w_theirs], "writes differ")
        check(all(same(x[2], y[2]) for x, y in zip(w_ours, w_theirs)), "write values differ")
    ours_conn.close()
    theirs_conn.close()
    print(f"ok    same rows as PyMySQLSaver in checkpoints, checkpoint_blobs, checkpoint_writes")


def round_trip(saver, name: str) -> None:
    thread = f"rt-{uuid.uuid4().hex}"
    put_thread(saver, thread, ONLY_OURS)
    got = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}}).checkpoint["channel_values"]
    for k, v in {**VALUES, **ONLY_OURS, "count": 43}.items():
        # Exactly what LangGraph's serializer gives back itself (a tuple comes back a list).
        v = saver.serde.loads_typed(saver.serde.dumps_typed(v))
        check(k in got and same(got[k], v), f"{name}: {k} came back as {got.get(k)!r}, not {v!r}")
    saver.delete_thread(thread)
    print(f"ok    {name}: {len(VALUES) + len(ONLY_OURS)} kinds of value round-trip exactly")


async def errors(savers: dict) -> None:
    for name, saver in savers.items():
        thread = f"err-{uuid.uuid4().hex}"
        put_thread(saver, thread)
        before = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
        refused = [
            ("no thread_id", lambda: saver.get_tuple({"configurable": {}}), InvalidInputError, "thread_id"),
            ("prune strategy", lambda: saver.prune([thread], strategy="oldest"), InvalidInputError, "keep_latest"),
            ("writes without a checkpoint", lambda: saver.put_writes({"configurable": {"thread_id": thread, "checkpoint_ns": ""}}, [("a", 1)], "t"), InvalidInputError, "checkpoint"),
            ("metadata without source", lambda: saver.put({"configurable": {"thread_id": thread, "checkpoint_ns": ""}}, checkpoint(3, {}), {"step": 1}, {}), InvalidInputError, "source"),
            ("copy onto a thread with checkpoints", lambda: saver.copy_thread(thread, thread), InvalidInputError, ""),
            ("negative limit", lambda: list(saver.list(None, limit=-1)), InvalidInputError, "limit"),
        ]
        for what, call, cls, needle in refused:
            try:
                call()
            except cls as e:
                check(needle in str(e), f"{name}: {what}: message {str(e)!r} does not say {needle!r}")
                check(isinstance(e, ValueError), f"{name}: {what}: not a ValueError")
            else:
                check(False, f"{name}: {what}: accepted")
        # Async raises the same.
        try:
            await saver.aget_tuple({"configurable": {}})
            check(False, f"{name}: async: accepted a config without thread_id")
        except InvalidInputError:
            pass
        after = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
        check(after.config == before.config and after.checkpoint["id"] == before.checkpoint["id"], f"{name}: a refused call changed the thread")
        check(len(list(saver.list({"configurable": {"thread_id": thread, "checkpoint_ns": ""}}))) == 2, f"{name}: a refused call changed the history")
        saver.delete_thread(thread)
    for url in ["mysql://root@127.0.0.1:1/nowhere"]:
        try:
            MySQLSaver.connect(url)
            check(False, "connecting to a closed port succeeded")
        except BackendError as e:
            check(len(str(e)) > 0, "BackendError without a message")
    check(issubclass(UnsupportedError, NotImplementedError), "UnsupportedError is a NotImplementedError")
    print("ok    bad input raises typed exceptions with Rust's message and changes nothing")


class PickleSerde:
    """A serializer of its own type, as `pickle_fallback` or an encrypting serializer writes."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def dumps_typed(self, obj):
        return (self.kind, pickle.dumps(obj))

    def loads_typed(self, data):
        check(data[0] == self.kind, f"type {data[0]!r} came back, not {self.kind!r}")
        return pickle.loads(data[1])


def own_serializers(mysql_url: str, redis_url: str) -> None:
    for kind in ("pickle", "msgpack+aes"):
        serde = PickleSerde(kind)
        savers = {
            "InMemorySaver": InMemorySaver(serde=serde),
            "MySQLSaver": MySQLSaver.connect(mysql_url, serde=serde),
            "RedisSaver": RedisSaver.connect(redis_url, ttl=600, key_prefix=f"serde-{uuid.uuid4().hex}", serde=serde),
        }
        for name, saver in savers.items():
            thread = f"serde-{uuid.uuid4().hex}"
            put_thread(saver, thread)
            tup = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
            for k, v in {**VALUES, "count": 43}.items():
                # Inline primitives are the SQL document's; everything else went through `serde`.
                check(same(tup.checkpoint["channel_values"][k], v), f"{name} {kind}: {k} differs")
            saver.delete_thread(thread)
    print("ok    values of a serializer's own type (pickle, msgpack+aes) round-trip on every saver")


async def panics(saver) -> None:
    for blocking in (True, False):
        try:
            result = _native._panic_for_tests(blocking=blocking)
            if not blocking:
                await result
            check(False, "a panic returned normally")
        except RuntimeError as e:
            check("deliberate panic" in str(e), f"panic message lost: {e}")
    # Still alive, and the saver still works.
    thread = f"after-panic-{uuid.uuid4().hex}"
    put_thread(saver, thread)
    check(saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}}) is not None, "saver broken after a panic")
    print("ok    a Rust panic raises RuntimeError (sync and async); the process and saver go on")


async def main() -> int:
    server, redis_url = sys.argv[1], sys.argv[2]
    same_rows(server)
    url, conn = fresh_database(server, "graph_py_boundary_rt")
    conn.close()
    mysql = MySQLSaver.connect(url)
    mysql.setup()
    savers = {
        "InMemorySaver": InMemorySaver(),
        "MySQLSaver": mysql,
        "RedisSaver": RedisSaver.connect(redis_url, ttl=600, key_prefix=f"boundary-{uuid.uuid4().hex}"),
    }
    for name, saver in savers.items():
        round_trip(saver, name)
    await errors(savers)
    own_serializers(url, redis_url)
    await panics(mysql)
    print(f"{CHECKS} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

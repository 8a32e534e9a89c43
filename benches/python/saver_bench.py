"""Python LangGraph chat turns, every checkpoint durable, on one saver: Python's or ours.

Usage: saver_bench.py SAVER N [--mode sync|async] [--workload chat|ops]
  SAVER: pymysql (LangGraph's PyMySQLSaver; AIOMySQLSaver with --mode async),
         mnemograph-mysql, plainredis (langgraph-checkpoint-plainredis; its AsyncRedisSaver
         with --mode async), mnemograph-redis, memory (LangGraph's InMemorySaver),
         mnemograph-memory.
MySQL at MYSQL_URL's server (database graph_bench_bindings_<saver>, emptied first), Redis at
REDIS_URL (keys under a fresh prefix, deleted afterwards).

The graph is `lg_bench.py chat`'s: START -> agent -> END, one human and one AI message a turn,
`durability="sync"`, so every checkpoint is stored before the turn returns. One thread, N
turns after 5 untimed ones; prints one JSON line with the median and mean microseconds a turn.

`--workload ops` times the saver alone, without the engine: N rounds of `put` (a checkpoint with
a 20-message list and an int, both new versions), `put_writes` (one message) and `get_tuple` (the
latest), as LangGraph calls them; one JSON line with the median microseconds of each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
import uuid
from urllib.parse import urlparse

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

# The chat graph and its input are lg_bench.py's, next to this file.
from lg_bench import chat, human

WARMUP = 5


def mysql_database(name: str) -> str:
    import pymysql

    u = urlparse(os.environ.get("MYSQL_URL", "mysql://root@127.0.0.1:3306/graph_test"))
    conn = pymysql.connect(host=u.hostname, port=u.port or 3306, user=u.username or "root", password=u.password or "")
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
        cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    conn.close()
    auth = u.username or "root"
    if u.password:
        auth += f":{u.password}"
    return f"mysql://{auth}@{u.hostname}:{u.port or 3306}/{name}"


def redis_url() -> str:
    return os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/")


def drop_prefix(prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(redis_url())
    keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
    if keys:
        client.delete(*keys)
    client.close()


def report(saver: str, mode: str, times: list[float]) -> None:
    print(json.dumps({
        "workload": "saver_chat",
        "saver": saver,
        "mode": mode,
        "turns": len(times),
        "median_us": statistics.median(times),
        "mean_us": statistics.fmean(times),
    }), flush=True)


def in_memory(saver_name: str):
    """The in-memory saver named `saver_name` (it serves sync and async calls alike), or None."""
    if saver_name == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver()
    if saver_name == "mnemograph-memory":
        from mnemograph_checkpoint import InMemorySaver

        return InMemorySaver()
    return None


def make_sync(saver_name: str, prefix: str):
    memory = in_memory(saver_name)
    if memory is not None:
        return memory
    if saver_name == "pymysql":
        from langgraph.checkpoint.mysql.pymysql import PyMySQLSaver

        cm = PyMySQLSaver.from_conn_string(mysql_database("graph_bench_bindings_py"))
        saver = cm.__enter__()
        saver._bench_connection = cm  # the connection lives as long as the saver
        saver.setup()
    elif saver_name == "mnemograph-mysql":
        from mnemograph_checkpoint import MySQLSaver

        saver = MySQLSaver.connect(mysql_database("graph_bench_bindings_rs"))
        saver.setup()
    elif saver_name == "plainredis":
        from langgraph_checkpoint_plainredis import RedisSaver

        saver = RedisSaver(url=redis_url(), prefix=prefix)
    elif saver_name == "mnemograph-redis":
        from mnemograph_checkpoint import RedisSaver

        saver = RedisSaver.connect(redis_url(), key_prefix=prefix)
    else:
        raise SystemExit(f"unknown saver {saver_name!r}")
    return saver


def run_sync(saver_name: str, turns: int) -> list[float]:
    prefix = f"bench-{uuid.uuid4().hex}"
    saver = make_sync(saver_name, prefix)
    graph = chat().compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": f"bench-{uuid.uuid4().hex}"}}
    times = []
    for i in range(WARMUP + turns):
        start = time.perf_counter()
        graph.invoke(human(i), cfg, durability="sync")
        if i >= WARMUP:
            times.append((time.perf_counter() - start) * 1e6)
    assert len(graph.get_state(cfg).values["messages"]) == 2 * (WARMUP + turns), "a turn was lost"
    if "redis" in saver_name:
        drop_prefix(prefix)
    return times


async def make_async(saver_name: str, prefix: str):
    """The saver, and the context manager to leave afterwards (or None)."""
    memory = in_memory(saver_name)
    if memory is not None:
        return memory, None
    close = None
    if saver_name == "pymysql":
        from langgraph.checkpoint.mysql.aio import AIOMySQLSaver

        cm = AIOMySQLSaver.from_conn_string(mysql_database("graph_bench_bindings_py"))
        saver = await cm.__aenter__()
        await saver.setup()
        close = cm
    elif saver_name == "mnemograph-mysql":
        from mnemograph_checkpoint import MySQLSaver

        saver = await MySQLSaver.aconnect(mysql_database("graph_bench_bindings_rs"))
        await saver.asetup()
    elif saver_name == "plainredis":
        from langgraph_checkpoint_plainredis import AsyncRedisSaver

        saver = AsyncRedisSaver(url=redis_url(), prefix=prefix)
    elif saver_name == "mnemograph-redis":
        from mnemograph_checkpoint import RedisSaver

        saver = await RedisSaver.aconnect(redis_url(), key_prefix=prefix)
    else:
        raise SystemExit(f"unknown saver {saver_name!r}")
    return saver, close


async def run_async(saver_name: str, turns: int) -> list[float]:
    prefix = f"bench-{uuid.uuid4().hex}"
    saver, close = await make_async(saver_name, prefix)
    graph = chat().compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": f"bench-{uuid.uuid4().hex}"}}
    times = []
    for i in range(WARMUP + turns):
        start = time.perf_counter()
        await graph.ainvoke(human(i), cfg, durability="sync")
        if i >= WARMUP:
            times.append((time.perf_counter() - start) * 1e6)
    state = await graph.aget_state(cfg)
    assert len(state.values["messages"]) == 2 * (WARMUP + turns), "a turn was lost"
    if close is not None:
        await close.__aexit__(None, None, None)
    if "redis" in saver_name:
        drop_prefix(prefix)
    return times


def ops_checkpoint(saver, i: int, messages: list) -> dict:
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": messages, "n": i}
    cp["channel_versions"] = {"messages": saver.get_next_version(None, None), "n": saver.get_next_version(None, None)}
    return cp


def ops_report(saver_name: str, mode: str, samples: dict[str, list[float]]) -> None:
    line = {"workload": "saver_ops", "saver": saver_name, "mode": mode, "rounds": len(samples["put"])}
    line.update({f"{op}_us": statistics.median(t) for op, t in samples.items()})
    print(json.dumps(line), flush=True)


def ops_sync(saver_name: str, n: int) -> None:
    prefix = f"bench-{uuid.uuid4().hex}"
    saver = make_sync(saver_name, prefix)
    latest = {"configurable": {"thread_id": f"ops-{uuid.uuid4().hex}", "checkpoint_ns": ""}}
    cfg, messages = latest, [HumanMessage(content=f"message {i} 你好", id=str(i)) for i in range(20)]
    samples = {"put": [], "put_writes": [], "get_tuple": []}
    for i in range(WARMUP + n):
        cp = ops_checkpoint(saver, i, messages)
        a = time.perf_counter()
        cfg = saver.put(cfg, cp, {"source": "loop", "step": i, "parents": {}}, cp["channel_versions"])
        b = time.perf_counter()
        saver.put_writes(cfg, [("messages", [AIMessage(content="ok")])], f"task-{i}", "")
        c = time.perf_counter()
        assert saver.get_tuple(latest).checkpoint["id"] == cp["id"]
        d = time.perf_counter()
        if i >= WARMUP:
            for op, t in (("put", b - a), ("put_writes", c - b), ("get_tuple", d - c)):
                samples[op].append(t * 1e6)
    if "redis" in saver_name:
        drop_prefix(prefix)
    ops_report(saver_name, "sync", samples)


async def ops_async(saver_name: str, n: int) -> None:
    prefix = f"bench-{uuid.uuid4().hex}"
    saver, close = await make_async(saver_name, prefix)
    latest = {"configurable": {"thread_id": f"ops-{uuid.uuid4().hex}", "checkpoint_ns": ""}}
    cfg, messages = latest, [HumanMessage(content=f"message {i} 你好", id=str(i)) for i in range(20)]
    samples = {"put": [], "put_writes": [], "get_tuple": []}
    for i in range(WARMUP + n):
        cp = ops_checkpoint(saver, i, messages)
        a = time.perf_counter()
        cfg = await saver.aput(cfg, cp, {"source": "loop", "step": i, "parents": {}}, cp["channel_versions"])
        b = time.perf_counter()
        await saver.aput_writes(cfg, [("messages", [AIMessage(content="ok")])], f"task-{i}", "")
        c = time.perf_counter()
        assert (await saver.aget_tuple(latest)).checkpoint["id"] == cp["id"]
        d = time.perf_counter()
        if i >= WARMUP:
            for op, t in (("put", b - a), ("put_writes", c - b), ("get_tuple", d - c)):
                samples[op].append(t * 1e6)
    if close is not None:
        await close.__aexit__(None, None, None)
    if "redis" in saver_name:
        drop_prefix(prefix)
    ops_report(saver_name, "async", samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("saver")
    parser.add_argument("turns", type=int)
    parser.add_argument("--mode", default="sync", choices=["sync", "async"])
    parser.add_argument("--workload", default="chat", choices=["chat", "ops"])
    args = parser.parse_args()
    if args.workload == "ops":
        if args.mode == "sync":
            ops_sync(args.saver, args.turns)
        else:
            asyncio.run(ops_async(args.saver, args.turns))
        return
    if args.mode == "sync":
        times = run_sync(args.saver, args.turns)
    else:
        times = asyncio.run(run_async(args.saver, args.turns))
    report(args.saver, args.mode, times)


if __name__ == "__main__":
    main()

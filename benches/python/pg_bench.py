"""The Python twin of crates/mnemograph-checkpoint-postgres/examples/chat_turns.rs: LangGraph's
own PostgresSaver (chat) and AsyncPostgresSaver (concurrent) under the same echo agent, printing
one JSON line in the same shape.

Usage: pg_bench.py chat N | concurrent C T
  chat N          one thread, N turns, durability "sync"; `us` is the mean turn
  concurrent C T  C threads at once on one event loop, T turns each, over a psycopg pool of
                  10 connections; `turns_per_s` is all C x T turns over the wall time

DATABASE_URL names the server and database (default
postgres://postgres@127.0.0.1:5432/graph_bench_pg_py); the database must exist.
"""

import asyncio
import json
import os
import statistics
import sys
import time

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph


def url():
    return os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/graph_bench_pg_py")


def human(i):
    return {"messages": [HumanMessage(content=f"turn {i} 你好 hello")]}


def echo(s):
    return {"messages": [AIMessage(content="echo: " + s["messages"][-1].content)]}


async def echo_async(s):
    return echo(s)


def graph(node):
    b = StateGraph(MessagesState)
    b.add_node("agent", node)
    b.add_edge(START, "agent")
    b.add_edge("agent", END)
    return b


def percentile(samples, p):
    ordered = sorted(samples)
    return ordered[round(p / 100 * (len(ordered) - 1))]


def chat(turns):
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url()) as saver:
        saver.setup()
        g = graph(echo).compile(checkpointer=saver)
        tid = f"bench-pg-py-{time.time_ns()}"
        cfg = {"configurable": {"thread_id": tid}}
        per_turn = []
        started = time.perf_counter()
        for i in range(turns):
            t = time.perf_counter()
            g.invoke(human(i), cfg, durability="sync")
            per_turn.append((time.perf_counter() - t) * 1e6)
        total = time.perf_counter() - started
        assert len(g.get_state(cfg).values["messages"]) == 2 * turns
        with saver._cursor() as cur:
            cur.execute(
                "SELECT (SELECT COALESCE(sum(pg_column_size(checkpoint)), 0) FROM checkpoints WHERE thread_id = %s)"
                " + (SELECT COALESCE(sum(length(blob)), 0) FROM checkpoint_blobs WHERE thread_id = %s)"
                " + (SELECT COALESCE(sum(length(blob)), 0) FROM checkpoint_writes WHERE thread_id = %s) AS b",
                (tid, tid, tid),
            )
            size = int(cur.fetchone()["b"])
    print(json.dumps({
        "workload": "chat_postgres", "impl": "python", "per": "turn", "turns": turns,
        "us": total / turns * 1e6, "us_median": statistics.median(per_turn),
        "p99_ms": percentile(per_turn, 99) / 1e3, "thread_bytes": size,
    }), flush=True)


async def concurrent(concurrency, turns):
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    async with AsyncConnectionPool(url(), max_size=10, kwargs=kwargs, open=False) as pool:
        saver = AsyncPostgresSaver(pool)
        await saver.setup()
        g = graph(echo_async).compile(checkpointer=saver)
        run = time.time_ns()
        ids = [f"bench-conc-pg-py-{run}-{k}" for k in range(concurrency)]

        async def conversation(tid):
            cfg = {"configurable": {"thread_id": tid}}
            times = []
            for i in range(turns):
                t = time.perf_counter()
                await g.ainvoke(human(i), cfg, durability="sync")
                times.append((time.perf_counter() - t) * 1e3)
            return times

        started = time.perf_counter()
        per_thread = await asyncio.gather(*(conversation(tid) for tid in ids))
        seconds = time.perf_counter() - started
        for tid in ids:
            n = len((await g.aget_state({"configurable": {"thread_id": tid}})).values["messages"])
            assert n == 2 * turns, f"thread {tid} holds {n} messages, not {2 * turns}"
    samples = [t for times in per_thread for t in times]
    print(json.dumps({
        "workload": "concurrent/postgres", "impl": "python", "concurrency": concurrency,
        "turns": len(samples), "seconds": seconds, "turns_per_s": len(samples) / seconds,
        "p50_ms": percentile(samples, 50), "p99_ms": percentile(samples, 99),
    }), flush=True)


def main():
    args = sys.argv[1:]
    if args[:1] == ["chat"]:
        chat(int(args[1]) if len(args) > 1 else 200)
    elif args[:1] == ["concurrent"]:
        asyncio.run(concurrent(int(args[1]), int(args[2])))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()

"""Python LangGraph twins of the mnemograph benchmarks, for side-by-side ratios.

Each workload builds the same graph, node for node, as its Rust bench:

    chain        crates/mnemograph-core/benches/engine.rs  `chain`
    chain_mem    crates/mnemograph-core/benches/engine.rs  `chain_mem`
    fanout       crates/mnemograph-core/benches/engine.rs  `fanout`
    chat_mem     crates/mnemograph-core/benches/engine.rs  `chat_mem/300_turns`,
                 `chat_mem/last_50_of_300` and `chat_mem/turn_at_300`
    chat_mysql   crates/mnemograph-checkpoint-mysql/examples/chat_turns.rs (plain mode)
    cpu_step     crates/mnemograph-core/benches/parallel.rs  `parallel/cpu_step`
    concurrent   tests/reliability/examples/concurrent_turns.rs
    footprint    crates/mnemograph-core/examples/footprint.rs

Usage (the venv with the pinned versions comes from scripts/python-peer.sh):

    PY=$(bash scripts/python-peer.sh)
    $PY benches/python/lg_bench.py chain [RUNS]          # default 500
    $PY benches/python/lg_bench.py chain_mem [RUNS]      # default 500
    $PY benches/python/lg_bench.py fanout [RUNS]         # default 100
    $PY benches/python/lg_bench.py chat_mem [TURNS]      # default 300; --copies 50
    $PY benches/python/lg_bench.py chat_mysql [TURNS]    # default 200; needs MySQL/MariaDB
    $PY benches/python/lg_bench.py mysql_commit [N]      # default 200; the server's reference
    $PY benches/python/lg_bench.py cpu_step [RUNS]       # default 10
    $PY benches/python/lg_bench.py footprint [THREADS]   # default 10000; --turns 10
    $PY benches/python/lg_bench.py concurrent [TURNS] --backend mysql --concurrency 64
                                                         # default 10 turns per thread

Every workload prints one JSON line (chat_mem prints three, one per Rust view). The key `us` holds
the figure to compare with the Rust side, in microseconds per `per` (a run or a turn):

    chain, chain_mem, fanout   median of the timed runs
    cpu_step                   median of the timed runs
    chat_mem/300_turns         mean turn of a whole conversation (the Rust bench's time / 300)
    chat_mem/last_50_of_300    mean of its last 50 turns (the Rust bench's time / 50)
    chat_mem/turn_at_300       median of single turns on copies of the 300-turn thread
    chat_mysql                 mean turn over all turns, as chat_turns.rs's `us_per_turn`; with
                               --at=10,100,1000 also each turn's bytes added and the median of the
                               ten turns around it (`at`), as chat_turns.rs --at

Every run and turn is timed alone with time.perf_counter; the first (cold) one is included.

chat_mysql runs with durability "sync" (every checkpoint is stored before the next step), as the
Rust side does; LangGraph's default, "async", would overlap the writes with the next step. The
server and database come from MYSQL_URL (default mysql://root@127.0.0.1:3306/graph_bench_py); the
database is created when missing.

cpu_step is one superstep of four sync nodes, each computing until its thread has used 200 ms of
CPU time (time.thread_time, so time spent waiting for the GIL or preempted does not count as
work). LangGraph runs the step's sync nodes in a thread pool; the GIL lets one compute at a time.

footprint is memory, not time: THREADS threads of TURNS echo-chat turns each in the in-memory
saver, and the process's resident memory (VmRSS) before and after, after a garbage collection; the
line holds the growth per thread in bytes.

concurrent is many conversations at once on one saver: --concurrency C threads, each running
TURNS echo-chat turns one after another (durability "sync"), the C threads at once with
asyncio.gather, every turn through `ainvoke` and an async node, on LangGraph's async savers:
`AIOMySQLSaver` over an aiomysql pool of 10 connections (--backend mysql, MYSQL_URL as for
chat_mysql), `AsyncRedisSaver` from langgraph-checkpoint-plainredis, the Python saver for plain
Redis, over a redis-py pool of 10 connections (--backend redis, REDIS_URL, default
redis://127.0.0.1:6379/), or `InMemorySaver`
(--backend memory). It prints one JSON line with turns_per_s (all turns over the wall time), the
p50 and p99 of single turns and the process's CPU time over the same span (client_cpu_s), in the
shape of concurrent_turns.rs's; a saver that cannot start gives a line with "error" instead. Afterwards every thread's state must hold
exactly its 2 x TURNS messages.

mysql_commit is no LangGraph workload but the server's own reference: N single-row INSERTs in
autocommit mode into a scratch table, i.e. one durable commit each (its median, "impl":
"reference"). A chat turn waits for a few such commits, so this tells a slow disk from a slow
client.
"""

import argparse
import json
import operator
import os
import statistics
import time
from typing import Annotated, TypedDict
from urllib.parse import urlparse

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph


class S(TypedDict):
    """The Rust benches' `S`: a counter and a list merged by concatenation."""

    n: int
    log: Annotated[list, operator.add]


def start_input():
    return {"n": 0, "log": []}


def chain(k=10):
    """START -> n0 -> ... -> n{k-1} -> END, each node returns {"n": n + 1}."""
    b = StateGraph(S)
    for i in range(k):
        b.add_node(f"n{i}", lambda s: {"n": s["n"] + 1})
        b.add_edge(START if i == 0 else f"n{i - 1}", f"n{i}")
    b.add_edge(f"n{k - 1}", END)
    return b


def worker(i):
    return lambda s: {"log": [i]}


def fanout(k=50):
    """START -> src (n = 0) -> w0..w{k-1} in parallel -> join (n = len(log)) -> END."""
    b = StateGraph(S)
    b.add_node("src", lambda s: {"n": 0})
    b.add_edge(START, "src")
    for i in range(k):
        b.add_node(f"w{i}", worker(i))
        b.add_edge("src", f"w{i}")
    b.add_node("join", lambda s: {"n": len(s["log"])})
    # A join edge: `join` runs once, after every worker has run.
    b.add_edge([f"w{i}" for i in range(k)], "join")
    b.add_edge("join", END)
    return b


def burn(seconds):
    """Computes until this thread has used `seconds` of CPU time."""
    end = time.thread_time_ns() + int(seconds * 1e9)
    x = 0
    while time.thread_time_ns() < end:
        for _ in range(1000):
            x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
    return x


def cpu_node(i, seconds=0.2):
    def node(s):
        burn(seconds)
        return {"log": [i]}

    return node


def cpu_step(k=4):
    """START -> c0..c{k-1} in one superstep -> END, each a sync node computing for 200 ms of CPU."""
    b = StateGraph(S)
    for i in range(k):
        b.add_node(f"c{i}", cpu_node(i))
        b.add_edge(START, f"c{i}")
        b.add_edge(f"c{i}", END)
    return b


def chat():
    """START -> agent -> END; the agent answers "echo: " + the last message."""
    b = StateGraph(MessagesState)
    b.add_node("agent", lambda s: {"messages": [AIMessage(content="echo: " + s["messages"][-1].content)]})
    b.add_edge(START, "agent")
    b.add_edge("agent", END)
    return b


def human(i):
    return {"messages": [HumanMessage(content=f"turn {i} 你好 hello")]}


def thread(tid):
    return {"configurable": {"thread_id": tid}}


def timed(fn):
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e6


def report(workload, per, samples_us, us, **extra):
    line = {
        "workload": workload,
        "impl": "python",
        "per": per,
        "us": us,
        "samples": len(samples_us),
        "median_us": statistics.median(samples_us),
        "mean_us": statistics.fmean(samples_us),
    }
    line.update(extra)
    print(json.dumps(line), flush=True)


def bench_chain(runs):
    g = chain().compile()
    assert g.invoke(start_input())["n"] == 10
    times = [timed(lambda: g.invoke(start_input())) for _ in range(runs)]
    report("chain", "run", times, statistics.median(times))


def bench_chain_mem(runs):
    # Every run on a new thread t0, t1, ... of one saver, as the Rust bench does within a sample.
    g = chain().compile(checkpointer=InMemorySaver())
    times = [timed(lambda: g.invoke(start_input(), thread(f"t{i}"))) for i in range(runs)]
    report("chain_mem", "run", times, statistics.median(times))


def bench_fanout(runs):
    g = fanout().compile()
    out = g.invoke(start_input())
    assert out["n"] == 50
    # Writes are applied in task-path order, i.e. by node name as text: w0, w1, w10, w11, ...
    assert out["log"] == sorted(range(50), key=lambda i: f"w{i}")
    times = [timed(lambda: g.invoke(start_input())) for _ in range(runs)]
    report("fanout", "run", times, statistics.median(times))


def bench_cpu_step(runs):
    g = cpu_step().compile()
    # Writes are applied in task-path order: c0, c1, c2, c3.
    assert g.invoke(start_input())["log"] == [0, 1, 2, 3]
    times = [timed(lambda: g.invoke(start_input())) for _ in range(runs)]
    report("cpu_step", "run", times, statistics.median(times))


def bench_chat_mem(turns, copies):
    saver = InMemorySaver()
    g = chat().compile(checkpointer=saver)
    cfg = thread("bench")
    per_turn = [timed(lambda: g.invoke(human(i), cfg)) for i in range(turns)]
    report(f"chat_mem/{turns}_turns", "turn", per_turn, statistics.fmean(per_turn), turns=turns)
    last = per_turn[-50:]
    report(f"chat_mem/last_50_of_{turns}", "turn", last, statistics.fmean(last), turns=turns)

    # One more turn on a thread that already holds `turns` turns. Each copy is a fresh thread
    # whose newest checkpoint is the conversation's newest (written untimed), so every timed turn
    # sees exactly that history; the copy is deleted afterwards, untimed.
    filled = saver.get_tuple(cfg)
    assert len(filled.checkpoint["channel_values"]["messages"]) == 2 * turns
    times = []
    for i in range(copies):
        copy = {"configurable": {"thread_id": f"copy{i}", "checkpoint_ns": ""}}
        saver.put(copy, filled.checkpoint, filled.metadata, filled.checkpoint["channel_versions"])
        start = time.perf_counter()
        out = g.invoke(human(turns), thread(f"copy{i}"))
        times.append((time.perf_counter() - start) * 1e6)
        assert len(out["messages"]) == 2 * turns + 2
        saver.delete_thread(f"copy{i}")
    report(f"chat_mem/turn_at_{turns}", "turn", times, statistics.median(times), turns=turns)


def mysql_url():
    url = os.environ.get("MYSQL_URL", "mysql://root@127.0.0.1:3306/graph_bench_py")
    return url, urlparse(url)


def mysql_connect(db):
    """A pymysql connection to MYSQL_URL's server, to database `db` (created when missing)."""
    import pymysql

    _, u = mysql_url()
    args = {"host": u.hostname, "port": u.port or 3306, "user": u.username, "password": u.password or ""}
    server = pymysql.connect(**args)
    with server.cursor() as cur:
        cur.execute(f"CREATE DATABASE IF NOT EXISTS `{db}` CHARACTER SET utf8mb4")
    server.close()
    return pymysql.connect(database=db, **args)


def bench_mysql_commit(n):
    _, u = mysql_url()
    db = mysql_connect(u.path.lstrip("/"))
    db.autocommit(True)
    times = []
    with db.cursor() as cur:
        cur.execute("CREATE TABLE IF NOT EXISTS bench_commit (id INT AUTO_INCREMENT PRIMARY KEY, v TEXT)")
        for _ in range(n):
            times.append(timed(lambda: cur.execute("INSERT INTO bench_commit (v) VALUES ('x')")))
        cur.execute("DROP TABLE bench_commit")
    db.close()
    line = {"workload": "mysql_commit", "impl": "reference", "per": "commit", "us": statistics.median(times)}
    print(json.dumps(line), flush=True)


def thread_bytes(database, tid):
    db = mysql_connect(database)
    with db.cursor() as cur:
        cur.execute(
            "SELECT (SELECT COALESCE(SUM(LENGTH(checkpoint)), 0) FROM checkpoints WHERE thread_id = %s)"
            " + (SELECT COALESCE(SUM(LENGTH(`blob`)), 0) FROM checkpoint_blobs WHERE thread_id = %s)"
            " + (SELECT COALESCE(SUM(LENGTH(`blob`)), 0) FROM checkpoint_writes WHERE thread_id = %s)",
            (tid, tid, tid),
        )
        (size,) = cur.fetchone()
    db.close()
    return int(size)


def bench_chat_mysql(turns, at=()):
    from langgraph.checkpoint.mysql.pymysql import PyMySQLSaver

    url, u = mysql_url()
    database = u.path.lstrip("/")
    mysql_connect(database).close()

    with PyMySQLSaver.from_conn_string(url) as saver:
        saver.setup()
        g = chat().compile(checkpointer=saver)
        tid = f"bench-py-{time.time_ns()}"
        cfg = thread(tid)
        per_turn, added = [], {}
        for i in range(turns):
            sized = (i + 1) in at
            before = thread_bytes(database, tid) if sized else 0
            per_turn.append(timed(lambda: g.invoke(human(i), cfg, durability="sync")))
            if sized:
                added[i + 1] = thread_bytes(database, tid) - before
    at_points = [
        {
            "turn": turn,
            "us_median": statistics.median(per_turn[max(turn - 5, 0):min(turn + 5, turns)]),
            "bytes_added": added[turn],
        }
        for turn in sorted(added)
    ]

    # What one thread takes in the database: the same three tables the Rust side sums.
    sizes = {}
    db = mysql_connect(database)
    with db.cursor() as cur:
        for table, column in [
            ("checkpoints", "checkpoint"),
            ("checkpoint_blobs", "`blob`"),
            ("checkpoint_writes", "`blob`"),
        ]:
            cur.execute(
                f"SELECT COALESCE(SUM(LENGTH({column})), 0), COUNT(*) FROM {table} WHERE thread_id = %s",
                (tid,),
            )
            size, rows = cur.fetchone()
            sizes[table] = {"bytes": int(size), "rows": int(rows)}
    db.close()
    report(
        "chat_mysql",
        "turn",
        per_turn,
        statistics.fmean(per_turn),
        turns=turns,
        us_per_turn_last_50=statistics.fmean(per_turn[-50:]),
        thread_bytes=sum(t["bytes"] for t in sizes.values()),
        tables=sizes,
        at=at_points,
    )


async def agent_async(s):
    return {"messages": [AIMessage(content="echo: " + s["messages"][-1].content)]}


def chat_async():
    """chat() with an async node, as a graph served from an event loop is written."""
    b = StateGraph(MessagesState)
    b.add_node("agent", agent_async)
    b.add_edge(START, "agent")
    b.add_edge("agent", END)
    return b


def percentile(samples, p):
    """The p-th percentile by nearest rank, as the Rust side's Latencies::percentile."""
    ordered = sorted(samples)
    rank = max(1, min(len(ordered), -(-len(ordered) * p // 100)))
    return ordered[int(rank) - 1]


def server_status():
    """The MySQL server's Questions, Com_commit and Innodb_log_writes counters, as
    concurrent_turns.rs reads them (server-wide: whatever else runs there counts too)."""
    _, u = mysql_url()
    db = mysql_connect(u.path.lstrip("/"))
    with db.cursor() as cur:
        cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN"
                    " ('Questions', 'Com_commit', 'Innodb_log_writes')")
        status = {name: int(value) for name, value in cur.fetchall()}
    db.close()
    return status


async def concurrent_saver(stack, backend):
    """The async saver for `backend`, entered into the AsyncExitStack `stack`."""
    if backend == "memory":
        return InMemorySaver()
    if backend == "redis":
        # The Python saver for plain Redis: langgraph-checkpoint-redis needs the RediSearch and
        # RedisJSON modules, which plain Redis (and mnemograph's saver) does without.
        import redis.asyncio as aioredis
        from langgraph_checkpoint_plainredis import AsyncRedisSaver

        url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/")
        # A pool of 10 connections that waits for a free one, as the MySQL pool above: redis-py's
        # default pool refuses a call beyond its size instead.
        pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=10)
        client = aioredis.Redis(connection_pool=pool)
        stack.push_async_callback(client.aclose)
        stack.push_async_callback(pool.aclose)
        return AsyncRedisSaver(client, prefix=f"bench-conc-py-{time.time_ns()}")
    import aiomysql
    from langgraph.checkpoint.mysql.aio import AIOMySQLSaver

    url, u = mysql_url()
    database = u.path.lstrip("/")
    mysql_connect(database).close()
    # A pool, as for a server: the saver takes a connection per call (and still runs one call at
    # a time, under its own asyncio.Lock).
    pool = await aiomysql.create_pool(
        host=u.hostname, port=u.port or 3306, user=u.username, password=u.password or "",
        db=database, autocommit=True, maxsize=10,
    )

    async def close():
        pool.close()
        await pool.wait_closed()

    stack.push_async_callback(close)
    saver = AIOMySQLSaver(conn=pool)
    await saver.setup()
    return saver


async def concurrent_run(backend, concurrency, turns):
    import asyncio
    import contextlib

    async with contextlib.AsyncExitStack() as stack:
        line = {"workload": f"concurrent/{backend}", "impl": "python", "backend": backend,
                "concurrency": concurrency}
        try:
            saver = await concurrent_saver(stack, backend)
        except Exception as e:  # the line says why this saver could not run
            line["error"] = f"{type(e).__name__}: {e}"
            print(json.dumps(line), flush=True)
            return
        g = chat_async().compile(checkpointer=saver)
        run = time.time_ns()
        ids = [f"bench-conc-py-{run}-{k}" for k in range(concurrency)]

        async def conversation(tid):
            cfg = thread(tid)
            times = []
            for i in range(turns):
                begun = time.perf_counter()
                await g.ainvoke(human(i), cfg, durability="sync")
                times.append((time.perf_counter() - begun) * 1e3)
            return times

        before = server_status() if backend == "mysql" else None
        cpu = time.process_time()
        started = time.perf_counter()
        per_thread = await asyncio.gather(*(conversation(tid) for tid in ids))
        seconds = time.perf_counter() - started
        cpu = time.process_time() - cpu
        after = server_status() if backend == "mysql" else None
        for tid in ids:
            n = len((await g.aget_state(thread(tid))).values["messages"])
            assert n == 2 * turns, f"thread {tid} holds {n} messages, not {2 * turns}"
        if backend == "redis":
            for tid in ids:
                await saver.adelete_thread(tid)
        samples = [t for times in per_thread for t in times]
        line.update({
            "turns": len(samples),
            "seconds": round(seconds, 4),
            "turns_per_s": round(len(samples) / seconds, 2),
            "p50_ms": round(percentile(samples, 50), 3),
            "p99_ms": round(percentile(samples, 99), 3),
            "client_cpu_s": round(cpu, 2),
        })
        if before and after:
            for key, name in [("statements_per_turn", "Questions"), ("commits_per_turn", "Com_commit"),
                              ("log_writes_per_turn", "Innodb_log_writes")]:
                line[key] = round((after[name] - before[name]) / len(samples), 3)
        print(json.dumps(line), flush=True)


def bench_concurrent(backend, concurrency, turns):
    import asyncio

    asyncio.run(concurrent_run(backend, concurrency, turns))


def rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def bench_footprint(threads, turns):
    import gc

    from langgraph.checkpoint.memory import InMemorySaver

    graph = chat().compile(checkpointer=InMemorySaver())
    # One thread first, so that what loading and compiling allocate is not counted per thread.
    for i in range(turns):
        graph.invoke(human(i), thread("warm-up"))
    gc.collect()
    before = rss_bytes()
    for t in range(threads):
        for i in range(turns):
            graph.invoke(human(i), thread(f"t{t}"))
    gc.collect()
    after = rss_bytes()
    print(json.dumps({
        "workload": "footprint",
        "impl": "python",
        "threads": threads,
        "turns": turns,
        "rss_before": before,
        "rss_after": after,
        "bytes_per_thread": (after - before) / threads,
    }))


def main():
    defaults = {
        "chain": 500,
        "chain_mem": 500,
        "fanout": 100,
        "chat_mem": 300,
        "chat_mysql": 200,
        "mysql_commit": 200,
        "cpu_step": 10,
        "footprint": 10000,
        "concurrent": 10,
    }
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("workload", choices=sorted(defaults))
    parser.add_argument("n", nargs="?", type=int, help="runs, or turns for the chat workloads")
    parser.add_argument("--copies", type=int, default=50, help="chat_mem: timed turns on copies (default 50)")
    parser.add_argument("--turns", type=int, default=10, help="footprint: turns per thread (default 10)")
    parser.add_argument("--backend", default="memory", choices=["memory", "mysql", "redis"],
                        help="concurrent: the saver (default memory)")
    parser.add_argument("--concurrency", type=int, default=1, help="concurrent: threads at once (default 1)")
    parser.add_argument("--at", default="", help="chat_mysql: turns to report the cost of, e.g. 10,100,1000")
    args = parser.parse_args()
    n = args.n or defaults[args.workload]
    if args.workload == "chain":
        bench_chain(n)
    elif args.workload == "chain_mem":
        bench_chain_mem(n)
    elif args.workload == "fanout":
        bench_fanout(n)
    elif args.workload == "chat_mem":
        bench_chat_mem(n, args.copies)
    elif args.workload == "cpu_step":
        bench_cpu_step(n)
    elif args.workload == "footprint":
        bench_footprint(n, args.turns)
    elif args.workload == "concurrent":
        bench_concurrent(args.backend, args.concurrency, n)
    elif args.workload == "chat_mysql":
        bench_chat_mysql(n, tuple(int(t) for t in args.at.split(",") if t))
    else:
        bench_mysql_commit(n)


if __name__ == "__main__":
    main()

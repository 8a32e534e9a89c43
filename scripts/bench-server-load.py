"""Drives the load benchmark of scripts/bench-server-load.sh through LangGraph's own Python SDK.

Creates RUNS threads, then starts one streaming run of the `talk` graph on each, all at once
(`runs.stream`, `stream_mode` messages-tuple or messages), reads every stream to its end, and
checks that each run streamed exactly the reply the graph makes (`t0 t1 ... t{TOKENS-1} `,
reassembled from the chunks, or the last partial message in `messages` mode) and no error.
Prints one JSON line: wall time, events (and, in messages mode, the partials skipped by a reader
that fell behind, which a later partial stands in for), events per second, time to the first token and to the
end of each stream, and the runs that failed, with why.

With --delete-threads instead, deletes every thread on the server and prints how many.

Usage: python bench-server-load.py URL [--runs 1000] [--tokens 2000] [--mode messages-tuple]
       python bench-server-load.py URL --delete-threads
"""

import argparse
import asyncio
import json
import resource
import statistics
import sys
import time

import httpx
import langgraph_sdk
from langgraph_sdk.client import LangGraphClient


def client(url: str, runs: int) -> LangGraphClient:
    """The SDK's async client, as `get_client` builds it, with a connection pool that holds every
    stream at once: httpx's default of 100 connections would queue the rest, and its 5 s pool
    timeout would fail them."""
    limits = httpx.Limits(max_connections=runs + 16, max_keepalive_connections=runs + 16)
    http = httpx.AsyncClient(
        base_url=url,
        transport=httpx.AsyncHTTPTransport(retries=5, limits=limits),
        timeout=httpx.Timeout(connect=60, read=300, write=300, pool=600),
        headers={"User-Agent": f"langgraph-sdk-py/{langgraph_sdk.__version__}"},
    )
    return LangGraphClient(http)


def expected_reply(tokens: int) -> str:
    return "".join(f"t{t} " for t in range(tokens))


async def one_run(lg: LangGraphClient, thread_id: str, mode: str, expected: str, start: asyncio.Event):
    """Streams one run to its end; returns its figures and what went wrong, if anything."""
    await start.wait()
    sent = time.perf_counter()
    first_token = None
    events = 0
    chunks: list[str] = []
    partial = ""
    errors: list[str] = []
    ids: list[int] = []
    try:
        async for part in lg.runs.stream(
            thread_id,
            "talk",
            input={"messages": [{"role": "user", "content": "talk to me"}]},
            stream_mode=mode,
        ):
            events += 1
            if part.id is not None:
                ids.append(int(part.id))
            if part.event == "messages":
                chunks.append(part.data[0]["content"])
            elif part.event == "messages/partial":
                partial = part.data[0]["content"]
            elif part.event == "error":
                errors.append(json.dumps(part.data))
            else:
                continue
            if first_token is None and part.event != "error":
                first_token = time.perf_counter() - sent
    except Exception as e:  # a run that fails is counted and reported, not fatal to the others
        errors.append(f"{type(e).__name__}: {e}")
    total = time.perf_counter() - sent
    text = "".join(chunks) if mode == "messages-tuple" else partial
    if not errors and text != expected:
        errors.append(f"reply of {len(text)} chars, expected {len(expected)}")
    # Ids number every event of the run. In messages mode a reader that falls behind skips the
    # partials that a later one (the whole message so far) stands in for; no other event may go.
    skipped = ids[-1] - ids[0] + 1 - len(ids) if ids else 0
    if skipped and mode == "messages-tuple":
        errors.append(f"{skipped} events skipped")
    return {
        "events": events,
        "skipped": skipped,
        "first": first_token,
        "total": total,
        "errors": errors,
        "thread": thread_id,
    }


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


async def delete_threads(lg: LangGraphClient) -> int:
    """Deletes every thread, a page at a time."""
    deleted = 0
    while page := await lg.threads.search(limit=1000):
        await asyncio.gather(*(lg.threads.delete(t["thread_id"]) for t in page))
        deleted += len(page)
    return deleted


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--tokens", type=int, default=2000)
    ap.add_argument("--mode", default="messages-tuple", choices=["messages-tuple", "messages"])
    ap.add_argument("--delete-threads", action="store_true")
    args = ap.parse_args()
    if args.delete_threads:
        async with client(args.url, 1000) as lg:
            print(json.dumps({"deleted": await delete_threads(lg)}))
        return 0
    expected = expected_reply(args.tokens)
    async with client(args.url, args.runs) as lg:
        threads = await asyncio.gather(*(lg.threads.create() for _ in range(args.runs)))
        start = asyncio.Event()
        tasks = [
            asyncio.create_task(one_run(lg, t["thread_id"], args.mode, expected, start)) for t in threads
        ]
        await asyncio.sleep(0)
        began = time.perf_counter()
        start.set()
        results = await asyncio.gather(*tasks)
        wall = time.perf_counter() - began
    failed = [r for r in results if r["errors"]]
    events = sum(r["events"] for r in results)
    firsts = [r["first"] for r in results if r["first"] is not None]
    totals = [r["total"] for r in results]
    report = {
        "runs": args.runs,
        "tokens": args.tokens,
        "mode": args.mode,
        "wall_s": round(wall, 3),
        "events": events,
        "skipped_partials": sum(r["skipped"] for r in results) if args.mode == "messages" else 0,
        "events_per_s": round(events / wall, 1),
        "tokens_per_s": round(args.runs * args.tokens / wall, 1),
        "first_token_ms": {
            "p50": round(1000 * statistics.median(firsts), 1) if firsts else None,
            "p99": round(1000 * percentile(firsts, 0.99), 1) if firsts else None,
        },
        "end_ms": {"p50": round(1000 * statistics.median(totals), 1), "p99": round(1000 * percentile(totals, 0.99), 1)},
        "failed": len(failed),
        "failures": [{"thread": r["thread"], "errors": r["errors"][:3]} for r in failed[:10]],
        "client_max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    print(json.dumps(report))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

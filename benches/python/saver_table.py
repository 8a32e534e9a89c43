"""The table of scripts/bench-bindings.sh: Python LangGraph's chat turns on Python's savers and
on ours, from the JSON lines of saver_bench.py (one per saver, mode and round).

Usage: saver_table.py RESULTS.jsonl
For each pair and mode: the median over rounds of each round's median microseconds a turn, and
Python's saver's time over ours (above 1: ours is faster); then the same for each operation of
the saver alone (`--workload ops`).
"""

import json
import statistics
import sys

PAIRS = [
    ("MySQL", "pymysql", "mnemograph-mysql", "PyMySQLSaver / AIOMySQLSaver"),
    ("Redis", "plainredis", "mnemograph-redis", "langgraph-checkpoint-plainredis"),
    ("memory", "memory", "mnemograph-memory", "InMemorySaver"),
]


def main() -> None:
    runs: dict[tuple[str, str], list[float]] = {}
    ops: dict[tuple[str, str, str], list[float]] = {}
    with open(sys.argv[1]) as f:
        for line in f:
            r = json.loads(line)
            if r["workload"] == "saver_ops":
                for op in ("put", "put_writes", "get_tuple"):
                    ops.setdefault((r["saver"], r["mode"], op), []).append(r[f"{op}_us"])
            else:
                runs.setdefault((r["saver"], r["mode"]), []).append(r["median_us"])
    print("| store | mode | Python's saver | ms/turn | mnemograph (bindings) ms/turn | Python / ours | rounds |")
    print("|---|---|---|---|---|---|---|")
    for store, theirs, ours, name in PAIRS:
        for mode in ("sync", "async"):
            a, b = runs.get((theirs, mode)), runs.get((ours, mode))
            if not a or not b:
                continue
            ma, mb = statistics.median(a), statistics.median(b)
            print(f"| {store} | {mode} | {name} | {ma / 1000:.2f} | {mb / 1000:.2f} | {ma / mb:.2f}x | {min(len(a), len(b))} |")
    if not ops:
        return
    print()
    print("| store | mode | operation | Python's saver µs | mnemograph (bindings) µs | Python / ours |")
    print("|---|---|---|---|---|---|")
    for store, theirs, ours, _ in PAIRS:
        for mode in ("sync", "async"):
            for op in ("put", "put_writes", "get_tuple"):
                a, b = ops.get((theirs, mode, op)), ops.get((ours, mode, op))
                if not a or not b:
                    continue
                ma, mb = statistics.median(a), statistics.median(b)
                print(f"| {store} | {mode} | `{op}` | {ma:.0f} | {mb:.0f} | {ma / mb:.2f}x |")


if __name__ == "__main__":
    main()

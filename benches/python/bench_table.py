"""The JSON plumbing of scripts/bench.sh: reads the figures of both sides and prints the table.

Usage:
    bench_table.py executables < cargo-messages.json
        prints the executables cargo built (cargo's --message-format=json output on stdin)
    bench_table.py criterion CRITERION_HOME ROUND ID[:DIVISOR] ...
        prints one JSON line per criterion bench ID: its median, in microseconds, divided by
        DIVISOR (300 turns timed together give the figure of one turn)
    bench_table.py tag ROUND < lines
        adds "round": ROUND to every JSON line on stdin (lg_bench.py's and chat_turns's)
    bench_table.py table RESULTS.jsonl
        prints the comparison table (Markdown) of every round in RESULTS.jsonl

Every figure line has "workload", "impl" ("rust" or "python"), "per" (run or turn), "us" and
"round". The table takes, per workload, the median over the rounds of each side, the ratio
Python/Rust of each round (both sides ran back to back in it) and the median of those ratios.
Standard library only, so it runs under any Python 3.
"""

import json
import os
import statistics
import sys

# (row, Rust workload, Python workload, target in the row's unit, the compared key of the figure
# line, dotted for a nested one). A Rust workload without a Python twin names the closest Python
# figure, or None.
ROWS = [
    ("chain", "chain", "chain", 10.0, "us"),
    ("chain_mem", "chain_mem", "chain_mem", 40.0, "us"),
    ("fanout", "fanout", "fanout", 150.0, "us"),
    ("chat_mem/turn_at_300", "chat_mem/turn_at_300", "chat_mem/turn_at_300", 50.0, "us"),
    ("chat_mem/last_50_of_300 (per turn)", "chat_mem/last_50_of_300", "chat_mem/last_50_of_300", None, "us"),
    ("chat_mem/300_turns (per turn)", "chat_mem/300_turns", "chat_mem/300_turns", None, "us"),
    ("chat_mysql (mean turn)", "chat_mysql", "chat_mysql", 2500.0, "us"),
    ("chat_mysql_delta (mean turn; Python: plain)", "chat_mysql_delta", "chat_mysql", None, "us"),
    ("chat_mysql thread, all three tables", "chat_mysql", "chat_mysql", None, "thread_bytes"),
    (
        "chat_mysql_delta thread, all three tables (Python: plain)",
        "chat_mysql_delta",
        "chat_mysql",
        1e6,
        "thread_bytes",
    ),
    (
        "chat_mysql_delta thread, `checkpoint_blobs` (Python: plain)",
        "chat_mysql_delta",
        "chat_mysql",
        1e6,
        "tables.checkpoint_blobs.bytes",
    ),
    ("cpu_step (4 nodes × 200 ms CPU, one step)", "parallel/cpu_step", "cpu_step", 440_000.0, "us"),
    ("redis/chat_turn (fresh thread)", "redis/chat_turn", None, 1000.0, "us"),
    ("redis/chat_turn_at_20", "redis/chat_turn_at_20", None, 1000.0, "us"),
]


def executables():
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
            print(msg["executable"])


def criterion(home, rnd, ids):
    for spec in ids:
        bench, _, divisor = spec.partition(":")
        path = os.path.join(home, bench, "new", "estimates.json")
        if not os.path.exists(path):
            # The bench did not run (a filter matched nothing, or its server was unreachable).
            print(f"no figures for {bench}: {path} is missing", file=sys.stderr)
            continue
        with open(path) as f:
            estimates = json.load(f)
        per = "turn" if divisor else "run"
        us = estimates["median"]["point_estimate"] / 1e3 / float(divisor or 1)
        line = {"workload": bench, "impl": "rust", "per": per, "us": us, "round": int(rnd)}
        print(json.dumps(line))


def tag(rnd):
    for line in sys.stdin:
        line = line.strip()
        if line.startswith("{"):
            figure = json.loads(line)
            figure["round"] = int(rnd)
            print(json.dumps(figure))


def lookup(figure, key):
    for part in key.split("."):
        if not isinstance(figure, dict):
            return None
        figure = figure.get(part)
    return figure


def fmt(value, key):
    if value is None:
        return "—"
    if key.endswith("bytes"):
        return f"{value / 1e6:.3f} MB"
    if value >= 1000:
        return f"{value / 1000:.2f} ms"
    return f"{value:.1f} µs"


def table(path):
    figures = {}
    with open(path) as f:
        for line in f:
            figure = json.loads(line)
            figures[(figure["round"], figure["impl"], figure["workload"])] = figure
    rounds = sorted({r for r, _, _ in figures})
    print(f"{len(rounds)} rounds; Rust and Python medians over the rounds; ratio = Python / Rust per round.")
    print()
    print("| workload | target | Rust | Python | ratio per round | median ratio | target met |")
    print("|---|---|---|---|---|---|---|")
    for row, rust_w, py_w, target, key in ROWS:
        rust, py, ratios = [], [], []
        for r in rounds:
            a = lookup(figures.get((r, "rust", rust_w)), key)
            b = lookup(figures.get((r, "python", py_w)), key)
            if a is not None:
                rust.append(a)
            if b is not None:
                py.append(b)
            if a and b:
                ratios.append(b / a)
        if not rust:
            continue
        rust_median = statistics.median(rust)
        py_median = statistics.median(py) if py else None
        per_round = " / ".join(f"{x:.1f}" for x in ratios) or "—"
        ratio = f"{statistics.median(ratios):.1f}×" if ratios else "—"
        if target is None:
            target_text, met = "—", ""
        else:
            target_text = ("< " if key.endswith("bytes") else "≤ ") + fmt(target, key)
            within = sum(1 for x in rust if x <= target)
            verdict = "**met**" if rust_median <= target else "**not met**"
            met = f"{verdict} ({within} of {len(rust)} rounds within)"
        print(
            f"| {row} | {target_text} | {fmt(rust_median, key)} | {fmt(py_median, key)} "
            f"| {per_round} | {ratio} | {met} |"
        )
    print()
    print("Per round (Rust / Python):")
    print()
    for row, rust_w, py_w, _, key in ROWS:
        cells = []
        for r in rounds:
            a = lookup(figures.get((r, "rust", rust_w)), key)
            b = lookup(figures.get((r, "python", py_w)), key)
            if a is not None:
                cells.append(f"{fmt(a, key)} / {fmt(b, key)}")
        if cells:
            print(f"- {row}: " + "; ".join(cells))
    references = sorted((k, f) for k, f in figures.items() if k[1] == "reference")
    if references:
        print()
        print("References (the server's own cost, per round):")
        print()
        for (r, _, workload), f in references:
            print(f"- round {r}: {workload} {fmt(f['us'], 'us')} per {f['per']} (median)")


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "executables":
        executables()
    elif command == "criterion":
        criterion(args[0], args[1], args[2:])
    elif command == "tag":
        tag(args[0])
    elif command == "table":
        table(args[0])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

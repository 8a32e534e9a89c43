#!/usr/bin/env bash
# mnemograph's Postgres saver against LangGraph's own (langgraph-checkpoint-postgres), side by
# side on one server: the echo agent's chat turn on one thread, and turns per second with many
# threads at once. Both sides run back to back in every round, Rust first in odd rounds and
# Python first in even ones; the server's durable commit is measured in each round as the
# reference. Prints a table of medians (with the range over the rounds); the JSON lines and the
# table go to $CARGO_TARGET_DIR/bench-postgres/DATE/.
#
# Usage: scripts/bench-postgres.sh [--rounds N] [--turns N] [--concurrency LIST]
#   --rounds N          rounds (default 3)
#   --turns N           turns of the single-thread chat (default 200)
#   --concurrency LIST  comma-separated thread counts (default 1,8,64); each thread runs
#                       400/C turns (at least 4)
#
# Needs PostgreSQL at DATABASE_SERVER (default postgres://postgres@127.0.0.1:5432; the databases
# graph_bench_pg_rs and graph_bench_pg_py are dropped and recreated first) and the Python peer
# (scripts/python-peer.sh, run here when LANGGRAPH_PYTHON is not set).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3 turns=200 concurrency="1,8,64"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift ;;
    --turns) turns=$2; shift ;;
    --concurrency) concurrency=$2; shift ;;
    *) sed -n '2,19p' "$0"; exit 2 ;;
  esac
  shift
done

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}"
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
server=${DATABASE_SERVER:-postgres://postgres@127.0.0.1:5432}
python=${LANGGRAPH_PYTHON:-$(bash scripts/python-peer.sh)}
out="$CARGO_TARGET_DIR/bench-postgres/$(date -u +%Y%m%d-%H%M%S)"
mkdir -p "$out"
results="$out/results.jsonl"

cargo build --release -q -p mnemograph-checkpoint-postgres --example postgres_turns
rust_bin="$CARGO_TARGET_DIR/release/examples/postgres_turns"
for db in graph_bench_pg_rs graph_bench_pg_py; do
  psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db" >/dev/null
done

rust() { DATABASE_URL="$server/graph_bench_pg_rs" "$rust_bin" "$@"; }
py() { DATABASE_URL="$server/graph_bench_pg_py" "$python" benches/python/pg_bench.py "$@"; }
# Runs one workload on both sides, in the round's order, tagging each line with the round.
both() { # round, arguments...
  local round=$1 side
  shift
  local order=(rust py)
  [ $((round % 2)) = 0 ] && order=(py rust)
  for side in "${order[@]}"; do
    "$side" "$@" | sed "s/^{/{\"round\": $round, /" >>"$results"
  done
}

{
  echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with uncommitted changes)')"
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "server: $(psql "$server/postgres" -Atc 'SHOW server_version')"
} | tee "$out/run.txt"

for round in $(seq 1 "$rounds"); do
  echo "== round $round"
  rust commit 200 | sed "s/^{/{\"round\": $round, /" >>"$results"
  both "$round" chat "$turns"
  for c in ${concurrency//,/ }; do
    t=$((400 / c)); [ "$t" -lt 4 ] && t=4
    both "$round" concurrent "$c" "$t"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/run.txt"

python3 - "$results" <<'PY' | tee "$out/table.md"
import json, statistics, sys
from collections import defaultdict

lines = [json.loads(l) for l in open(sys.argv[1])]
# (workload, concurrency, impl) -> {round: line}
by = defaultdict(dict)
for l in lines:
    by[(l["workload"], l.get("concurrency"), l["impl"])][l["round"]] = l

def spread(xs, unit, digits):
    m = statistics.median(xs)
    return f"{m:,.{digits}f} {unit} ({min(xs):,.{digits}f}–{max(xs):,.{digits}f})"

def row(name, key, figure, unit, digits, python_over_rust):
    rust, py = by[key + ("rust",)], by[key + ("python",)]
    if not rust:
        return
    r = [figure(l) for l in rust.values()]
    p = [figure(l) for l in py.values()]
    # The ratio of each round, then their median: both sides ran back to back in it.
    ratios = [
        (figure(py[k]) / figure(rust[k])) if python_over_rust else (figure(rust[k]) / figure(py[k]))
        for k in rust if k in py
    ]
    ratio = spread(ratios, "×", 1) if ratios else ""
    print(f"| {name} | {spread(r, unit, digits)} | {spread(p, unit, digits) if p else '–'} | {ratio} |")

print("| workload | Rust | Python | ratio (per round, median) |")
print("|---|---|---|---|")
chat = ("chat_postgres", None)
if by[chat + ("rust",)]:
    turns = next(iter(by[chat + ("rust",)].values()))["turns"]
    row(f"chat turn, mean of {turns} (Python / Rust)", chat, lambda l: l["us"] / 1e3, "ms", 2, True)
    row("chat turn, median (Python / Rust)", chat, lambda l: l["us_median"] / 1e3, "ms", 2, True)
    row(f"thread size after {turns} turns", chat, lambda l: l["thread_bytes"] / 1e6, "MB", 3, True)
for c in sorted({k[1] for k in by if k[0] == "concurrent/postgres"}):
    key = ("concurrent/postgres", c)
    each = next(iter(by[key + ("rust",)].values()))["turns"] // c
    row(f"{c} threads at once, {each} turns each (Rust / Python)", key, lambda l: l["turns_per_s"], "turns/s", 0, False)
commits = [l["us_median"] / 1e3 for l in lines if l["workload"] == "postgres_commit"]
if commits:
    print(f"| one durable commit (reference) | {spread(commits, 'ms', 2)} | | |")
PY
echo "results: $out"

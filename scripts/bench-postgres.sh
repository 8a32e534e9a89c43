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

cargo build --release -q -p mnemograph-checkpoint-postgres --example chat_turns
rust_bin="$CARGO_TARGET_DIR/release/examples/chat_turns"
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
by = defaultdict(list)
for l in lines:
    key = (l["workload"], l.get("concurrency"), l["impl"])
    by[key].append(l)

def med(xs):
    return statistics.median(xs), min(xs), max(xs)

def fmt(v, unit, digits=2):
    m, lo, hi = v
    return f"{m:,.{digits}f} {unit} ({lo:,.{digits}f}–{hi:,.{digits}f})"

print("| workload | Rust | Python | Python / Rust |")
print("|---|---|---|---|")
rust, py = by[("chat_postgres", None, "rust")], by[("chat_postgres", None, "python")]
if rust and py:
    r, p = med([l["us"] / 1e3 for l in rust]), med([l["us"] / 1e3 for l in py])
    print(f"| chat turn, mean of {rust[0]['turns']} | {fmt(r, 'ms')} | {fmt(p, 'ms')} | {p[0] / r[0]:.1f}× |")
    r, p = med([l["us_median"] / 1e3 for l in rust]), med([l["us_median"] / 1e3 for l in py])
    print(f"| chat turn, median | {fmt(r, 'ms')} | {fmt(p, 'ms')} | {p[0] / r[0]:.1f}× |")
    print(f"| thread size after {rust[0]['turns']} turns | {rust[0]['thread_bytes']:,} B | {py[0]['thread_bytes']:,} B | |")
for (workload, c, impl), rows in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
    if workload != "concurrent/postgres" or impl != "rust":
        continue
    py = by[(workload, c, "python")]
    r = med([l["turns_per_s"] for l in rows])
    p = med([l["turns_per_s"] for l in py]) if py else None
    ratio = f"{r[0] / p[0]:.1f}× more turns/s" if p else ""
    ptxt = fmt(p, "turns/s", 0) if p else "–"
    print(f"| {c} threads at once ({rows[0]['turns'] // c} turns each) | {fmt(r, 'turns/s', 0)} | {ptxt} | {ratio} |")
commits = [l["us_median"] / 1e3 for l in lines if l["workload"] == "postgres_commit"]
if commits:
    print(f"| one durable commit (reference) | {fmt(med(commits), 'ms')} | | |")
PY
echo "results: $out"

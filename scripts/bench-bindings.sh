#!/usr/bin/env bash
# Python LangGraph graphs on our savers through the bindings, side by side with Python's own:
# chat turns with every checkpoint durable (benches/python/saver_bench.py), on MySQL against
# LangGraph's PyMySQLSaver (sync) and AIOMySQLSaver (async), on Redis against
# langgraph-checkpoint-plainredis, in memory against LangGraph's InMemorySaver. Builds the wheel
# in release mode first and installs it into the Python peer venv. In each round every pair runs
# back to back, ours first in odd rounds and Python's first in even ones; then the savers alone
# (`--workload ops`: put, put_writes, get_tuple without the engine) the same way. Prints the
# tables (benches/python/saver_table.py) and writes the raw lines and the exact commands.
#
# Usage: scripts/bench-bindings.sh [--rounds N] [--turns N] [--out DIR]
#   --rounds N  rounds (default 5)     --turns N  timed turns (and operation rounds) per run
#                                                (default 200)
#   --out DIR   where the figures go (default $CARGO_TARGET_DIR/bench-bindings/DATE)
# Needs MySQL or MariaDB at MYSQL_URL's server (default mysql://root@127.0.0.1:3306; databases
# graph_bench_bindings_py and graph_bench_bindings_rs are dropped and recreated) and Redis at
# REDIS_URL (default redis://127.0.0.1:6379/).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=5 turns=200 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift ;;
    --turns) turns=$2; shift ;;
    --out) out=$2; shift ;;
    *) sed -n '2,17p' "$0"; exit 2 ;;
  esac
  shift
done
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}
export MYSQL_URL=${MYSQL_URL:-mysql://root@127.0.0.1:3306/graph_bench}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/}
out=${out:-$CARGO_TARGET_DIR/bench-bindings/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
results=$out/results.jsonl commands=$out/commands.txt
: > "$results"
: > "$commands"
log() { echo "$(date +%T) $*" >&2; }
run() { grep -qxF -- "$*" "$commands" || echo "$*" >> "$commands"; "$@"; }

log "building the wheel (release)…"
echo "bash scripts/python-bindings.sh --release" >> "$commands"
PY=$(bash scripts/python-bindings.sh --release)

for r in $(seq 1 "$rounds"); do
  for mode in sync async; do
    for pair in "pymysql mnemograph-mysql" "plainredis mnemograph-redis" "memory mnemograph-memory"; do
      read -r theirs ours <<< "$pair"
      order=("$ours" "$theirs")
      [ $((r % 2)) = 0 ] && order=("$theirs" "$ours")
      for saver in "${order[@]}"; do
        log "round $r/$rounds: $saver ($mode)"
        run "$PY" benches/python/saver_bench.py "$saver" "$turns" --mode "$mode" >> "$results"
        run "$PY" benches/python/saver_bench.py "$saver" "$turns" --mode "$mode" --workload ops >> "$results"
      done
    done
  done
done

{
  echo "Python LangGraph chat turns (durable), $rounds rounds x $turns turns, $(date -u +%Y-%m-%d), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  "$PY" benches/python/saver_table.py "$results"
} | tee "$out/table.md"
echo "figures in $out" >&2

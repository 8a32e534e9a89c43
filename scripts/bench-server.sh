#!/usr/bin/env bash
# Concurrent streaming runs on one server process: mnemograph-server (examples/serve.rs) and
# Python's own LangGraph server (`langgraph dev`, the peer venv's pinned langgraph-cli[inmem])
# serving the same two graphs (tests/python/graphs.py), driven by the same client
# (examples/load.rs): RUNS concurrent runs, each streaming on its own thread, ROUNDS times per
# graph. `chain` is two trivial nodes (the server's own cost); `pause` is one node waiting
# 50 ms, as a model call would. Python's server gets as many concurrent jobs as there are runs
# (its default is 10).
#
# Usage: scripts/bench-server.sh [--runs N] [--rounds R]   (defaults 100 and 5)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=100 rounds=5
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    *) sed -n '2,11p' "$0"; exit 2 ;;
  esac
  shift
done
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}
python=$(bash scripts/python-peer.sh)
cargo build -q --release -p mnemograph-server --examples
bin=$CARGO_TARGET_DIR/release/examples
free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_ok() { for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$1/ok" >/dev/null && return 0; sleep 0.5; done; echo "no server on $1" >&2; return 1; }
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

rust_port=$(free_port)
env -u MYSQL_URL "$bin/serve" "127.0.0.1:$rust_port" > "$work/rust.log" 2>&1 & pids+=($!)
cp crates/mnemograph-server/tests/python/{graphs.py,langgraph.json} "$work/"
py_port=$(free_port)
(cd "$work" && LANGSMITH_TRACING=false LANGGRAPH_CLI_NO_ANALYTICS=1 exec "$(dirname "$python")/langgraph" dev \
  --host 127.0.0.1 --port "$py_port" --no-browser --no-reload --n-jobs-per-worker "$runs" \
  --server-log-level warning > "$work/python.log" 2>&1) & pids+=($!)
wait_ok "$rust_port"
wait_ok "$py_port"

echo "load: $(uptime | sed 's/.*load average/load average/')"
for graph in chain pause; do
  for server in mnemograph:$rust_port python:$py_port; do
    name=${server%%:*} port=${server##*:}
    "$bin/load" "http://127.0.0.1:$port" "$graph" "$runs" "$rounds" > "$work/$name-$graph.jsonl"
  done
done
"$python" - "$work" "$runs" <<'PY'
import json, statistics, sys
work, runs = sys.argv[1], sys.argv[2]
print(f"{runs} concurrent streaming runs per round; medians over rounds")
print(f"{'graph':8} {'server':11} {'runs/s':>8} {'first p50':>10} {'first p99':>10} {'end p99':>9} {'failed':>6}")
for graph in ("chain", "pause"):
    for name in ("mnemograph", "python"):
        rows = [json.loads(l) for l in open(f"{work}/{name}-{graph}.jsonl")]
        med = lambda f: statistics.median(f(r) for r in rows)
        print(f"{graph:8} {name:11} {med(lambda r: r['runs_per_s']):8.1f} "
              f"{med(lambda r: r['first_event_ms']['p50']):8.1f}ms {med(lambda r: r['first_event_ms']['p99']):8.1f}ms "
              f"{med(lambda r: r['total_ms']['p99']):7.1f}ms {sum(r['failures'] for r in rows):6}")
PY
echo "load: $(uptime | sed 's/.*load average/load average/')"

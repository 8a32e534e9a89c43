#!/usr/bin/env bash
# Concurrent streaming runs: mnemograph-server (examples/serve) as one process in memory, as
# one process on the MySQL saver, and as a cluster of three processes (mnemograph-server-cluster's
# examples/serve_cluster.rs: MySQL saver, queue and records; Redis for events), against Python's
# own LangGraph server (`langgraph dev`, the peer venv's pinned langgraph-cli[inmem]) serving the same two graphs (tests/python/graphs.py), all
# driven by the same client (examples/load.rs): RUNS concurrent runs, each streaming on its own
# thread, ROUNDS times per graph; against the cluster, run i goes to process i mod 3. `chain` is
# two trivial nodes (the server's own cost); `pause` is one node waiting 50 ms, as a model call
# would. Python's server gets as many concurrent jobs as there are runs (its default is 10).
#
# Needs MariaDB/MySQL at 127.0.0.1:3306 (root, no password; the database graph_bench_server is
# dropped and recreated) and Redis at REDIS_URL (default redis://127.0.0.1:6379/).
#
# Usage: scripts/bench-server.sh [--runs N] [--rounds R]   (defaults 100 and 5)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=100 rounds=5
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    *) sed -n '2,15p' "$0"; exit 2 ;;
  esac
  shift
done
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}
python=$(bash scripts/python-peer.sh)
cargo build -q --release -p mnemograph-server --examples
cargo build -q --release -p mnemograph-server-cluster --example serve_cluster
bin=$CARGO_TARGET_DIR/release/examples
free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_ok() { for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$1/ok" >/dev/null && return 0; sleep 0.5; done; echo "no server on $1" >&2; return 1; }
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

rust_port=$(free_port)
env -u MYSQL_URL "$bin/serve" "127.0.0.1:$rust_port" > "$work/rust.log" 2>&1 & pids+=($!)
db=graph_bench_server
mysql -uroot -h127.0.0.1 -P3306 -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db CHARACTER SET utf8mb4"
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/}
mysql_port=$(free_port)
MYSQL_URL=mysql://root@127.0.0.1:3306/$db "$bin/serve" "127.0.0.1:$mysql_port" > "$work/mysql.log" 2>&1 & pids+=($!)
cluster_urls=()
wait_ok "$mysql_port"  # the first process creates the tables; the cluster's processes start after it
for n in 1 2 3; do
  port=$(free_port)
  MYSQL_URL=mysql://root@127.0.0.1:3306/$db "$bin/serve_cluster" "127.0.0.1:$port" > "$work/cluster$n.log" 2>&1 & pids+=($!)
  cluster_urls+=("http://127.0.0.1:$port")
  wait_ok "$port"
done
cluster=$(IFS=,; echo "${cluster_urls[*]}")
cp crates/mnemograph-server/tests/python/{graphs.py,langgraph.json} "$work/"
py_port=$(free_port)
(cd "$work" && LANGSMITH_TRACING=false LANGGRAPH_CLI_NO_ANALYTICS=1 exec "$(dirname "$python")/langgraph" dev \
  --host 127.0.0.1 --port "$py_port" --no-browser --no-reload --n-jobs-per-worker "$runs" \
  --server-log-level warning > "$work/python.log" 2>&1) & pids+=($!)
wait_ok "$rust_port"
wait_ok "$py_port"

echo "load: $(uptime | sed 's/.*load average/load average/')"
for graph in chain pause; do
  for server in mnemograph=http://127.0.0.1:$rust_port mysql=http://127.0.0.1:$mysql_port \
                cluster=$cluster python=http://127.0.0.1:$py_port; do
    name=${server%%=*} urls=${server#*=}
    "$bin/load" "$urls" "$graph" "$runs" "$rounds" > "$work/$name-$graph.jsonl"
  done
done
"$python" - "$work" "$runs" <<'PY'
import json, statistics, sys
work, runs = sys.argv[1], sys.argv[2]
print(f"{runs} concurrent streaming runs per round; medians over rounds")
names = {"mnemograph": "mnemograph, 1 process, memory", "mysql": "mnemograph, 1 process, MySQL",
         "cluster": "mnemograph, 3 processes, cluster", "python": "langgraph dev (Python)"}
print(f"{'graph':8} {'server':34} {'runs/s':>8} {'first p50':>10} {'first p99':>10} {'end p99':>9} {'failed':>6}")
for graph in ("chain", "pause"):
    for name in names:
        rows = [json.loads(l) for l in open(f"{work}/{name}-{graph}.jsonl")]
        med = lambda f: statistics.median(f(r) for r in rows)
        print(f"{graph:8} {names[name]:34} {med(lambda r: r['runs_per_s']):8.1f} "
              f"{med(lambda r: r['first_event_ms']['p50']):8.1f}ms {med(lambda r: r['first_event_ms']['p99']):8.1f}ms "
              f"{med(lambda r: r['total_ms']['p99']):7.1f}ms {sum(r['failures'] for r in rows):6}")
PY
echo "load: $(uptime | sed 's/.*load average/load average/')"

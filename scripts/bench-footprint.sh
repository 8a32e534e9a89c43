#!/usr/bin/env bash
# Resident memory: (1) THREADS live threads of 10 echo-chat turns in the in-memory saver, Rust
# (crates/mnemograph-core/examples/footprint.rs) and Python LangGraph's InMemorySaver
# (benches/python/lg_bench.py footprint); (2) a server process holding 1,000 idle threads, each
# after one run of the `chain` graph: mnemograph-server (examples/serve) on the in-memory saver
# and on MySQL (the saver's read caches at their defaults), and Python's `langgraph dev`.
#
# Usage: scripts/bench-footprint.sh [--threads N] [--idle M]   (defaults 10000 and 1000)
# MySQL comes from MYSQL_URL's server (default mysql://root@127.0.0.1:3306/), database
# graph_footprint, created when missing and emptied first; without MySQL that server is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
threads=10000 idle=1000
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift ;;
    --idle) idle=$2; shift ;;
    *) sed -n '2,10p' "$0"; exit 2 ;;
  esac
  shift
done
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}
python=$(bash scripts/python-peer.sh)
cargo build -q --release -p mnemograph-core --example footprint
cargo build -q --release -p mnemograph-server --examples
bin=$CARGO_TARGET_DIR/release/examples

echo "== $threads live threads x 10 turns, in-memory saver"
"$bin/footprint" "$threads" 10
"$python" benches/python/lg_bench.py footprint "$threads" --turns 10

rss_of() { awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$1/status"; }
free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_ok() { for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$1/ok" >/dev/null && return 0; sleep 0.5; done; return 1; }
# Prints the server's RSS at start and after $idle threads each ran `chain` once, then stops it.
measure() { # name pid port
  local name=$1 pid=$2 port=$3
  wait_ok "$port"
  local before; before=$(rss_of "$pid")
  "$bin/load" "http://127.0.0.1:$port" chain "$idle" 1 > /dev/null
  sleep 1
  local after; after=$(rss_of "$pid")
  "$python" -c "import json; print(json.dumps({'server': '$name', 'idle_threads': $idle, 'rss_start': $before, 'rss_idle': $after, 'bytes_per_thread': ($after - $before) / $idle}))"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

echo "== a server process holding $idle idle threads"
port=$(free_port)
env -u MYSQL_URL "$bin/serve" "127.0.0.1:$port" > /dev/null 2>&1 &
measure mnemograph-memory $! "$port"

server=${MYSQL_URL:-mysql://root@127.0.0.1:3306/graph_test}
server=${server%/*}
mysql_db="$server/graph_footprint"
# Without a MySQL server the other two servers are still measured.
if "$python" - "$server" <<'PY'
import sys, urllib.parse, pymysql
u = urllib.parse.urlparse(sys.argv[1])
c = pymysql.connect(host=u.hostname, port=u.port or 3306, user=u.username or "root", password=u.password or "")
c.cursor().execute("DROP DATABASE IF EXISTS graph_footprint")
c.cursor().execute("CREATE DATABASE graph_footprint CHARACTER SET utf8mb4")
PY
then
  port=$(free_port)
  MYSQL_URL=$mysql_db "$bin/serve" "127.0.0.1:$port" > /dev/null 2>&1 &
  measure mnemograph-mysql $! "$port"
else
  echo "MySQL at $server is unreachable: the MySQL server is skipped" >&2
fi

work=$(mktemp -d)
cp crates/mnemograph-server/tests/python/{graphs.py,langgraph.json} "$work/"
port=$(free_port)
(cd "$work" && LANGSMITH_TRACING=false LANGGRAPH_CLI_NO_ANALYTICS=1 exec "$(dirname "$python")/langgraph" dev \
  --host 127.0.0.1 --port "$port" --no-browser --no-reload --n-jobs-per-worker 100 \
  --server-log-level warning > "$work/python.log" 2>&1) &
measure python-langgraph-dev $! "$port"
rm -rf "$work"

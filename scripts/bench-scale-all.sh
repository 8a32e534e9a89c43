#!/usr/bin/env bash
# Every scale workload in one run, each through its own script, and one combined table of the
# figures against their targets (benches/python/scale_table.py):
#   cpu_step      parallel supersteps: scripts/bench.sh --only cpu_step
#   concurrent    many threads at once: scripts/bench-scale.sh
#   long_threads  one MySQL thread of 1,000 turns, Rust plain and delta against Python:
#                 chat_turns --at=10,100,1000 and lg_bench.py chat_mysql --at 10,100,1000
#   footprint     resident memory of live and idle threads: scripts/bench-footprint.sh
#   milvus        retrieval on Milvus Lite against pymilvus: scripts/bench-milvus.sh
# The workloads run one after another, never two at once, since each measures the machine.
#
# Usage: scripts/bench-scale-all.sh [--quick] [--only LIST] [--out DIR]
#   --quick      each script's quick option (about 4 minutes on 2 cores, plus the first build;
#                the full run takes about 25)
#   --only LIST  comma-separated workloads out of: cpu_step,concurrent,long_threads,footprint,milvus
#   --out DIR    where everything goes (default $CARGO_TARGET_DIR/bench-scale-all/DATE): each
#                workload's figures and log under DIR/WORKLOAD, and table.md, commands.txt,
#                machine.txt and summary.md (all of them together)
#
# Needs MySQL or MariaDB at MYSQL_SERVER (default mysql://root@127.0.0.1:3306; the scripts drop
# and recreate graph_scale_rs, graph_scale_py and graph_footprint, this one graph_long_rs and
# graph_long_py), Redis at REDIS_URL (default redis://127.0.0.1:6379/) and Milvus Lite
# (scripts/milvus-lite.sh installs it once). A workload or saver whose service is unreachable is
# a "skipped" row of the table, with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0 only="cpu_step,concurrent,long_threads,footprint,milvus" out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --only) only=$2; shift ;;
    --out) out=$2; shift ;;
    *) sed -n '2,25p' "$0"; exit 2 ;;
  esac
  shift
done
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}
export MYSQL_SERVER=${MYSQL_SERVER:-mysql://root@127.0.0.1:3306}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/}
out=${out:-$CARGO_TARGET_DIR/bench-scale-all/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
# Absolute: the scripts run from the repository root, whatever the caller's directory.
out=$(cd "$out" && pwd)
commands=$out/commands.txt
: > "$commands"
: > "$out/status.jsonl"
wanted() { [[ ",$only," == *",$1,"* ]]; }
log() { echo "$(date +%T) $*" >&2; }
# Runs a command and records it in commands.txt.
run() { echo "$*" >> "$commands"; "$@"; }

PY=$(bash scripts/python-peer.sh)
status() { "$PY" benches/python/scale_table.py status "$@" >> "$out/status.jsonl"; }

mysql_up() {
  "$PY" - "$MYSQL_SERVER" <<'EOF' >/dev/null 2>&1
import sys
from urllib.parse import urlparse
import pymysql
u = urlparse(sys.argv[1])
pymysql.connect(host=u.hostname, port=u.port or 3306, user=u.username, password=u.password or "").close()
EOF
}
redis_up() {
  local host
  host=$("$PY" -c 'import sys; from urllib.parse import urlparse; u = urlparse(sys.argv[1]); print(u.hostname, u.port or 6379)' "$REDIS_URL")
  redis-cli -h "${host% *}" -p "${host#* }" ping >/dev/null 2>&1
}

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  dirty=$(git diff --quiet HEAD -- crates tests benches scripts Cargo.lock || echo ' (with uncommitted changes)')
  echo "commit: $(git rev-parse --short HEAD)$dirty"
  echo "mode: $([ $quick = 1 ] && echo quick || echo full)"
  echo "nproc: $(nproc), cpu:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(awk '/^MemTotal:/ { printf "%.0f GB RAM", $2 / 1048576 }' /proc/meminfo)"
  echo "kernel: $(uname -r)"
  echo "rustc: $(rustc -V)"
  echo "python: $("$PY" -c 'import sys; print(sys.version.split()[0])')"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/machine.txt"

# Runs one workload: NAME LOG COMMAND...; records its start, duration, load average and status.
workload() {
  local name=$1 logf=$2; shift 2
  local started load t0 rc=0
  started=$(date -u +%H:%M:%S) load=$(cut -d' ' -f1-3 /proc/loadavg) t0=$(date +%s)
  log "$name…"
  "$@" > "$logf" 2>&1 || rc=$?
  local took=$(( $(date +%s) - t0 ))
  if [ $rc = 0 ]; then
    status "$name" ok "" "started=$started" "seconds=$took" "load=$load"
  else
    log "$name failed (exit $rc), see $logf"
    status "$name" failed "exit $rc, see ${logf#"$out"/}" "started=$started" "seconds=$took" "load=$load"
  fi
}

cpu_step() {
  local args=(--only cpu_step --out "$out/cpu_step")
  [ $quick = 1 ] && args+=(--quick)
  run bash scripts/bench.sh "${args[@]}"
}

concurrent() {
  local args=(--out "$out/concurrent")
  [ $quick = 1 ] && args+=(--quick)
  run bash scripts/bench-scale.sh "${args[@]}"
}

# The three commands of docs/benchmarks/long-threads.md, each on a database of its own,
# dropped first, so that every run starts from empty tables.
long_threads() {
  local dir=$out/long_threads turns at
  if [ $quick = 1 ]; then turns=200 at=10,100,200; else turns=1000 at=10,100,1000; fi
  mkdir -p "$dir"
  "$PY" - "$MYSQL_SERVER" <<'EOF'
import sys
from urllib.parse import urlparse
import pymysql
u = urlparse(sys.argv[1])
c = pymysql.connect(host=u.hostname, port=u.port or 3306, user=u.username, password=u.password or "")
with c.cursor() as cur:
    for db in ("graph_long_rs", "graph_long_py"):
        cur.execute(f"DROP DATABASE IF EXISTS `{db}`")
EOF
  # Built first, so that the build's output and time stay out of the runs.
  run cargo build --release -p mnemograph-checkpoint-mysql --example chat_turns
  run env MYSQL_URL="$MYSQL_SERVER/graph_long_rs" \
    cargo run -q --release -p mnemograph-checkpoint-mysql --example chat_turns -- "$turns" --at="$at" \
    > "$dir/plain.jsonl"
  run env MYSQL_URL="$MYSQL_SERVER/graph_long_rs" \
    cargo run -q --release -p mnemograph-checkpoint-mysql --example chat_turns -- "$turns" --delta --at="$at" \
    > "$dir/delta.jsonl"
  run env MYSQL_URL="$MYSQL_SERVER/graph_long_py" "$PY" benches/python/lg_bench.py chat_mysql "$turns" --at "$at" \
    > "$dir/python.jsonl"
}

footprint() {
  local args=()
  [ $quick = 1 ] && args=(--threads 1000 --idle 100)
  mkdir -p "$out/footprint"
  run env MYSQL_URL="$MYSQL_SERVER/graph_footprint" bash scripts/bench-footprint.sh "${args[@]}" \
    > "$out/footprint/output.txt"
}

milvus() {
  local args=(--out "$out/milvus")
  [ $quick = 1 ] && args+=(--sizes 10000 --queries 50 --scoped 20 --rounds 2)
  run bash scripts/bench-milvus.sh "${args[@]}"
}

start=$(date +%s)
for name in cpu_step concurrent long_threads footprint milvus; do
  wanted $name || status $name skipped "not in --only $only"
done
if wanted cpu_step; then
  workload cpu_step "$out/cpu_step.log" cpu_step
fi
if wanted concurrent; then
  # bench-scale.sh skips a saver whose server is unreachable; the table says which and why.
  mysql_up || status concurrent/mysql skipped "MySQL at $MYSQL_SERVER is unreachable"
  redis_up || status concurrent/redis skipped "Redis at $REDIS_URL is unreachable"
  workload concurrent "$out/concurrent.log" concurrent
fi
if wanted long_threads; then
  if mysql_up; then
    workload long_threads "$out/long_threads.log" long_threads
  else
    status long_threads skipped "MySQL at $MYSQL_SERVER is unreachable"
  fi
fi
if wanted footprint; then
  # Its MySQL server comes last in the script: without MySQL the in-memory figures still come.
  mysql_up || status footprint/mysql skipped "MySQL at $MYSQL_SERVER is unreachable"
  workload footprint "$out/footprint.log" footprint
fi
if wanted milvus; then
  # Milvus Lite is a Python package run as a server on loopback: it is missing when it cannot be
  # installed or started here, which bench-milvus.sh would only report by failing.
  port=19562
  if bash scripts/milvus-lite.sh "$port" > "$out/milvus-probe.log" 2>&1; then
    bash scripts/milvus-lite.sh stop "$port" >> "$out/milvus-probe.log" 2>&1
    workload milvus "$out/milvus.log" milvus
  else
    status milvus skipped "Milvus Lite did not start: $(grep 'milvus-lite:' "$out/milvus-probe.log" | tail -1)"
  fi
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
echo "wall time: $(( $(date +%s) - start )) s" >> "$out/machine.txt"

"$PY" benches/python/scale_table.py table "$out" > "$out/table.md"
. scripts/bench-summary.sh
write_summary "$out" "$commands" "$PY" "Figures and logs: $out"

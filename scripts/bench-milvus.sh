#!/usr/bin/env bash
# Retrieval latency on Milvus Lite: MilvusMemory (examples/latency.rs) against pymilvus
# (examples/latency_pymilvus.py) doing the same searches on the same collection: dense, and dense
# + BM25 hybrid fused by the server in one `HybridSearch` (the crate also times its client-side
# fusion, two searches), with the crate's filter (the user's memories that are not retired:
# `retired == false` on a collection with the flag, the JSON clause on one without, pymilvus
# choosing as the crate does); pymilvus also with the user filter alone. For each size, one
# collection of ROWS memories of 1,000 users is loaded by the Rust example, left to settle (Milvus
# Lite compacts and builds indexes in the background after a bulk load, and searches timed
# meanwhile are slower), then Rust and pymilvus alternate for ROUNDS rounds of QUERIES retrievals
# per mode with the user filter alone and SCOPED per mode with the crate's default scope (keep
# SCOPED small when timing a build whose scope is the JSON clause: Milvus Lite takes seconds per
# search with it at 100k). Prints a Markdown table of p50 / p99 in ms.
#
# Usage: scripts/bench-milvus.sh [--sizes 10000,100000] [--queries 200] [--scoped 20] [--rounds 2]
#                                [--port 19562] [--out DIR]
# The server gets its own port and data dir, stopped and removed at the end. With --out, the
# load and timing logs (load-ROWS.log, times-ROWS.log) stay in DIR, for scripts/bench-scale-all.sh
# to read; without it they go to a temporary dir that is removed.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=10000,100000 queries=200 scoped=20 rounds=2 port=19562 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes=$2; shift ;;
    --queries) queries=$2; shift ;;
    --scoped) scoped=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --port) port=$2; shift ;;
    --out) out=$2; shift ;;
    *) sed -n '2,19p' "$0"; exit 2 ;;
  esac
  shift
done
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}
milvus_home=${MILVUS_HOME:-$HOME/.cache/graph-rs-milvus}
python=$milvus_home/venv/bin/python
data=$milvus_home/data-$port
rm -rf "$data"
url=$(bash scripts/milvus-lite.sh "$port")
trap 'bash scripts/milvus-lite.sh stop "$port" >/dev/null 2>&1 || true; rm -rf "$data"' EXIT
cargo build -q --release -p mnemograph-memory-milvus --example latency
bin=$CARGO_TARGET_DIR/release/examples/latency
peer=crates/mnemograph-memory-milvus/examples/latency_pymilvus.py
if [ -n "$out" ]; then mkdir -p "$out"; work=$out; else work=$(mktemp -d); fi

# Seconds since anything under the data dir last changed.
quiet_for() { echo $(( $(date +%s) - $(find "$data" -type f -printf '%T@\n' | sort -n | tail -1 | cut -d. -f1) )); }

echo "uptime before: $(uptime)"
for rows in ${sizes//,/ }; do
  started=$(date +%s)
  MILVUS_URL=$url "$bin" "$rows" 0 > "$work/load-$rows.log"
  collection=$(sed -n 's/^collection \([^:]*\):.*/\1/p' "$work/load-$rows.log")
  sed -n '1,3p' "$work/load-$rows.log"
  # Settled: nothing written for 30 s (at most 5 minutes).
  for _ in $(seq 1 300); do [ "$(quiet_for)" -ge 30 ] && break; sleep 1; done
  echo "$rows rows: loaded and settled in $(( $(date +%s) - started )) s (collection $collection)"
  : > "$work/times-$rows.log"
  for r in $(seq 1 "$rounds"); do
    echo "round $r, load: $(cut -d' ' -f1-3 /proc/loadavg)"
    # Odd rounds start with Rust, even ones with pymilvus.
    if [ $((r % 2)) = 1 ]; then order="rust py"; else order="py rust"; fi
    for side in $order; do
      if [ "$side" = rust ]; then
        MILVUS_URL=$url "$bin" query "$collection" "$scoped" scope
        MILVUS_URL=$url "$bin" query "$collection" "$queries" user
      else
        "$python" "$peer" "$url" "$collection" "$scoped" dense,hybrid
        "$python" "$peer" "$url" "$collection" "$queries" dense-user,hybrid-user
      fi
    done | tee -a "$work/times-$rows.log" | sed "s/^/  /"
  done
  MILVUS_URL=$url "$bin" drop "$collection"
done
echo "uptime after: $(uptime)"

# One row per size, client and filter, each cell `p50 / p99` per round.
echo "| memories | client, filter | dense p50 / p99 ms | hybrid, server-fused (one HybridSearch) | hybrid, client-fused (two searches) |"
echo "|---|---|---|---|---|"
for rows in ${sizes//,/ }; do
  for side in rust pymilvus; do
    for filter in "" " (user filter only)"; do
      scope="default scope"
      [ -n "$filter" ] && scope="user filter only"
      cells=()
      for label in "dense" "hybrid, server-fused" "hybrid, client-fused"; do
        cell=$( { grep -F "$side $label$filter:" "$work/times-$rows.log" || true; } | sed 's/.*p50 \([0-9.]*\) ms, p99 \([0-9.]*\) ms/\1 \/ \2/' | paste -sd ';' | sed 's/;/; /g')
        cells+=("${cell:-—}")
      done
      echo "| $rows | $side, $scope | ${cells[0]} | ${cells[1]} | ${cells[2]} |"
    done
  done
done
[ -n "$out" ] || rm -rf "$work"

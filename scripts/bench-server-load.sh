#!/usr/bin/env bash
# The server's memory under load and after it: mnemograph-server (examples/serve, release, the
# in-memory saver, no authentication, on loopback) serving RUNS concurrent streaming runs of its
# `talk` graph, whose one node streams a reply of TOKENS tokens as message chunks, through
# LangGraph's Python SDK (scripts/bench-server-load.py: every run started at once, every stream
# read to its end and its reply checked token for token). The server's VmRSS and VmHWM are read
# from /proc every 0.2 s; the table gives RSS at start, the peak, RSS right after the load, after
# the run and event retention (RETENTION seconds, swept every SWEEP seconds) with the threads
# still held, and after the client deleted the threads.
#
# Fails when a run fails, when the peak exceeds --max-peak-mib, when RSS after the retention
# (the threads still held) is more than --held-margin-mib above RSS at start, or when RSS after
# the threads are deleted is more than --idle-margin-mib above it.
#
# Usage: scripts/bench-server-load.sh [--runs N] [--tokens T] [--mode messages-tuple|messages]
#          [--retention S] [--sweep S] [--max-peak-mib M] [--held-margin-mib M]
#          [--idle-margin-mib M] [--log-bytes B]
#        (defaults 1000, 2000, messages-tuple, 60, 2, 1280, 192, 48; B: the server's default, 1 MiB)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=1000 tokens=2000 mode=messages-tuple retention=60 sweep=2 max_peak=1280 held_margin=192 idle_margin=48 log_bytes=
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift ;;
    --tokens) tokens=$2; shift ;;
    --mode) mode=$2; shift ;;
    --retention) retention=$2; shift ;;
    --sweep) sweep=$2; shift ;;
    --max-peak-mib) max_peak=$2; shift ;;
    --held-margin-mib) held_margin=$2; shift ;;
    --idle-margin-mib) idle_margin=$2; shift ;;
    --log-bytes) log_bytes=$2; shift ;;
    *) sed -n '2,18p' "$0"; exit 2 ;;
  esac
  shift
done
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}
python=$(bash scripts/python-peer.sh)
cargo build -q --release -p mnemograph-server --example serve
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
env ${log_bytes:+EVENT_LOG_BYTES=$log_bytes} TALK_TOKENS=$tokens RUN_RETENTION_SECS=$retention EVENT_RETENTION_SECS=$retention SWEEP_SECS=$sweep \
  "$CARGO_TARGET_DIR/release/examples/serve" "127.0.0.1:$port" > "$work/serve.log" 2>&1 & server=$!
pids+=("$server")
url=http://127.0.0.1:$port
for _ in $(seq 1 100); do curl -sf "$url/ok" >/dev/null && break; sleep 0.2; done
curl -sf "$url/ok" >/dev/null || { cat "$work/serve.log"; echo "no server on $port" >&2; exit 1; }

# One line per 0.2 s: seconds since the epoch, VmRSS and VmHWM in KiB.
(while [ -r "/proc/$server/status" ]; do
   awk -v t="$(date +%s.%N)" '/^VmRSS/ {r = $2} /^VmHWM/ {h = $2} END {print t, r, h}' "/proc/$server/status"
   sleep 0.2
 done) > "$work/rss.log" 2>/dev/null & pids+=($!)
rss() { awk '/^VmRSS/ {print $2}' "/proc/$server/status"; }
hwm() { awk '/^VmHWM/ {print $2}' "/proc/$server/status"; }

sleep 1
start_rss=$(rss)
echo "load before: $(uptime | sed 's/.*load average/load average/')"
status=0
"$python" scripts/bench-server-load.py "$url" --runs "$runs" --tokens "$tokens" --mode "$mode" \
  > "$work/client.json" || status=$?
end_rss=$(rss) peak=$(hwm)
echo "load after:  $(uptime | sed 's/.*load average/load average/')"
# Every run finished by now: past the retention and two sweeps, each run's record and events are
# gone; the threads and their checkpoints stay. The allocator (jemalloc) hands freed pages back
# to the system over its 10 s decay, hence the 15 s more.
sleep $((retention + 2 * sweep + 15))
retained_rss=$(rss)
"$python" scripts/bench-server-load.py "$url" --delete-threads > /dev/null
sleep 15
deleted_rss=$(rss)
sampled_peak=$(awk '$2 > m {m = $2} END {print m}' "$work/rss.log")

"$python" - "$work/client.json" "$start_rss" "$peak" "$sampled_peak" "$end_rss" "$retained_rss" \
  "$deleted_rss" "$max_peak" "$held_margin" "$idle_margin" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
start, peak, sampled, end, retained, deleted = (int(x) / 1024 for x in sys.argv[2:8])
max_peak, held_margin, idle_margin = (int(x) for x in sys.argv[8:11])
print(f"{c['runs']} concurrent runs × {c['tokens']} tokens, stream_mode={c['mode']}, Python SDK client")
print(f"{'wall':>8} {'events/s':>9} {'tokens/s':>9} {'first p50':>10} {'end p99':>9} {'failed':>6}"
      f" {'RSS start':>10} {'peak':>9} {'after load':>10} {'after ret.':>10} {'threads del.':>12}")
print(f"{c['wall_s']:7.1f}s {c['events_per_s']:9,.0f} {c['tokens_per_s']:9,.0f} {c['first_token_ms']['p50'] or 0:8.0f}ms"
      f" {c['end_ms']['p99']:7.0f}ms {c['failed']:6} {start:7.1f}MiB {peak:6.1f}MiB {end:7.1f}MiB"
      f" {retained:7.1f}MiB {deleted:9.1f}MiB")
if c["skipped_partials"]:
    print(f"{c['skipped_partials']:,} partials skipped by readers that fell behind (the latest stands in for them)")
print(f"(peak is VmHWM; the highest 0.2 s sample of VmRSS was {sampled:.1f} MiB; client's own max RSS "
      f"{c['client_max_rss_mib']} MiB)")
for f in c["failures"]:
    print("failed:", f)
bad = []
if c["failed"]:
    bad.append(f"{c['failed']} runs failed")
if peak > max_peak:
    bad.append(f"peak RSS {peak:.1f} MiB above the bound of {max_peak} MiB")
if retained - start > held_margin:
    bad.append(f"RSS after retention {retained:.1f} MiB, more than {held_margin} MiB above the start's {start:.1f} MiB")
if deleted - start > idle_margin:
    bad.append(f"RSS after deleting the threads {deleted:.1f} MiB, more than {idle_margin} MiB above the start's {start:.1f} MiB")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
[ "$status" -eq 0 ] || exit "$status"

#!/usr/bin/env bash
# What tracing costs a run: the `overhead` bench of mnemograph-telemetry (a 10-node chain, no
# checkpointer) in its three modes, one process each, in turn for N rounds (the order rotates
# each round); prints each mode's median time per run and per node, and the medians of the
# per-round differences against `off`.
#
# Usage: scripts/bench-telemetry.sh [--rounds N] [--runs M]
#   --rounds N  rounds (default 7)
#   --runs M    timed invocations per process (default 20000)
#
# Modes: off (no subscriber), logs (log lines at warn, no export: the examples without an
# endpoint), otlp (plus spans at info and the span metrics exported over OTLP/gRPC to an
# in-process receiver that discards them).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=7 runs=20000
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift ;;
    --runs) runs=$2; shift ;;
    *) sed -n '2,14p' "$0"; exit 2 ;;
  esac
  shift
done
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}
# A short batch delay and a queue that holds a burst: every span is exported, none dropped, so
# the figure is the whole cost of exporting them.
export OTEL_BSP_SCHEDULE_DELAY=200 OTEL_BSP_MAX_QUEUE_SIZE=262144 OTEL_BSP_MAX_EXPORT_BATCH_SIZE=4096
cargo bench -q -p mnemograph-telemetry --bench overhead --no-run 2>/dev/null
lines=$(mktemp)
modes=(off logs otlp)
for ((r = 0; r < rounds; r++)); do
  for ((i = 0; i < 3; i++)); do
    mode=${modes[$(((r + i) % 3))]}
    echo "$r $(cargo bench -q -p mnemograph-telemetry --bench overhead -- "$mode" "$runs")" >>"$lines"
  done
done
python3 - "$lines" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
by = {}
for r, mode, runs, per_run, per_node, spans in rows:
    by.setdefault(mode, {})[int(r)] = (float(per_run), float(per_node), float(spans))
print(f"{'mode':6} {'ns/run':>9} {'ns/node':>8} {'+ns/node vs off':>16} {'spans/run':>10}")
for mode in ("off", "logs", "otlp"):
    rounds = by[mode]
    med = statistics.median(v[0] for v in rounds.values())
    node = statistics.median(v[1] for v in rounds.values())
    diff = statistics.median(rounds[r][1] - by["off"][r][1] for r in rounds)
    spans = statistics.median(v[2] for v in rounds.values())
    print(f"{mode:6} {med:9.0f} {node:8.0f} {diff:16.0f} {spans:10.2f}")
PY
rm -f "$lines"

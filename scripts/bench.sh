#!/usr/bin/env bash
# Side-by-side benchmarks: every Rust workload next to its Python LangGraph twin
# (benches/python/lg_bench.py), back to back, for N rounds; prints one table with, per workload,
# the target, the Rust and Python medians over the rounds, the ratio Python/Rust of each round and
# the median of those ratios. Absolute times drift on a shared machine; a ratio taken within one
# round does much less, so the ratios are what to compare across machines.
#
# Usage: scripts/bench.sh [--quick] [--rounds N] [--only LIST] [--out DIR]
#   --quick      2 rounds, shorter criterion measurements, fewer Python runs (about 3 minutes)
#   --rounds N   rounds (default 5; about 9 minutes on 2 cores, plus the first build)
#   --only LIST  comma-separated groups out of: chain,chain_mem,fanout,chat_mem,cpu_step,mysql,redis
#   --out DIR    where the figures go (default $CARGO_TARGET_DIR/bench-compare/DATE)
#
# Needs: MySQL or MariaDB at MYSQL_SERVER (default mysql://root@127.0.0.1:3306; the databases
# graph_bench_rs and graph_bench_py are dropped and recreated), Redis at REDIS_URL (default
# redis://127.0.0.1:6379/); a group whose server is unreachable is skipped. The Python venv with
# the pinned versions comes from scripts/python-peer.sh.
#
# Within a round each Rust workload and its twin run one after the other; odd rounds start with
# Rust, even rounds with Python, so neither side always gets the warmer (or the quieter) slot.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=5 quick=0 only="chain,chain_mem,fanout,chat_mem,cpu_step,mysql,redis" out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; rounds=2 ;;
    --rounds) rounds=$2; shift ;;
    --only) only=$2; shift ;;
    --out) out=$2; shift ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
  esac
  shift
done
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}
MYSQL_SERVER=${MYSQL_SERVER:-mysql://root@127.0.0.1:3306}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/}
out=${out:-$CARGO_TARGET_DIR/bench-compare/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/bin"
results=$out/results.jsonl commands=$out/commands.txt
: > "$results"
: > "$commands"

if [ $quick = 1 ]; then
  criterion_args=(--warm-up-time 0.5 --measurement-time 1)
  py_runs=(chain=200 chain_mem=200 fanout=50 cpu_step=5)
else
  criterion_args=(--warm-up-time 1 --measurement-time 3)
  py_runs=(chain=500 chain_mem=500 fanout=100 cpu_step=10)
fi
runs_of() { for kv in "${py_runs[@]}"; do [ "${kv%%=*}" = "$1" ] && echo "${kv#*=}"; done; }
wanted() { [[ ",$only," == *",$1,"* ]]; }
log() { echo "$(date +%T) $*" >&2; }
# Runs a command and records it in commands.txt, once per distinct command.
run() { grep -qxF -- "$*" "$commands" || echo "$*" >> "$commands"; "$@"; }

PY=$(bash scripts/python-peer.sh)
table() { "$PY" benches/python/bench_table.py "$@"; }

# Build once, in release (criterion benches use the bench profile: release plus debug info), and
# copy the executables so a build elsewhere in the same target directory cannot swap them mid-run.
log "building (release)…"
build() { run cargo "$@" --message-format=json | table executables; }
engine=$(build bench -p mnemograph-core --bench engine --no-run | grep '/engine-' | head -1)
cp "$engine" "$out/bin/engine"
if wanted cpu_step; then
  parallel=$(build bench -p mnemograph-core --bench parallel --no-run | grep '/parallel-' | head -1)
  cp "$parallel" "$out/bin/parallel"
fi
if wanted redis; then
  redis_bin=$(build bench -p mnemograph-checkpoint-redis --bench redis --no-run | grep '/redis-' | head -1)
  cp "$redis_bin" "$out/bin/redis"
fi
if wanted mysql; then
  chat_turns=$(build build --release -p mnemograph-checkpoint-mysql --example chat_turns | grep '/chat_turns$' | head -1)
  cp "$chat_turns" "$out/bin/chat_turns"
fi
{
  echo "# \$OUT/bin/engine, parallel, redis and chat_turns are copies of the executables these builds made:"
  echo "#   engine=$engine"
  [ -n "${parallel:-}" ] && echo "#   parallel=$parallel"
  [ -n "${redis_bin:-}" ] && echo "#   redis=$redis_bin"
  [ -n "${chat_turns:-}" ] && echo "#   chat_turns=$chat_turns"
  echo "# so \$OUT/bin/engine ARGS is cargo bench -p mnemograph-core --bench engine -- ARGS (likewise parallel, redis)."
} >> "$commands"

mysql_ok=1
if wanted mysql; then
  # Fresh databases, so every run starts from the same (empty) tables.
  if ! "$PY" - "$MYSQL_SERVER" <<'EOF'
import sys
from urllib.parse import urlparse
import pymysql
u = urlparse(sys.argv[1])
c = pymysql.connect(host=u.hostname, port=u.port or 3306, user=u.username, password=u.password or "")
with c.cursor() as cur:
    for db in ("graph_bench_rs", "graph_bench_py"):
        cur.execute(f"DROP DATABASE IF EXISTS `{db}`")
EOF
  then
    log "MySQL at $MYSQL_SERVER is unreachable: the mysql group is skipped"
    mysql_ok=0
  fi
fi

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  dirty=$(git diff --quiet HEAD -- crates Cargo.lock || echo ' (with uncommitted changes)')
  echo "commit: $(git rev-parse --short HEAD)$dirty"
  echo "nproc: $(nproc)"
  cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)
  mhz=$(grep -m1 'cpu MHz' /proc/cpuinfo | cut -d: -f2)
  echo "cpu:${cpu}, ${mhz# } MHz"
  echo "rustc: $(rustc -V)"
  echo "python: $("$PY" -c 'import sys, importlib.metadata as m
print(sys.version.split()[0], *(f"{p} {m.version(p)}" for p in
      ("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-mysql", "langchain-core")))')"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/machine.txt"

criterion() { # ROUND FILTER ID[:DIVISOR]...
  local r=$1 filter=$2; shift 2
  local home=$out/criterion/$r
  local bin=$out/bin/$bench
  run env CRITERION_HOME="$home" "$bin" --bench --noplot "${criterion_args[@]}" "$filter" \
    > "$out/$bench-$r.log" 2>&1
  table criterion "$home" "$r" "$@" >> "$results"
}
lg_bench() { # ROUND [VAR=VALUE] ARGS...
  local r=$1; shift
  run env "$@" | table tag "$r" >> "$results"
}

rust_side() { # ROUND GROUP
  local r=$1
  case $2 in
    chain|chain_mem|fanout) bench=engine criterion "$r" "^$2\$" "$2" ;;
    chat_mem)
      bench=engine criterion "$r" '^chat_mem/' chat_mem/turn_at_300 chat_mem/300_turns:300 \
        chat_mem/last_50_of_300:50 ;;
    cpu_step) bench=parallel criterion "$r" '^parallel/cpu_step$' parallel/cpu_step ;;
    mysql)
      for mode in "" --delta; do
        run env MYSQL_URL="$MYSQL_SERVER/graph_bench_rs" "$out/bin/chat_turns" 200 $mode \
          | table tag "$r" >> "$results"
      done
      ;;
    redis)
      bench=redis criterion "$r" '^redis/chat_turn' redis/chat_turn redis/chat_turn_at_20
      grep -h '^reference:' "$out/redis-$r.log" | sed "s/^/round $r /" >> "$out/reference.txt" || true
      ;;
  esac
}
python_side() { # ROUND GROUP
  local r=$1
  case $2 in
    chain|chain_mem|fanout) lg_bench "$r" "$PY" benches/python/lg_bench.py "$2" "$(runs_of "$2")" ;;
    chat_mem) lg_bench "$r" "$PY" benches/python/lg_bench.py chat_mem 300 ;;
    cpu_step) lg_bench "$r" "$PY" benches/python/lg_bench.py cpu_step "$(runs_of cpu_step)" ;;
    mysql)
      lg_bench "$r" MYSQL_URL="$MYSQL_SERVER/graph_bench_py" "$PY" benches/python/lg_bench.py chat_mysql 200
      # The cost of one durable commit on this server in this round, for scale.
      lg_bench "$r" MYSQL_URL="$MYSQL_SERVER/graph_bench_py" "$PY" benches/python/lg_bench.py mysql_commit 200
      ;;
    redis) ;; # no Python twin: see docs/benchmarks/redis.md
  esac
}

start=$(date +%s)
for r in $(seq 1 "$rounds"); do
  for group in chain chain_mem fanout chat_mem cpu_step mysql redis; do
    wanted $group || continue
    [ $group = mysql ] && [ $mysql_ok = 0 ] && continue
    log "round $r/$rounds: $group"
    if [ $((r % 2)) = 1 ]; then
      rust_side "$r" $group; python_side "$r" $group
    else
      python_side "$r" $group; rust_side "$r" $group
    fi
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
echo "wall time: $(( $(date +%s) - start )) s for $rounds rounds" >> "$out/machine.txt"

table table "$results" > "$out/table.md"
{
  cat "$out/machine.txt"
  echo
  cat "$out/table.md"
  if [ -s "$out/reference.txt" ]; then echo; cat "$out/reference.txt"; fi
  echo
  echo "Commands (from the repository root):"
  echo "    OUT=$out"
  sed "s|$out|\$OUT|g; s|$PY|\$PY|g; s/^/    /" "$commands"
  echo "    # with PY=\$(bash scripts/python-peer.sh)"
  echo
  echo "Figures: $results"
} | tee "$out/summary.md"

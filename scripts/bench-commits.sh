#!/usr/bin/env bash
# The Rust benchmarks of two commits, side by side: BASE (any git revision) against the working
# tree (HEAD with uncommitted changes, if any). Both are built in release, then every workload
# runs on both sides back to back for N rounds, alternating which side goes first; prints one
# table with each side's median and the ratio head/base of every round. Use it to show that a
# change costs nothing beyond noise.
#
# Usage: scripts/bench-commits.sh BASE [--rounds N] [--only LIST] [--out DIR]
#   --rounds N   rounds (default 5)
#   --only LIST  comma-separated groups out of: chain,chain_mem,fanout,chat_mem,mysql,redis
#   --out DIR    where the figures go (default $CARGO_TARGET_DIR/bench-commits/DATE)
#
# Needs MySQL or MariaDB at MYSQL_SERVER (default mysql://root@127.0.0.1:3306; the database
# graph_bench_commits is dropped and recreated before each run) for the mysql group, and Redis at
# REDIS_URL (default redis://127.0.0.1:6379/) for the redis group.
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -ge 1 ] || { sed -n '2,16p' "$0"; exit 2; }
base=$1; shift
rounds=5 only="chain,chain_mem,fanout,chat_mem,mysql,redis" out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift ;;
    --only) only=$2; shift ;;
    --out) out=$2; shift ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
  shift
done
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}
MYSQL_SERVER=${MYSQL_SERVER:-mysql://root@127.0.0.1:3306}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/}
out=${out:-$CARGO_TARGET_DIR/bench-commits/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
results=$out/results.jsonl
: > "$results"
wanted() { [[ ",$only," == *",$1,"* ]]; }
log() { echo "$(date +%T) $*" >&2; }
tbl() { python3 benches/python/bench_table.py "$@"; }
side() { python3 benches/python/commits_table.py side "$@"; }

# The base is checked out in a worktree of its own, and each side builds in a directory of its own
# under the target directory: cargo names a workspace crate's artifacts by its path inside the
# workspace, so two checkouts sharing one build directory would take each other's crates.
base_dir=$out/src/base
git worktree add --detach --force "$base_dir" "$base" >/dev/null
trap 'git worktree remove --force "$base_dir"' EXIT

# The manifest of the crate holding FILE (a path under crates/*/), in the current directory: crates
# are found by their bench and example files, so that two sides whose crates are named or laid out
# differently still build the same workloads.
manifest_of() { # FILE
  local found
  found=$(compgen -G "crates/*/$1" | head -1) || true
  [ -n "$found" ] || { echo "error: no crates/*/$1 in $(pwd)" >&2; return 1; }
  echo "${found%/"$1"}/Cargo.toml"
}

build_side() { # NAME DIR
  local name=$1 dir=$2 bin=$out/bin/$1
  mkdir -p "$bin"
  log "building $name (release)…"
  ( cd "$dir"
    export CARGO_TARGET_DIR=$CARGO_TARGET_DIR/bench-commits-build/$name
    cargo bench --manifest-path "$(manifest_of benches/engine.rs)" --bench engine --no-run \
      --message-format=json | tbl executables | grep '/engine-' | head -1 | xargs -I{} cp {} "$bin/engine"
    if wanted redis; then
      cargo bench --manifest-path "$(manifest_of benches/redis.rs)" --bench redis --no-run \
        --message-format=json | tbl executables | grep '/redis-' | head -1 | xargs -I{} cp {} "$bin/redis"
    fi
    if wanted mysql; then
      cargo build --release --manifest-path "$(manifest_of examples/chat_turns.rs)" --example chat_turns \
        --message-format=json | tbl executables | grep '/chat_turns$' | head -1 | xargs -I{} cp {} "$bin/chat_turns"
    fi )
}
build_side base "$base_dir"
build_side head .

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "base: $(git rev-parse --short "$base")  head: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo ' (with uncommitted changes)')"
  echo "nproc: $(nproc), cpu:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/machine.txt"

criterion() { # SIDE ROUND FILTER ID[:DIVISOR]...
  local s=$1 r=$2 filter=$3; shift 3
  local home=$out/criterion/$s/$r
  env CRITERION_HOME="$home" "$out/bin/$s/$bench" --bench --noplot --warm-up-time 1 --measurement-time 3 \
    "$filter" > "$out/$s-$bench-$r.log" 2>&1
  tbl criterion "$home" "$r" "$@" | side "$s" >> "$results"
}
fresh_mysql() {
  python3 - "$MYSQL_SERVER" <<'PY'
import subprocess, sys
from urllib.parse import urlparse
u = urlparse(sys.argv[1])
subprocess.run(["mysql", "-h", u.hostname, "-P", str(u.port or 3306), "-u", u.username or "root",
                "-e", "DROP DATABASE IF EXISTS graph_bench_commits"], check=True)
PY
}
run_side() { # SIDE ROUND GROUP
  local s=$1 r=$2
  case $3 in
    chain|chain_mem|fanout) bench=engine criterion "$s" "$r" "^$3\$" "$3" ;;
    chat_mem)
      bench=engine criterion "$s" "$r" '^chat_mem/' chat_mem/turn_at_300 chat_mem/300_turns:300 ;;
    mysql)
      for mode in "" --delta; do
        fresh_mysql
        env MYSQL_URL="$MYSQL_SERVER/graph_bench_commits" "$out/bin/$s/chat_turns" 200 $mode --turns-only \
          | tbl tag "$r" | side "$s" >> "$results"
      done ;;
    redis) bench=redis criterion "$s" "$r" '^redis/chat_turn' redis/chat_turn redis/chat_turn_at_20 ;;
  esac
}

for r in $(seq 1 "$rounds"); do
  for group in chain chain_mem fanout chat_mem mysql redis; do
    wanted $group || continue
    log "round $r/$rounds: $group"
    if [ $((r % 2)) = 1 ]; then run_side base "$r" $group; run_side head "$r" $group
    else run_side head "$r" $group; run_side base "$r" $group; fi
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
{ cat "$out/machine.txt"; echo; python3 benches/python/commits_table.py table "$results"; } | tee "$out/summary.md"

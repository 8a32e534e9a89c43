#!/usr/bin/env bash
# The engine's workloads of two commits, counted in instructions (valgrind's callgrind) instead of
# timed: a count does not move with what else the machine runs, so BASE and HEAD compare on a busy
# machine. Each side is checked out in a worktree and builds the engine crate's example
# `engine_count` in release (a side without it gets the working tree's example and the
# `benches/workloads/` it runs, so an older commit runs the same program); every workload then
# runs N and 2N times on each side, and the difference over N is the count of one run (the setup
# and the warm-up run cancel out). Hash tables are seeded afresh in every process, which moves a
# count by a few percent, so each count is taken R times and the table gives the median (and the
# range). Prints one table.
#
# Usage: scripts/bench-instructions.sh BASE [HEAD] [--runs N] [--repeat R] [--only LIST]
#   HEAD         a revision (default HEAD; committed work only)
#   --runs N     runs of the short workloads (default 2000); chat_300 runs N/500 conversations
#   --repeat R   counts per side and workload (default 3)
#   --only LIST  comma-separated, out of: chain,chain_mem,fanout,chat_300
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -ge 1 ] || { sed -n '2,17p' "$0"; exit 2; }
base=$1; shift
head=HEAD
if [ $# -gt 0 ] && [[ $1 != --* ]]; then head=$1; shift; fi
runs=2000 repeat=3 only="chain,chain_mem,fanout,chat_300"
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift ;;
    --repeat) repeat=$2; shift ;;
    --only) only=$2; shift ;;
    *) sed -n '2,17p' "$0"; exit 2 ;;
  esac
  shift
done
# Fixed now, so that a commit made while this runs changes nothing.
base=$(git rev-parse --verify "$base^{commit}")
head=$(git rev-parse --verify "$head^{commit}")
command -v valgrind >/dev/null || { echo "error: valgrind is needed (Debian: apt-get install valgrind)" >&2; exit 1; }
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}
log() { echo "$(date +%T) $*" >&2; }

work=$(mktemp -d)
trap 'for d in "$work"/src/*; do git worktree remove --force "$d" >/dev/null 2>&1 || true; done; rm -rf "$work"' EXIT

# Builds `engine_count` in the engine crate of revision REV (the crate holding benches/engine.rs,
# whatever its name there) and copies it to $work/bin/NAME.
build_side() { # NAME REV
  local name=$1 rev=$2 dir=$work/src/$1 crate
  git worktree add --detach --force "$dir" "$rev" >/dev/null
  crate=$(cd "$dir" && compgen -G "crates/*/benches/engine.rs" | head -1)
  crate=${crate%/benches/engine.rs}
  mkdir -p "$work/bin"
  if [ ! -f "$dir/$crate/examples/engine_count.rs" ]; then
    mkdir -p "$dir/$crate/examples" "$dir/$crate/benches/workloads"
    cp crates/mnemograph-core/examples/engine_count.rs "$dir/$crate/examples/"
    cp crates/mnemograph-core/benches/workloads/mod.rs "$dir/$crate/benches/workloads/"
  fi
  log "building $name ($(git rev-parse --short "$rev"), $crate) in release…"
  # A build directory of its own per side: cargo names a workspace crate's artifacts by its path
  # inside the workspace, so two checkouts sharing one would take each other's crates.
  CARGO_TARGET_DIR=$CARGO_TARGET_DIR/bench-instructions/$name \
    cargo build -q --release --manifest-path "$dir/$crate/Cargo.toml" --example engine_count
  cp "$CARGO_TARGET_DIR/bench-instructions/$name/release/examples/engine_count" "$work/bin/$name"
}
build_side base "$base"
build_side head "$head"

# Instructions of one callgrind run of BIN WORKLOAD N.
count() { # BIN WORKLOAD N
  local file=$work/callgrind.out
  valgrind --tool=callgrind --callgrind-out-file="$file" "$1" "$2" "$3" >/dev/null 2>&1
  awk '/^summary:/ {print $2}' "$file"
}

echo "base: $(git rev-parse --short "$base")  head: $(git rev-parse --short "$head")  ($(date -u '+%Y-%m-%d %H:%M UTC'))"
echo
echo "| workload | base (instructions a run) | head (instructions a run) | head/base |"
echo "|---|---|---|---|"
# The median of R numbers and their range, as "median (low-high)".
summary() { sort -n | awk '{ v[NR] = $1 } END { printf "%d (%d-%d)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
for workload in chain chain_mem fanout chat_300; do
  [[ ",$only," == *",$workload,"* ]] || continue
  n=$runs
  [ "$workload" = chat_300 ] && n=$(( runs / 500 > 0 ? runs / 500 : 1 ))
  declare -A per
  for side in base head; do
    log "$workload on $side: $n and $((2 * n)) runs, $repeat times"
    per[$side]=$(for _ in $(seq 1 "$repeat"); do
      one=$(count "$work/bin/$side" "$workload" "$n")
      two=$(count "$work/bin/$side" "$workload" $((2 * n)))
      echo $(( (two - one) / n ))
    done | summary)
  done
  awk -v w="$workload" -v b="${per[base]}" -v h="${per[head]}" \
    'BEGIN { split(b, x, " "); split(h, y, " "); printf "| %s | %s | %s | %.4f |\n", w, b, h, y[1] / x[1] }'
done

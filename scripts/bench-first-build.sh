#!/usr/bin/env bash
# The README's first command from a fresh clone with an empty cargo cache: builds memory-agent
# (`cargo build -p memory-agent`, the build `cargo run -p memory-agent` starts with) with a cargo
# home and a build directory of its own, both empty, so every crate is downloaded and compiled.
# Prints the wall-clock time and the units that took longest (from `cargo build --timings`).
#
# Usage: bash scripts/bench-first-build.sh [REV] [-- extra cargo build arguments]
#   REV defaults to the working tree; a commit is checked out into a temporary worktree first.
# Measure on an otherwise idle machine: the build uses every core.
set -euo pipefail
cd "$(dirname "$0")/.."

rev=""
if [ $# -gt 0 ] && [ "$1" != "--" ]; then rev=$1; shift; fi
[ "${1:-}" = "--" ] && shift

work=$(mktemp -d "${TMPDIR:-/tmp}/first-build.XXXXXX")
trap 'git worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
src=.
if [ -n "$rev" ]; then
  git worktree add --detach "$work/src" "$rev" >/dev/null
  src=$work/src
fi

# The toolchain stays where rustup keeps it; only the registry and git caches start empty.
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
cargo_bin=$(command -v cargo)
export CARGO_HOME=$work/cargo-home CARGO_TARGET_DIR=$work/target CARGO_INCREMENTAL=0
mkdir -p "$CARGO_HOME"

echo "== first build of memory-agent at ${rev:-the working tree} ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
start=$(date +%s.%N)
(cd "$src" && "$cargo_bin" build -p memory-agent --timings "$@" >&2)
end=$(date +%s.%N)
python3 - "$start" "$end" "$CARGO_TARGET_DIR"/cargo-timings/cargo-timing.html <<'PY'
import json, re, sys
start, end, report = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
units = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);\n", open(report).read(), re.S).group(1))
total = end - start
print(f"wall clock: {int(total // 60)} min {total % 60:.0f} s; {len(units)} units, "
      f"{sum(u['duration'] for u in units):.0f} s of compiling summed over units")
for u in sorted(units, key=lambda u: -u["duration"])[:12]:
    print(f"  {u['duration']:6.1f} s  {u['name']} {u['version']} {u.get('target', '').strip()}")
PY

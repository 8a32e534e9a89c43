#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs nothing it does not need, starts the services
# the tests use, then runs every test of the workspace. `.ci/run` calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# Reuse one build directory across clones and runs: a cold build of the workspace is the slowest
# part of a run, and CI clones the repository fresh each time.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
mkdir -p "$CARGO_TARGET_DIR"

# graph-core, graph-macros and graph-test need no server. The MySQL, Redis and Milvus crates start
# their services here as they land (see README "Services").

cargo test --workspace --no-fail-fast "$@"

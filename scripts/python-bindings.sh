#!/usr/bin/env bash
# Builds the Python wheel of the savers (`mnemograph-checkpoint`, bindings/python) with
# maturin and installs it into the Python peer venv (scripts/python-peer.sh), then prints that
# venv's python. The wheel is left in $CARGO_TARGET_DIR/wheels.
# Usage: scripts/python-bindings.sh [--release]   (default: the dev profile, as the tests build)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=dev
if [ "${1:-}" = "--release" ]; then profile=release; fi
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}
PY=$(bash scripts/python-peer.sh)
bin=$(dirname "$PY")
out=$CARGO_TARGET_DIR/wheels/$profile
rm -rf "$out"
"$bin/maturin" build --quiet -m bindings/python/Cargo.toml --profile "$profile" \
  --interpreter "$PY" --compatibility linux --out "$out" >&2
"$bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$out"/*.whl >&2
echo "$PY"

#!/usr/bin/env bash
# Fails when depending on graph-core turns on a feature that changes the rest of a user's program.
#
# Cargo unifies a dependency's features across the whole program, so a feature graph-core asks
# for is on in every crate of its users: serde_json's `preserve_order` changes the key order of
# every `serde_json::Map`, `float_roundtrip` how every float is parsed, serde's `rc` what
# serializes, and tokio's `rt-multi-thread` pulls the multi-thread runtime. `tests/downstream`
# depends on graph-core alone, as an application would; its resolved features (`cargo tree -e
# features`, which resolves for the selected package only) must hold none of these.
#
# Needs no network when the registry cache already holds the locked crates (any earlier build);
# reads no build output, so CARGO_TARGET_DIR does not matter.
set -euo pipefail
cd "$(dirname "$0")/.."

forbidden=(
  'serde_json feature "preserve_order"'
  'serde_json feature "float_roundtrip"'
  'serde_json feature "arbitrary_precision"'
  'serde feature "rc"'
  'tokio feature "rt-multi-thread"'
  'tokio feature "macros"'
)

tree_args=(tree -p downstream -e normal,build,features --prefix none)
# Offline first, so a machine without network works from its cache; online only if that fails.
if ! tree=$(cargo "${tree_args[@]}" --offline 2>/dev/null); then
  tree=$(cargo "${tree_args[@]}")
fi

if ! grep -q '^graph-core v' <<<"$tree"; then
  echo "error: the dependency tree of tests/downstream does not contain graph-core" >&2
  exit 1
fi

failed=0
for feature in "${forbidden[@]}"; do
  if grep -qF "$feature" <<<"$tree"; then
    echo "error: depending on graph-core alone enables $feature; what turns it on:" >&2
    # The inverted tree of that crate: each feature with the dependents that ask for it.
    cargo tree --offline -p downstream -e normal,build,features -i "${feature%% *}" >&2 || true
    failed=1
  fi
done
[ "$failed" = 0 ] || exit 1

echo "ok: a crate depending on graph-core alone gets: $(grep -oE '^(serde_json|serde|tokio) feature "[^"]+"' <<<"$tree" | sort -u | sed 's/ feature /:/' | tr -d '"' | tr '\n' ' ')"

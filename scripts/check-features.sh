#!/usr/bin/env bash
# Fails when depending on mnemograph-core turns on a feature that changes the rest of a user's program,
# when a crate without its optional features still builds the heavy dependencies those features
# gate, when a saver, a memory crate or the bindings build the engine (mnemograph-core), or when the
# workspace builds two rustls crypto providers. Reads `cargo tree` only.
#
# Cargo unifies a dependency's features across the whole program, so a feature mnemograph-core asks
# for is on in every crate of its users: serde_json's `preserve_order` changes the key order of
# every `serde_json::Map`, `float_roundtrip` how every float is parsed, serde's `rc` what
# serializes, and tokio's `rt-multi-thread` pulls the multi-thread runtime. `tests/downstream`
# depends on mnemograph-core alone, as an application would; its resolved features (`cargo tree -e
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

# `cargo tree` with these arguments, offline first so a machine without network works from its
# cache; online only if that fails.
cargo_tree() {
  cargo tree "$@" --offline 2>/dev/null || cargo tree "$@"
}

tree=$(cargo_tree -p downstream -e normal,build,features --prefix none)

if ! grep -q '^mnemograph-core v' <<<"$tree"; then
  echo "error: the dependency tree of tests/downstream does not contain mnemograph-core" >&2
  exit 1
fi

failed=0
for feature in "${forbidden[@]}"; do
  if grep -qF "$feature" <<<"$tree"; then
    echo "error: depending on mnemograph-core alone enables $feature; what turns it on:" >&2
    # The inverted tree of that crate: each feature with the dependents that ask for it.
    cargo_tree -p downstream -e normal,build,features -i "${feature%% *}" >&2 || true
    failed=1
  fi
done
[ "$failed" = 0 ] || exit 1

# --- optional heavy dependencies ------------------------------------------------------------
# What a dependent gets from a crate with its default features, or none: the normal and build
# dependencies only (dev-dependencies, such as the crate itself with every feature for its own
# tests, are not part of it).
lean_failed=0
lean() { # package, what it must not pull (crate names)...
  local package=$1 deps crate
  shift
  deps=$(cargo_tree -p "$package" --no-default-features -e normal,build --prefix none)
  for crate in "$@"; do
    if grep -qE "^$crate v" <<<"$deps"; then
      echo "error: $package with --no-default-features builds $crate; what pulls it:" >&2
      cargo_tree -p "$package" --no-default-features -e normal,build -i "$crate" >&2 || true
      lean_failed=1
    fi
  done
}
# mnemograph-models: the OpenAI client (`openai`) and tiktoken (`tiktoken`) are opt-in.
lean mnemograph-models async-openai reqwest rustls tiktoken-rs
# mnemograph-memory: candle (`local-embeddings`) is opt-in, and the Milvus SDK lives in the driver
# crate alone.
lean mnemograph-memory milvus-sdk-rust tonic prost reqwest candle-core tokenizers
# mnemograph-server: no database client; a cluster's MySQL and Redis live in
# mnemograph-server-cluster, which builds on it.
lean mnemograph-server sqlx redis mnemograph-checkpoint-mysql
# mnemograph-telemetry: the OTLP transports (`grpc`, `http`) are its default features, not forced.
lean mnemograph-telemetry opentelemetry-otlp tonic prost reqwest rustls
# memory-agent: its default build (the README's first command) compiles what the default run
# uses and no server client, OpenAI client, OTLP exporter or MiniLM model (candle-core brings
# `tokenizers` itself; the MiniLM tokenizer adds its C regex library, `onig_sys`).
deps=$(cargo_tree -p memory-agent -e normal,build --prefix none)
for crate in sqlx-mysql sqlx-postgres redis milvus-sdk-rust tonic async-openai opentelemetry-otlp \
  candle-transformers onig_sys; do
  if grep -qE "^$crate v" <<<"$deps"; then
    echo "error: memory-agent's default build compiles $crate; what pulls it:" >&2
    cargo_tree -p memory-agent -e normal,build -i "$crate" >&2 || true
    lean_failed=1
  fi
done
[ "$lean_failed" = 0 ] || exit 1

# --- the engine stays out of the persistence side ------------------------------------------------
# The savers, the memory crates, checkpoint-inspect and the Python bindings use the checkpoint
# contract, the store and the messages of mnemograph-checkpoint, never a graph; mnemograph-core
# (the engine) must not be in what they build for a dependent.
engine_free_failed=0
for package in mnemograph-checkpoint mnemograph-checkpoint-mysql mnemograph-checkpoint-redis \
  mnemograph-checkpoint-sqlite mnemograph-checkpoint-postgres \
  mnemograph-checkpoint-inspect mnemograph-memory mnemograph-memory-milvus mnemograph-python; do
  if grep -qE '^mnemograph-core v' <<<"$(cargo_tree -p "$package" -e normal,build --prefix none)"; then
    echo "error: $package builds mnemograph-core; what pulls it:" >&2
    cargo_tree -p "$package" -e normal,build -i mnemograph-core >&2 || true
    engine_free_failed=1
  fi
done
[ "$engine_free_failed" = 0 ] || exit 1

# --- one rustls crypto provider -------------------------------------------------------------
# With ring and aws-lc-rs both compiled in, rustls cannot choose and `ClientConfig::builder()`
# (redis' `rediss://`, tonic) panics unless the program installs a provider by hand. The whole
# workspace, dev-dependencies included, builds ring only.
workspace=$(cargo_tree --workspace -e normal,build,dev --prefix none)
if grep -qE '^ring v' <<<"$workspace" && grep -qE '^aws-lc-rs v' <<<"$workspace"; then
  echo "error: the workspace builds both ring and aws-lc-rs; what asks for aws-lc-rs (a TLS feature" >&2
  echo "       that names no provider picks it, e.g. reqwest's \`rustls\`: use a ring or no-provider form):" >&2
  cargo_tree --workspace -e normal,build,dev,features -i aws-lc-rs >&2 || true
  exit 1
fi

echo "ok: mnemograph-models, mnemograph-memory and mnemograph-telemetry without features build no HTTP, TLS, gRPC or tokenizer stack, and mnemograph-server no database client;"
echo "ok: the savers, the memory crates, checkpoint-inspect and the Python bindings build without mnemograph-core;"
echo "ok: the workspace builds one rustls crypto provider ($(grep -oE '^ring v[^ ]+' <<<"$workspace" | head -1 || echo none))"
echo "ok: a crate depending on mnemograph-core alone gets: $(grep -oE '^(serde_json|serde|tokio) feature "[^"]+"' <<<"$tree" | sort -u | sed 's/ feature /:/' | tr -d '"' | tr '\n' ' ')"

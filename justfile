# Recipes for working on the workspace. `just --list` shows them.

export CARGO_TARGET_DIR := env_var_or_default("CARGO_TARGET_DIR", env_var("HOME") + "/.cache/graph-rs-target")

# Run the main command: the memory agent (no services, no API key needed).
example *ARGS:
    cargo run -p memory-agent -- {{ARGS}}

# The smallest graph: typed state, a reducer, a conditional edge, in-memory persistence.
quickstart:
    cargo run -p quickstart

# The whole test suite, starting the services it needs (what CI runs).
test *ARGS:
    bash scripts/test.sh {{ARGS}}

# Format check, lints as errors, docs as errors.
check:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

# Package every published crate and build each package on its own (what CI checks).
package *ARGS:
    bash scripts/package.sh {{ARGS}}

# The Python wheel of the savers (bindings/python), built by maturin and installed into the Python peer venv; `--release` for benchmarks.
wheel *ARGS:
    bash scripts/python-bindings.sh {{ARGS}}

# Criterion benchmarks of the engine (see docs/benchmarks/engine.md).
bench:
    cargo bench -p mnemograph-core --bench engine

# Every Rust bench next to its Python LangGraph twin, alternating, with the ratios (docs/benchmarks/compare.md).
bench-compare *ARGS:
    bash scripts/bench.sh {{ARGS}}

# Chat turns/s at 1, 8, 64 and 256 threads at once on every saver, against Python's async savers and the server's own limit (docs/benchmarks/many-threads.md).
bench-scale *ARGS:
    bash scripts/bench-scale.sh {{ARGS}}

# What tracing costs a run: no subscriber, log lines only, OTLP export (docs/benchmarks/tracing.md).
bench-telemetry *ARGS:
    bash scripts/bench-telemetry.sh {{ARGS}}

# Concurrent streaming runs: mnemograph-server against Python's `langgraph dev`.
bench-server *ARGS:
    bash scripts/bench-server.sh {{ARGS}}

# The server's RSS under 1,000 streaming runs of 2,000 tokens (Python SDK) and after retention.
bench-server-load *ARGS:
    bash scripts/bench-server-load.sh {{ARGS}}

# Retrieval latency on Milvus Lite, MilvusMemory against pymilvus, dense and hybrid (docs/benchmarks/milvus.md).
bench-milvus *ARGS:
    bash scripts/bench-milvus.sh {{ARGS}}

# Python LangGraph on our savers through the bindings, against PyMySQLSaver, plainredis and InMemorySaver (docs/benchmarks/bindings.md).
bench-bindings *ARGS:
    bash scripts/bench-bindings.sh {{ARGS}}

# Every scale workload (parallel supersteps, many threads, long threads, memory, Milvus) in one run, and one table against the targets (docs/benchmarks/scale-table.md).
bench-scale-all *ARGS:
    bash scripts/bench-scale-all.sh {{ARGS}}

# Everything CI does.
ci:
    bash .ci/run

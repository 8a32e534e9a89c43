#!/usr/bin/env bash
# Creates (once) a Python venv with the reference implementation — Python LangGraph, its MySQL
# saver (sync and asyncio), its Redis, SQLite and Postgres savers, its SDK client and its local server (`langgraph dev`),
# at the versions our compatibility tests and benchmarks pin — and prints the path of its python.
# Usage: scripts/python-peer.sh [VENV_DIR]   (default: $HOME/.cache/graph-rs-py)
set -euo pipefail
V=${1:-$HOME/.cache/graph-rs-py}
PINS=("langgraph==1.2.24" "langgraph-checkpoint==4.3.2" "langgraph-checkpoint-mysql==3.0.0"
      "langchain-core==1.8.3" "pymysql==1.1.1" "aiomysql==0.3.2" "langgraph-checkpoint-redis==0.5.2"
      "langgraph-sdk==0.4.14" "langgraph-cli[inmem]==0.4.40" "langgraph-api==0.16.7"
      "langgraph-runtime-inmem==0.36.7" "langgraph-checkpoint-conformance==0.0.2"
      "langgraph-checkpoint-plainredis==0.1.0" "maturin==1.16.0"
      "langgraph-checkpoint-sqlite==3.1.2" "aiosqlite==0.22.1"
      "langgraph-checkpoint-postgres==3.2.0" "psycopg[binary]==3.3.9" "psycopg-pool==3.3.3")
stamp="$V/.graph-rs-pins"
if [ ! -x "$V/bin/python" ]; then python3 -m venv "$V" >&2; fi
if [ "$(cat "$stamp" 2>/dev/null)" != "${PINS[*]}" ]; then
  "$V/bin/pip" install -q --disable-pip-version-check "${PINS[@]}" >&2
  echo "${PINS[*]}" > "$stamp"
fi
echo "$V/bin/python"

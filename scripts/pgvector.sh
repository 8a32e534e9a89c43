#!/usr/bin/env bash
# PostgreSQL 16 with the pgvector extension, on loopback, for the Postgres store's vector tests in
# pgvector's own mode. Debian 12 packages no pgvector, so both come from PyPI's `pgserver` wheel
# (PostgreSQL 16.2 and pgvector 0.6.2, built for manylinux), unpacked, never imported.
#
#   bash scripts/pgvector.sh [PORT]        start (default port 5433); prints postgres://postgres@127.0.0.1:PORT/graph_test
#   bash scripts/pgvector.sh stop [PORT]   stop the server started on PORT
#
# PostgreSQL refuses to run as root, so when called as root the server runs as the `postgres`
# user (Debian's PostgreSQL package makes it), and everything lives where that user can read it:
# $PGVECTOR_HOME, default /var/tmp/graph-rs-pgvector (the wheel's files, one data dir and log per
# port). Only the URL goes to stdout; progress goes to stderr.
set -euo pipefail

PGVECTOR_HOME=${PGVECTOR_HOME:-/var/tmp/graph-rs-pgvector}
WHEEL_VERSION=0.1.4
INSTALL=$PGVECTOR_HOME/pgserver-$WHEEL_VERSION
BIN=$INSTALL/pgserver/pginstall/bin

log() { echo "pgvector: $*" >&2; }

# Runs a command as the server's user: `postgres` when this script runs as root, else the caller.
as_server() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

install() {
  # The marker is written last, so an interrupted install is redone rather than half-used.
  [ -f "$INSTALL/.installed" ] && return 0
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    log "no 'postgres' user to run the server as (install Debian's postgresql package)"
    return 1
  fi
  log "fetching PostgreSQL 16 with pgvector (PyPI pgserver==$WHEEL_VERSION) into $INSTALL (once)"
  rm -rf "$INSTALL"
  mkdir -p "$INSTALL"
  local wheels
  wheels=$(mktemp -d)
  python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$wheels" "pgserver==$WHEEL_VERSION" >&2
  python3 -m zipfile -e "$wheels"/pgserver-*.whl "$INSTALL"
  rm -rf "$wheels"
  # Zip archives keep no file modes.
  chmod -R a+rX "$INSTALL"
  chmod a+x "$BIN"/*
  chmod a+rx "$PGVECTOR_HOME"
  touch "$INSTALL/.installed"
}

ready() { "$BIN/pg_isready" -h 127.0.0.1 -p "$1" -q >/dev/null 2>&1; }

start() {
  local port=${1:-5433}
  local data=$PGVECTOR_HOME/data-$port logf=$PGVECTOR_HOME/server-$port.log
  local url="postgres://postgres@127.0.0.1:$port/graph_test"
  install
  if ready "$port"; then
    # Something answers on the port: use it only if it offers pgvector, never a server without.
    if "$BIN/psql" "postgres://postgres@127.0.0.1:$port/postgres" -Atqc \
      "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'" 2>/dev/null | grep -q 1; then
      log "already running on port $port"
      ensure_database "$port"
      echo "$url"
      return 0
    fi
    log "port $port is taken by a PostgreSQL without pgvector"
    return 1
  fi
  if [ ! -f "$data/PG_VERSION" ]; then
    rm -rf "$data"
    mkdir -p "$data"
    [ "$(id -u)" = 0 ] && chown postgres "$data"
    as_server "$BIN/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --locale=C >/dev/null
  fi
  touch "$logf"
  [ "$(id -u)" = 0 ] && chown postgres "$logf"
  # The socket goes to the data dir: /var/run/postgresql belongs to the Debian server.
  as_server "$BIN/pg_ctl" -D "$data" -l "$logf" -w -t 60 \
    -o "-p $port -k $data -c listen_addresses=127.0.0.1" start >/dev/null
  if ! ready "$port"; then
    log "the server did not come up; its log:"
    tail -20 "$logf" >&2
    return 1
  fi
  ensure_database "$port"
  log "listening on 127.0.0.1:$port (data $data)"
  echo "$url"
}

ensure_database() {
  local admin="postgres://postgres@127.0.0.1:$1/postgres"
  if ! "$BIN/psql" "$admin" -Atqc "SELECT 1 FROM pg_database WHERE datname = 'graph_test'" | grep -q 1; then
    "$BIN/psql" "$admin" -qc 'CREATE DATABASE graph_test' >/dev/null
  fi
}

stop() {
  local port=${1:-5433}
  local data=$PGVECTOR_HOME/data-$port
  [ -f "$data/postmaster.pid" ] || return 0
  as_server "$BIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null
}

case "${1:-}" in
  stop) stop "${2:-5433}" ;;
  *) start "${1:-5433}" ;;
esac

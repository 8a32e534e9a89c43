#!/usr/bin/env bash
# Packages every crate that is published to crates.io, as `cargo publish` would, and verifies each
# package by building it from its .crate file alone: a file left out of a package, a path
# dependency without a version, or a dependency that resolves to another crate on crates.io fails
# here instead of at release time.
#
# The crates depend on each other and none of them needs to be on crates.io yet: one `cargo
# package` over all of them packages them in dependency order, and resolves each package's
# dependencies on the others from the packages it has just made (a temporary local registry in
# front of crates.io).
#
# Which crates: every workspace member that does not say `publish = false`. They must be exactly
# the members under crates/ (examples and tests stay unpublished), otherwise this fails.
# Arguments go to `cargo package`: `--allow-dirty` for a tree with uncommitted changes,
# `--no-verify` for the packages without the build, `--list` for their files.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}"
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

publishable=$(cargo metadata --no-deps --format-version 1 --locked | python3 -c '
import json, os, sys

meta = json.load(sys.stdin)
root, members = meta["workspace_root"], set(meta["workspace_members"])
wrong = []
for p in sorted(meta["packages"], key=lambda p: p["name"]):
    if p["id"] not in members:
        continue
    # `publish` is null when unrestricted and [] for `publish = false`.
    name, published = p["name"], p["publish"] != []
    manifest = os.path.relpath(p["manifest_path"], root)
    if published != manifest.startswith("crates" + os.sep):
        state = "published" if published else "not published"
        wrong.append(f"{name} ({manifest}) is {state}")
    elif published:
        print(name)
if wrong:
    print("error: crates under crates/ are published, every other member says `publish = false`:", file=sys.stderr)
    print("\n".join("  " + w for w in wrong), file=sys.stderr)
    sys.exit(1)
')

# Verification builds each package as a registry crate, and cargo takes a registry crate of a
# given name and version to be immutable: a copy it unpacked or built in an earlier run would stand
# in for today's code, since the version stays the same from commit to commit. So the unpacked
# copies (in every registry's source cache but crates.io's) and the built artifacts of these crates
# go first.
version=$(cargo metadata --no-deps --format-version 1 --locked |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["packages"][0]["version"])')
args=()
for crate in $publishable; do
  args+=(--package "$crate")
  rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/"$crate-$version"
done
cargo clean --quiet --locked "${args[@]}"
echo "== cargo package:" $publishable
cargo package --locked "${args[@]}" "$@"

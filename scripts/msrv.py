"""Checks that the workspace's declared MSRV is true for the locked dependency tree.

Usage: python3 scripts/msrv.py
Reads `cargo metadata` (the locked tree, every target and feature) and compares the highest
`rust-version` any dependency declares with the workspace's own `rust-version`. Exits 1, naming the
dependencies that need more, when the workspace claims less than they do. Only one toolchain can
be installed where CI runs, so the claim is checked from what the dependencies declare rather than
by building with an older compiler.
"""

import json
import subprocess
import sys


def version(text: str) -> tuple[int, int, int]:
    """`1.85` and `1.85.0` are the same version."""
    parts = [int(part) for part in text.split(".")] + [0, 0]
    return (parts[0], parts[1], parts[2])


def main() -> int:
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    members = set(meta["workspace_members"])
    resolved = {node["id"] for node in meta["resolve"]["nodes"]}
    declared = {
        p["rust_version"] for p in meta["packages"] if p["id"] in members and p.get("rust_version")
    }
    if len(declared) != 1:
        print(f"error: workspace members declare rust-version {sorted(declared) or 'nowhere'}; want one value")
        return 1
    msrv = declared.pop()
    needs = sorted(
        (
            (version(p["rust_version"]), p["name"], p["version"])
            for p in meta["packages"]
            if p["id"] in resolved and p["id"] not in members and p.get("rust_version")
        ),
        reverse=True,
    )
    too_new = [n for n in needs if n[0] > version(msrv)]
    if too_new:
        print(f"error: rust-version = {msrv}, but these locked dependencies need more:")
        for need, name, ver in too_new:
            print(f"  {name} {ver}: rust-version {'.'.join(map(str, need))}")
        return 1
    top = needs[0] if needs else None
    detail = f" (highest dependency: {top[1]} {top[2]}, {'.'.join(map(str, top[0]))})" if top else ""
    print(f"msrv: rust-version = {msrv} holds for the locked tree{detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

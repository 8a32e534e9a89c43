"""The table of scripts/bench-commits.sh: the same Rust workloads built from two commits.

Usage:
    commits_table.py side SIDE < lines
        sets "impl": SIDE ("base" or "head") on every JSON figure line on stdin
    commits_table.py table RESULTS.jsonl
        prints, per workload, the median over the rounds of each side, the ratio head/base of
        each round (both sides ran back to back in it) and the median of those ratios: below 1
        the head is faster

Standard library only.
"""

import json
import statistics
import sys


def side(name):
    for line in sys.stdin:
        line = line.strip()
        if not line.startswith("{"):
            continue
        figure = json.loads(line)
        figure["impl"] = name
        print(json.dumps(figure))


def table(path):
    figures = {}
    with open(path) as f:
        for line in f:
            fig = json.loads(line)
            key = (fig["workload"], fig.get("per", "run"))
            figures.setdefault(key, {}).setdefault(fig["round"], {})[fig["impl"]] = fig["us"]
    print("| workload | base (µs, median) | head (µs, median) | head/base per round | median ratio |")
    print("|---|---|---|---|---|")
    for (workload, per), rounds in figures.items():
        base = [r["base"] for r in rounds.values() if "base" in r]
        head = [r["head"] for r in rounds.values() if "head" in r]
        ratios = [r["head"] / r["base"] for r in rounds.values() if "base" in r and "head" in r]
        if not ratios:
            continue
        print(
            f"| {workload} (per {per}) | {statistics.median(base):.1f} | {statistics.median(head):.1f} | "
            + ", ".join(f"{x:.3f}" for x in ratios)
            + f" | {statistics.median(ratios):.3f} |"
        )


if __name__ == "__main__":
    if sys.argv[1] == "side":
        side(sys.argv[2])
    elif sys.argv[1] == "table":
        table(sys.argv[2])
    else:
        sys.exit(__doc__)

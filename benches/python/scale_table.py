"""The combined table of scripts/bench-scale-all.sh: every scale workload against its target.

Usage:
    scale_table.py status WORKLOAD STATUS [REASON] [KEY=VALUE ...] >> OUT/status.jsonl
        prints one JSON status line: STATUS is ok, skipped or failed; the extra keys (load
        average, seconds) go into the runs table
    scale_table.py table OUT
        prints the combined table (Markdown) of everything under OUT

OUT holds one directory per workload, as bench-scale-all.sh lays it out:
    cpu_step/results.jsonl      scripts/bench.sh --only cpu_step --out
    concurrent/results.jsonl    scripts/bench-scale.sh --out
    long_threads/{plain,delta,python}.jsonl
                                chat_turns --at (plain, --delta) and lg_bench.py chat_mysql --at
    footprint/output.txt        scripts/bench-footprint.sh's standard output
    milvus/times-ROWS.log       scripts/bench-milvus.sh --out
and status.jsonl: one line per workload (ok, skipped or failed, with its start, duration and load
average), and one per saver or server a workload skipped (concurrent/mysql, footprint/mysql).

A row compares Rust with Python (or, for the commit-rate target, with the database's own rate),
from figures taken in the same rounds. "ratio" is how many times better Rust's figure is:
Python's time / Rust's, Python's memory / Rust's, or Rust's rate / Python's; per round, then the
median of the rounds. A target is met when the median over the rounds meets it. Standard library
only, so it runs under any Python 3.
"""

import glob
import json
import os
import re
import statistics
import sys

# Targets of docs/benchmarks.md (the scale table: docs/benchmarks/scale-table.md).
CPU_STEP_TARGET_MS = 440.0
CONCURRENT_MIN_RATIO = 5.0
COMMIT_RATE_LEVEL = 64
COMMIT_RATE_MIN_SHARE = 0.5
MILVUS_DENSE_TARGET_MS = 50.0
MILVUS_TARGET_ROWS = 100_000
# "Flat per turn" needs a tolerance: a delta-mode turn's bytes vary by a few (its ids and numbers
# grow), and turn times on a shared 2-core machine swing between runs minutes apart; what the
# target rules out is a turn whose cost grows with the thread, as a plain-mode turn adds 81 times
# the bytes at turn 1,000 that it adds at turn 10.
FLAT_BYTES = 1.1
FLAT_TIME = 1.5

HEADER = "| workload | set-up | Rust | Python (or reference) | ratio | target | met? |"


def read_jsonl(path):
    if not os.path.exists(path):
        return []
    lines = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                lines.append(json.loads(line))
    return lines


def number(x, digits=1):
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def ms(x):
    return f"{number(x)} ms"


def spread(values, fmt=number, unit=""):
    """The median and its unit, with the range when there are several values."""
    m = statistics.median(values)
    if len(values) > 1:
        return f"{fmt(m)}{unit} ({fmt(min(values))}–{fmt(max(values))})"
    return f"{fmt(m)}{unit}"


def ratio_text(ratios):
    if not ratios:
        return "—"
    return spread(ratios, lambda r: f"{r:.1f}" if r < 100 else f"{r:,.0f}", "×")


def plural(n, word):
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def row(*cells):
    return "| " + " | ".join(cells) + " |"


def verdict(ok, within, total):
    text = "**met**" if ok else "**not met**"
    return f"{text} ({within} of {total} rounds within)" if total > 1 else text


def skipped_row(workload, status):
    reason = status.get("reason") or "no reason given"
    return row(workload, "—", f"skipped: {reason}", "—", "—", "—", "skipped")


class Table:
    def __init__(self, out):
        self.out = out
        self.rows = []
        self.notes = []
        self.status = {}
        for s in read_jsonl(os.path.join(out, "status.jsonl")):
            self.status[s["workload"]] = s

    def not_run(self, key, label):
        """Adds the skipped row of `key` and says so, if it did not run. A workload that failed
        still gets the rows of the figures it wrote before, and a note."""
        s = self.status.get(key)
        if s and s["status"] == "skipped":
            self.rows.append(skipped_row(label, s))
            return True
        return False

    def failed_note(self, key):
        s = self.status.get(key)
        if s and s["status"] == "failed":
            self.notes.append(f"{key} failed: {s['reason']}")

    # Parallel supersteps: scripts/bench.sh --only cpu_step.
    def cpu_step(self):
        label = "parallel supersteps (`cpu_step`)"
        if self.not_run("cpu_step", label):
            return
        lines = read_jsonl(os.path.join(self.out, "cpu_step", "results.jsonl"))
        rust = {d["round"]: d["us"] / 1e3 for d in lines if d["workload"] == "parallel/cpu_step"}
        py = {d["round"]: d["us"] / 1e3 for d in lines if d["workload"] == "cpu_step" and d["impl"] == "python"}
        if not rust:
            self.rows.append(row(label, "—", "no figures (see cpu_step.log)", "—", "—", "—", "—"))
            return
        rounds = sorted(rust)
        ratios = [py[r] / rust[r] for r in rounds if r in py]
        med = statistics.median(rust.values())
        within = sum(1 for v in rust.values() if v <= CPU_STEP_TARGET_MS)
        self.rows.append(row(
            label,
            f"4 nodes × 200 ms CPU in one superstep, 2 workers; {plural(len(rounds), 'round')}",
            spread(list(rust.values()), unit=" ms"),
            spread(list(py.values()), unit=" ms") if py else "—",
            ratio_text(ratios),
            f"≤ {CPU_STEP_TARGET_MS:.0f} ms",
            verdict(med <= CPU_STEP_TARGET_MS, within, len(rounds)),
        ))

    # Many threads at once: scripts/bench-scale.sh.
    def concurrent(self):
        if self.not_run("concurrent", "many threads at once"):
            return
        lines = read_jsonl(os.path.join(self.out, "concurrent", "results.jsonl"))
        by = {}
        for d in lines:
            by.setdefault((d["backend"], d["impl"], d["concurrency"]), {})[d["round"]] = d
        levels = sorted({d["concurrency"] for d in lines if d["impl"] == "rust"})
        names = {"memory": "in memory", "redis": "Redis", "mysql": "MySQL, durable"}
        errors = {}
        for backend in ("memory", "redis", "mysql"):
            label = f"many threads, {names[backend]}"
            if self.not_run(f"concurrent/{backend}", label):
                continue
            if not any(by.get((backend, "rust", c)) for c in levels):
                self.rows.append(row(label, "—", "no figures (see concurrent.log)", "—", "—", "—", "—"))
                continue
            for c in levels:
                rs = by.get((backend, "rust", c), {})
                if not rs:
                    continue
                py = by.get((backend, "python", c), {})
                rounds = sorted(rs)
                turns = rs[rounds[0]]["turns"] // c
                rust = [rs[r]["turns_per_s"] for r in rounds]
                python = [py[r]["turns_per_s"] for r in sorted(py) if "turns_per_s" in py[r]]
                for r in py:
                    if "error" in py[r]:
                        errors[backend] = py[r]["error"]
                ratios = [rs[r]["turns_per_s"] / py[r]["turns_per_s"]
                          for r in rounds if r in py and "turns_per_s" in py[r]]
                if ratios:
                    med = statistics.median(ratios)
                    within = sum(1 for x in ratios if x >= CONCURRENT_MIN_RATIO)
                    met = verdict(med >= CONCURRENT_MIN_RATIO, within, len(ratios))
                else:
                    met = "not measured: no Python figure"
                self.rows.append(row(
                    label,
                    f"{plural(c, 'thread')} × {plural(turns, 'turn')}; {plural(len(rounds), 'round')}",
                    spread(rust, unit=" turns/s"),
                    spread(python, unit=" turns/s") if python else ("error (below)" if backend in errors else "—"),
                    ratio_text(ratios),
                    f"≥ {CONCURRENT_MIN_RATIO:.0f}× Python",
                    met,
                ))
            if backend == "mysql":
                self.commit_rate(by)
        for backend, error in errors.items():
            self.notes.append(f"Python on {names[backend]}: {error.strip()}")

    def commit_rate(self, by):
        """Rust's durable commits/s at 64 threads against the server's own, the same rounds."""
        c = COMMIT_RATE_LEVEL
        label = "many threads, MySQL commit rate"
        rs = by.get(("mysql", "rust", c), {})
        ref = by.get(("mysql_commit", "reference", c), {})
        target = f"≥ {COMMIT_RATE_MIN_SHARE:.0%} of the server's commits/s"
        if not rs:
            return
        if not ref:
            self.rows.append(row(label, f"{c} threads", "—", f"no reference at {c} sessions",
                                 "—", target, "not measured"))
            return
        rounds = [r for r in sorted(rs) if r in ref and "commits_per_turn" in rs[r]]
        rust = [rs[r]["turns_per_s"] * rs[r]["commits_per_turn"] for r in rounds]
        server = [ref[r]["turns_per_s"] for r in rounds]
        shares = [a / b for a, b in zip(rust, server)]
        if not shares:
            return
        med = statistics.median(shares)
        within = sum(1 for x in shares if x >= COMMIT_RATE_MIN_SHARE)
        commits = statistics.median(rs[r]["commits_per_turn"] for r in rounds)
        self.rows.append(row(
            label,
            f"{c} threads; Rust's turns/s × its {commits:.1f} commits a turn, against {c} sessions "
            "of single-row commits",
            spread(rust, unit=" commits/s"),
            "server: " + spread(server, unit=" commits/s"),
            "Rust / server " + spread(shares, lambda x: f"{x:.0%}"),
            target,
            verdict(med >= COMMIT_RATE_MIN_SHARE, within, len(shares)),
        ))

    # Long threads: chat_turns --at and lg_bench.py chat_mysql --at.
    def long_threads(self):
        if self.not_run("long_threads", "long threads"):
            return
        d = os.path.join(self.out, "long_threads")
        sides = {}
        for side in ("plain", "delta", "python"):
            lines = read_jsonl(os.path.join(d, f"{side}.jsonl"))
            if lines and lines[-1].get("at"):
                sides[side] = lines[-1]
        if "plain" not in sides and "delta" not in sides:
            self.rows.append(row("long threads", "—", "no figures (see long_threads/)", "—", "—", "—", "—"))
            return
        any_side = next(iter(sides.values()))
        turns = any_side["turns"]
        points = [p["turn"] for p in any_side["at"]]
        setup = f"one MySQL thread of {turns:,} turns, at turns " + " / ".join(f"{t:,}" for t in points)
        py = sides.get("python")

        def series(side, key, fmt):
            if side is None:
                return "—"
            return " / ".join(fmt(p[key]) for p in side["at"])

        def last_ratio(side, key):
            if side is None or py is None:
                return "—"
            a, b = side["at"][-1][key], py["at"][-1][key]
            return ratio_text([b / a]) + f" at turn {side['at'][-1]['turn']:,}" if a else "—"

        def flat(side, key, tolerance):
            first, last = side["at"][0][key], side["at"][-1][key]
            grows = last / first if first else float("inf")
            text = "**met**" if grows <= tolerance else "**not met**"
            return f"{text} (last / first {grows:.2f})"

        byte = lambda x: f"{x:,} B"
        time = lambda x: ms(x / 1e3)
        python_bytes = series(py, "bytes_added", byte)
        python_time = series(py, "us_median", time)
        for mode in ("plain", "delta"):
            side = sides.get(mode)
            label = f"long threads, bytes a turn adds ({mode})"
            if side is None:
                self.rows.append(row(label, setup, "no figure (see long_threads/)", python_bytes,
                                     "—", "—", "—"))
                continue
            if mode == "plain":
                target, met = "— (LangGraph's format: O(n) per turn)", "—"
            else:
                target = f"flat per turn (last ≤ {FLAT_BYTES} × first)"
                met = flat(side, "bytes_added", FLAT_BYTES)
            self.rows.append(row(label, setup, series(side, "bytes_added", byte),
                                 python_bytes + (" (plain)" if mode == "delta" and py else ""),
                                 last_ratio(side, "bytes_added"), target, met))
        for mode in ("plain", "delta"):
            side = sides.get(mode)
            if side is None:
                continue
            label = f"long threads, ms a turn ({mode})"
            if mode == "plain":
                target, met = "—", "—"
            else:
                target = f"flat per turn (last ≤ {FLAT_TIME} × first)"
                met = flat(side, "us_median", FLAT_TIME)
            self.rows.append(row(label, "median of the ten turns around each point",
                                 series(side, "us_median", time), python_time,
                                 last_ratio(side, "us_median"), target, met))
        mb = lambda x: f"{x / 1e6:,.1f} MB"
        sizes = "; ".join(f"{mode} {mb(sides[mode]['thread_bytes'])}" for mode in ("plain", "delta")
                          if mode in sides and "thread_bytes" in sides[mode])
        if sizes:
            ratio = "—"
            if py and "delta" in sides and sides["delta"].get("thread_bytes"):
                ratio = ratio_text([py["thread_bytes"] / sides["delta"]["thread_bytes"]]) + " (delta)"
            self.rows.append(row("long threads, whole thread", f"{turns:,} turns, the three tables",
                                 sizes, mb(py["thread_bytes"]) if py else "—", ratio, "—", "—"))

    # Memory footprint: scripts/bench-footprint.sh.
    def footprint(self):
        if self.not_run("footprint", "memory footprint"):
            return
        lines = read_jsonl(os.path.join(self.out, "footprint", "output.txt"))
        live = {d["impl"]: d for d in lines if d.get("workload") == "footprint"}
        servers = {d["server"]: d for d in lines if "server" in d}
        kb = lambda x: f"{x / 1e3:.1f} KB a thread"
        none = "— (none set)"
        if "rust" in live:
            r, p = live["rust"], live.get("python")
            self.rows.append(row(
                "memory, live threads (in-memory saver)",
                f"{r['threads']:,} threads × {r['turns']} turns; RSS growth / threads",
                kb(r["bytes_per_thread"]),
                kb(p["bytes_per_thread"]) if p else "—",
                ratio_text([p["bytes_per_thread"] / r["bytes_per_thread"]]) if p else "—",
                none, "—",
            ))
        mb = lambda x: f"{x / 1e6:.1f} MB"
        rss = lambda d: f"{kb(d['bytes_per_thread'])} (RSS {mb(d['rss_start'])} → {mb(d['rss_idle'])})"
        py = servers.get("python-langgraph-dev")
        for name, saver in (("mnemograph-memory", "in-memory saver"), ("mnemograph-mysql", "MySQL saver")):
            label = f"memory, server holding idle threads ({saver})"
            d = servers.get(name)
            if d is None:
                reason = "no figure (see footprint/)"
                s = self.status.get("footprint/mysql")
                if name == "mnemograph-mysql" and s:
                    reason = f"{s['status']}: {s['reason']}"
                self.rows.append(row(label, "—", reason, "—", "—", none, "—"))
                continue
            twin = py if name == "mnemograph-memory" else None
            self.rows.append(row(
                label,
                f"{d['idle_threads']:,} threads run once each; RSS growth / threads",
                rss(d),
                ("`langgraph dev` " + rss(twin)) if twin else ("— (no Python twin)" if py else "—"),
                ratio_text([twin["bytes_per_thread"] / d["bytes_per_thread"]]) if twin else "—",
                none, "—",
            ))
        if not live and not servers:
            self.rows.append(row("memory footprint", "—", "no figures (see footprint/)", "—", "—", none, "—"))

    # Milvus retrieval: scripts/bench-milvus.sh --out.
    def milvus(self):
        if self.not_run("milvus", "Milvus retrieval"):
            return
        line = re.compile(r"^(rust|pymilvus) (.+?): \d+ \w+.*p50 ([0-9.]+) ms, p99 ([0-9.]+) ms")
        sizes = {}
        for path in glob.glob(os.path.join(self.out, "milvus", "times-*.log")):
            rows = int(re.search(r"times-(\d+)\.log$", path).group(1))
            p50 = {}  # (side, label) -> p50 of each round, in order
            with open(path) as f:
                for text in f:
                    m = line.match(text.strip())
                    if m:
                        p50.setdefault((m.group(1), m.group(2)), []).append(float(m.group(3)))
            if p50:
                sizes[rows] = p50
        if not sizes:
            self.rows.append(row("Milvus retrieval", "—", "no figures (see milvus/)", "—", "—", "—", "—"))
            return
        for rows in sorted(sizes):
            p50 = sizes[rows]
            for scope, suffix in (("default scope", ""), ("user filter only", " (user filter only)")):
                for mode in ("dense", "hybrid, server-fused"):
                    rust = p50.get(("rust", mode + suffix), [])
                    py = p50.get(("pymilvus", mode + suffix), [])
                    if not rust:
                        continue
                    ratios = [b / a for a, b in zip(rust, py) if a]
                    target, met = "—", "—"
                    if mode == "dense" and rows == MILVUS_TARGET_ROWS:
                        target = f"about {MILVUS_DENSE_TARGET_MS:.0f} ms p50 (read as ≤)"
                        med = statistics.median(rust)
                        within = sum(1 for x in rust if x <= MILVUS_DENSE_TARGET_MS)
                        met = verdict(med <= MILVUS_DENSE_TARGET_MS, within, len(rust))
                    self.rows.append(row(
                        f"Milvus {mode}",
                        f"{rows:,} memories, {scope}, p50; {plural(len(rust), 'round')}",
                        spread(rust, unit=" ms"),
                        ("pymilvus " + spread(py, unit=" ms")) if py else "—",
                        ratio_text(ratios),
                        target,
                        met,
                    ))
        if MILVUS_TARGET_ROWS not in sizes:
            self.rows.append(row(
                "Milvus dense", f"{MILVUS_TARGET_ROWS:,} memories", "not run (sizes: "
                + ", ".join(f"{s:,}" for s in sorted(sizes)) + ")", "—", "—",
                f"about {MILVUS_DENSE_TARGET_MS:.0f} ms p50", "not measured",
            ))

    def runs(self):
        """The runs table: how long each workload took and the load average it started at."""
        lines = [s for s in self.status.values() if "seconds" in s or "load" in s]
        if not lines:
            return []
        out = ["| workload | status | started (UTC) | seconds | load average at its start |",
               "|---|---|---|---|---|"]
        for s in lines:
            out.append(row(s["workload"], s["status"], s.get("started", "—"), s.get("seconds", "—"),
                           s.get("load", "—")))
        return out

    def render(self):
        self.cpu_step()
        self.concurrent()
        self.long_threads()
        self.footprint()
        self.milvus()
        for key in ("cpu_step", "concurrent", "long_threads", "footprint", "milvus"):
            self.failed_note(key)
        print(HEADER)
        print("|---|---|---|---|---|---|---|")
        for r in self.rows:
            print(r)
        print()
        print("Figures: medians over the rounds, range in parentheses. Ratio: how many times better")
        print("Rust's figure is (Python's time or memory / Rust's, Rust's rate / Python's), per round,")
        print("then the median. A target is met when the median over the rounds meets it.")
        for note in self.notes:
            print(f"- {note}")
        runs = self.runs()
        if runs:
            print()
            print("\n".join(runs))


def status(workload, state, reason="", *extra):
    line = {"workload": workload, "status": state}
    if reason:
        line["reason"] = reason
    for kv in extra:
        key, _, value = kv.partition("=")
        line[key] = value
    print(json.dumps(line, ensure_ascii=False))


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "status":
        status(*sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "table":
        Table(sys.argv[2]).render()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

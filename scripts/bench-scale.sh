#!/usr/bin/env bash
# Many conversations at once: chat turns per second at 1, 8, 64 and 256 concurrent threads on
# each saver (in memory, Redis, MySQL with every checkpoint durable), mnemograph
# (tests/reliability/examples/concurrent_turns.rs) against Python LangGraph's async savers
# (benches/python/lg_bench.py concurrent), next to what the server itself does in the same round:
# durable single-row commits per second from as many MySQL sessions, and `redis-benchmark` SETs
# per second from as many Redis clients. Prints one table and writes the exact commands.
#
# Usage: scripts/bench-scale.sh [--quick] [--rounds N] [--only LIST] [--concurrency LIST] [--out DIR]
#                              [--bin FILE]
#   --quick             2 rounds of half as many turns (about 1.5 minutes on 2 cores)
#   --rounds N          rounds (default 3; about 4 minutes on 2 cores, plus the first build)
#   --only LIST         comma-separated savers out of: memory,redis,mysql
#   --concurrency LIST  comma-separated thread counts (default 1,8,64,256)
#   --bin FILE          a concurrent_turns built before (e.g. from another commit) instead of
#                       building this tree's, to compare two builds run after run
#   --out DIR           where the figures go (default $CARGO_TARGET_DIR/bench-scale/DATE)
#
# RUST_MYSQL_PARAMS (e.g. '?max-connections=64') is appended to the Rust side's MySQL URL, to try
# the saver's pool settings.
#
# Needs MySQL or MariaDB at MYSQL_SERVER (default mysql://root@127.0.0.1:3306; the databases
# graph_scale_rs and graph_scale_py are dropped and recreated) and Redis at REDIS_URL (default
# redis://127.0.0.1:6379/); a saver whose server is unreachable is skipped. Within a round each
# workload runs on both sides back to back, Rust first in odd rounds and Python first in even
# ones, then the server's reference at the same concurrency.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3 quick=0 only="memory,redis,mysql" levels="1,8,64,256" out="" prebuilt=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; rounds=2 ;;
    --rounds) rounds=$2; shift ;;
    --only) only=$2; shift ;;
    --concurrency) levels=$2; shift ;;
    --bin) prebuilt=$2; shift ;;
    --out) out=$2; shift ;;
    *) sed -n '2,24p' "$0"; exit 2 ;;
  esac
  shift
done
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/graph-rs-target}
MYSQL_SERVER=${MYSQL_SERVER:-mysql://root@127.0.0.1:3306}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/}
out=${out:-$CARGO_TARGET_DIR/bench-scale/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/bin"
out=$(cd "$out" && pwd)
results=$out/results.jsonl commands=$out/commands.txt
: > "$results"
: > "$commands"
wanted() { [[ ",$only," == *",$1,"* ]]; }
log() { echo "$(date +%T) $*" >&2; }
# Runs a command and records it in commands.txt, once per distinct command.
run() { grep -qxF -- "$*" "$commands" || echo "$*" >> "$commands"; "$@"; }

# Turns per thread: the same on both sides, enough that the slower side runs for a second or
# more, few enough that Python's 256 threads finish within seconds.
turns_of() { # SAVER CONCURRENCY
  local t
  case "$1:$2" in
    mysql:1) t=100 ;; mysql:8) t=25 ;; mysql:64) t=10 ;; mysql:*) t=4 ;;
    *:1) t=200 ;; *:8) t=50 ;; *:64) t=10 ;; *) t=4 ;;
  esac
  [ $quick = 1 ] && t=$(( t / 2 > 2 ? t / 2 : 2 ))
  echo $t
}
# Single-row commits per MySQL session for the reference. The server refuses sessions beyond its
# max_connections (151 by default), less those others hold, so the reference stops at what is
# free at the start less a margin (at most 128); the table says how many it used.
commit_sessions() { echo $(( $1 > ref_cap ? ref_cap : $1 )); }
commits_per_session() { case $1 in 1) echo 500 ;; 8) echo 100 ;; 64) echo 50 ;; *) echo 25 ;; esac; }

PY=$(bash scripts/python-peer.sh)

if [ -n "$prebuilt" ]; then
  bin=$(cd "$(dirname "$prebuilt")" && pwd)/$(basename "$prebuilt")
else
  log "building (release)…"
  bin=$(run cargo build --release -p reliability --example concurrent_turns --message-format=json \
    | "$PY" benches/python/bench_table.py executables | grep '/concurrent_turns$' | tail -1)
fi
# A copy, so that a build elsewhere in the same target directory cannot swap it mid-run.
cp "$bin" "$out/bin/concurrent_turns"
origin="the build above"; [ -n "$prebuilt" ] && origin="given with --bin"
echo "# \$OUT/bin/concurrent_turns is a copy of $bin ($origin)" >> "$commands"

mysql_ok=1 redis_ok=1
if wanted mysql; then
  if ! "$PY" - "$MYSQL_SERVER" <<'EOF'
import sys
from urllib.parse import urlparse
import pymysql
u = urlparse(sys.argv[1])
c = pymysql.connect(host=u.hostname, port=u.port or 3306, user=u.username, password=u.password or "")
with c.cursor() as cur:
    for db in ("graph_scale_rs", "graph_scale_py"):
        cur.execute(f"DROP DATABASE IF EXISTS `{db}`")
EOF
  then log "MySQL at $MYSQL_SERVER is unreachable: skipped"; mysql_ok=0; fi
fi
ref_cap=128
if wanted mysql && [ $mysql_ok = 1 ]; then
  free=$("$PY" - "$MYSQL_SERVER" <<'EOF'
import sys
from urllib.parse import urlparse
import pymysql
u = urlparse(sys.argv[1])
c = pymysql.connect(host=u.hostname, port=u.port or 3306, user=u.username, password=u.password or "")
with c.cursor() as cur:
    cur.execute("SELECT @@max_connections - (SELECT COUNT(*) FROM information_schema.PROCESSLIST)")
    print(cur.fetchone()[0])
EOF
)
  ref_cap=$(( free - 16 < 128 ? free - 16 : 128 ))
fi
redis_host=$("$PY" -c 'import sys; from urllib.parse import urlparse; u = urlparse(sys.argv[1]); print(u.hostname, u.port or 6379)' "$REDIS_URL")
if wanted redis && ! redis-cli -h ${redis_host% *} -p ${redis_host#* } ping >/dev/null 2>&1; then
  log "Redis at $REDIS_URL is unreachable: skipped"; redis_ok=0
fi

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  dirty=$(git diff --quiet HEAD -- crates tests Cargo.lock || echo ' (with uncommitted changes)')
  echo "commit: $(git rev-parse --short HEAD)$dirty"
  echo "nproc: $(nproc), cpu:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  echo "rustc: $(rustc -V)"
  echo "python: $("$PY" -c 'import sys, importlib.metadata as m
print(sys.version.split()[0], *(f"{p} {m.version(p)}" for p in
      ("langgraph", "langgraph-checkpoint-mysql", "aiomysql", "langgraph-checkpoint-plainredis")))')"
  [ $mysql_ok = 1 ] && wanted mysql && echo "mysql: $(mysql -h "$("$PY" -c 'import sys; from urllib.parse import urlparse; print(urlparse(sys.argv[1]).hostname)' "$MYSQL_SERVER")" -uroot -N -e "SELECT CONCAT(VERSION(), ', innodb_flush_log_at_trx_commit=', @@innodb_flush_log_at_trx_commit, ', max_connections=', @@max_connections)" 2>/dev/null || echo '?')"
  [ $redis_ok = 1 ] && wanted redis && echo "redis: $(redis-cli -h ${redis_host% *} -p ${redis_host#* } info server | grep -m1 redis_version | tr -d '\r')"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/machine.txt"

# The server's process, when it runs on this machine: its CPU time is read around every MySQL
# run (the whole process: its setup and the read-back after the timing count too), so that the
# client's CPU per turn (which each side measures over its timed turns) and the server's show
# which of the two the cores are spent on.
mysqld=$(pgrep -x mariadbd || pgrep -x mysqld || true)
ticks() { [ -n "$mysqld" ] && awk '{print $14 + $15}' "/proc/$mysqld/stat" || echo 0; }
tag() { # ROUND [SERVER_TICKS]: adds "round" (and CPU times per turn) to every JSON line
  "$PY" -c 'import json, os, sys
hz = os.sysconf("SC_CLK_TCK")
for line in sys.stdin:
    line = line.strip()
    if not line.startswith("{"):
        continue
    d = json.loads(line)
    d["round"] = int(sys.argv[1])
    if d.get("turns") and "client_cpu_s" in d:
        d["client_cpu_ms_per_turn"] = round(d["client_cpu_s"] * 1e3 / d["turns"], 4)
    if len(sys.argv) > 2 and d.get("turns"):
        d["server_cpu_ms_per_turn"] = round(int(sys.argv[2]) * 1e3 / hz / d["turns"], 4)
    print(json.dumps(d))' "$@"
}
measured() { # ROUND SAVER COMMAND...: runs COMMAND, on MySQL with its CPU times
  local r=$1 saver=$2; shift 2
  if [ "$saver" != mysql ]; then
    { run "$@" 2>> "$out/stderr.txt" || log "failed (see $out/stderr.txt): $*"; } | tag "$r" >> "$results"
    return
  fi
  local before after
  before=$(ticks)
  run "$@" 2>> "$out/stderr.txt" > "$out/line.txt" || log "failed (see $out/stderr.txt): $*"
  after=$(ticks)
  if [ -n "$mysqld" ]; then
    tag "$r" $((after - before)) < "$out/line.txt" >> "$results"
  else
    tag "$r" < "$out/line.txt" >> "$results"
  fi
}
rust_side() { # ROUND SAVER C
  measured "$1" "$2" env MYSQL_URL="$MYSQL_SERVER/graph_scale_rs${RUST_MYSQL_PARAMS:-}" "$out/bin/concurrent_turns" "$2" "$3" \
    "$(turns_of "$2" "$3")"
}
python_side() { # ROUND SAVER C
  measured "$1" "$2" env MYSQL_URL="$MYSQL_SERVER/graph_scale_py" "$PY" benches/python/lg_bench.py concurrent \
    "$(turns_of "$2" "$3")" --backend "$2" --concurrency "$3"
}
reference() { # ROUND SAVER C
  local r=$1 c=$3
  case $2 in
    mysql)
      measured "$r" mysql env MYSQL_URL="$MYSQL_SERVER/graph_scale_rs" "$out/bin/concurrent_turns" \
        mysql_commit "$(commit_sessions "$c")" "$(commits_per_session "$c")" ;;
    redis)
      # One SET per request from C clients, no pipelining: the server's rate of round trips.
      { run redis-benchmark -h "${redis_host% *}" -p "${redis_host#* }" -t set -c "$c" -n 20000 -q 2>&1 || true; } \
        | tr '\r' '\n' | grep -m1 'requests per second' \
        | "$PY" -c 'import json, re, sys
line = sys.stdin.read()
rate = float(re.search(r"SET: ([0-9.]+) requests per second", line).group(1))
p50 = re.search(r"p50=([0-9.]+) msec", line)
print(json.dumps({"workload": "concurrent/redis_set", "impl": "reference", "backend": "redis_set",
                  "concurrency": int(sys.argv[1]), "turns_per_s": rate,
                  "p50_ms": float(p50.group(1)) if p50 else None}))' "$c" | tag "$r" >> "$results" \
        || log "redis-benchmark gave no figure at $c clients" ;;
  esac
}

start=$(date +%s)
IFS=, read -ra cs <<< "$levels"
for r in $(seq 1 "$rounds"); do
  for saver in memory redis mysql; do
    wanted $saver || continue
    [ $saver = mysql ] && [ $mysql_ok = 0 ] && continue
    [ $saver = redis ] && [ $redis_ok = 0 ] && continue
    for c in "${cs[@]}"; do
      log "round $r/$rounds: $saver, $c threads"
      if [ $((r % 2)) = 1 ]; then
        rust_side "$r" $saver "$c"; python_side "$r" $saver "$c"
      else
        python_side "$r" $saver "$c"; rust_side "$r" $saver "$c"
      fi
      reference "$r" $saver "$c"
    done
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
echo "wall time: $(( $(date +%s) - start )) s for $rounds rounds" >> "$out/machine.txt"

REF_CAP=$ref_cap "$PY" - "$results" > "$out/table.md" <<'EOF'
import json, os, statistics, sys
from collections import defaultdict

ref_cap = int(os.environ["REF_CAP"])

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = defaultdict(dict)  # (backend, impl, concurrency) -> round -> line
for d in rows:
    by[(d["backend"], d["impl"], d["concurrency"])][d["round"]] = d
levels = sorted({d["concurrency"] for d in rows if d["impl"] == "rust"})
rounds = sorted({d["round"] for d in rows})

def fmt(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"

def med(values, unit=""):
    if not values:
        return "—"
    m = statistics.median(values)
    rng = f" ({fmt(min(values))}–{fmt(max(values))})" if len(values) > 1 else ""
    return f"{fmt(m)}{unit}{rng}"

print("| workload | concurrency | Rust turns/s | Python turns/s | Rust / Python | DB limit | Rust p50 / p99 | Python p50 / p99 |")
print("|---|---|---|---|---|---|---|---|")
errors = {}
for backend in ("memory", "redis", "mysql"):
    for c in levels:
        rs = by.get((backend, "rust", c), {})
        if not rs:
            continue
        py = by.get((backend, "python", c), {})
        rust = [rs[r]["turns_per_s"] for r in rounds if r in rs]
        python = [py[r]["turns_per_s"] for r in rounds if r in py and "turns_per_s" in py[r]]
        ratios = [rs[r]["turns_per_s"] / py[r]["turns_per_s"] for r in rounds
                  if r in rs and r in py and "turns_per_s" in py[r]]
        for r in rounds:
            if r in py and "error" in py[r]:
                errors[backend] = py[r]["error"]
        ref_backend = {"mysql": "mysql_commit", "redis": "redis_set"}.get(backend)
        ref = by.get((ref_backend, "reference", min(c, ref_cap) if backend == "mysql" else c), {})
        limit = [ref[r]["turns_per_s"] for r in rounds if r in ref]
        unit = {"mysql": " commits/s", "redis": " SET/s"}.get(backend, "")
        if backend == "mysql" and c > ref_cap and limit:
            unit += f" ({ref_cap} sessions)"
        lat = lambda side, r: f'{side[r]["p50_ms"]:.2f} / {side[r]["p99_ms"]:.2f} ms'
        mid = lambda side, vals: min((r for r in rounds if r in side and "p50_ms" in side[r]),
                                     key=lambda r: abs(side[r]["turns_per_s"] - statistics.median(vals)),
                                     default=None)
        rl = mid(rs, rust)
        pl = mid(py, python) if python else None
        workload = {"memory": "in memory", "redis": "Redis", "mysql": "MySQL, durable"}[backend]
        print(f"| {workload} | {c} | {med(rust)} | "
              f"{med(python) if python else ('error' if backend in errors else '—')} | "
              f"{med(ratios, '×') if ratios else '—'} | {med(limit, unit) if limit else '—'} | "
              f"{lat(rs, rl) if rl else '—'} | {lat(py, pl) if pl else '—'} |")
print()
print("Turns/s: all turns of a run over its wall time, median over the rounds (range); Rust / Python:")
print("the ratio within each round, then the median; latencies: the round with the median rate.")
for backend, error in errors.items():
    print(f"Python {backend}: {error}")
mysql = [d for d in rows if d["backend"] == "mysql" and "commits_per_turn" in d]
for side in ("rust", "python"):
    lines = [d for d in mysql if d["impl"] == side]
    if lines:
        s = lambda k: statistics.median(d[k] for d in lines)
        print(f"MySQL, {side}: per turn {s('statements_per_turn'):.1f} statements, "
              f"{s('commits_per_turn'):.1f} commits, {s('log_writes_per_turn'):.2f} redo log writes "
              f"(server counters, medians over all runs)")
cpu = [d for d in rows if d["backend"] in ("mysql", "mysql_commit") and "client_cpu_ms_per_turn" in d]
if cpu:
    print()
    print("CPU time per turn on MySQL (per commit for the reference), medians over the rounds:")
    print()
    print("| concurrency | side | client ms | server ms | cores busy (client + server) / wall |")
    print("|---|---|---|---|---|")
    for c in levels:
        for side, backend in (("rust", "mysql"), ("python", "mysql"), ("reference", "mysql_commit")):
            want = min(c, ref_cap) if side == "reference" else c
            ls = [d for d in cpu if d["impl"] == side and d["backend"] == backend and d["concurrency"] == want]
            if not ls:
                continue
            m = lambda k: statistics.median(d.get(k, 0) for d in ls)
            busy = statistics.median((d["client_cpu_ms_per_turn"] + d.get("server_cpu_ms_per_turn", 0))
                                     * d["turns"] / 1e3 / d["seconds"] for d in ls)
            server = f"{m('server_cpu_ms_per_turn'):.3f}" if "server_cpu_ms_per_turn" in ls[0] else "—"
            print(f"| {c} | {side} | {m('client_cpu_ms_per_turn'):.3f} | {server} | {busy:.2f} |")
EOF
. scripts/bench-summary.sh
write_summary "$out" "$commands" "$PY" "Figures: $results"

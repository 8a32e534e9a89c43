# Sourced by the scale benchmarks (scripts/bench-scale.sh, scripts/bench-scale-all.sh).

# write_summary OUT COMMANDS PY LAST_LINE: prints a run's summary (the machine, the table, the
# commands that reproduce it with the out dir and the Python peer as variables, then LAST_LINE)
# and keeps it as OUT/summary.md.
write_summary() {
  local out=$1 commands=$2 py=$3 last=$4
  {
    cat "$out/machine.txt"
    echo
    cat "$out/table.md"
    echo
    echo "Commands (from the repository root):"
    echo "    OUT=$out"
    sed "s|$out|\$OUT|g; s|$py|\$PY|g; s/^/    /" "$commands"
    echo "    # with PY=\$(bash scripts/python-peer.sh)"
    echo
    echo "$last"
  } | tee "$out/summary.md"
}

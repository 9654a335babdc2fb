#!/bin/sh
# Issue 41's check once more, quiet, after the order is judged pair by pair (a650c66):
# `schedlab predict --validate` with 12 rounds instead of the default 6, so that a pair of
# variants has 6 or more rounds in which both ran in one placement (the host moves the CPUs in
# about a third of them), then summary.py. From the project root, after cargo build --release.
set -eu
d=notes/results/2026-12-05-predict-order
bin=./target/release/schedlab
{ "$bin" --version; git describe --always --dirty --abbrev=7; rustc --version; nproc;
  grep -m1 'model name' /proc/cpuinfo; uname -r; cat /proc/loadavg; date -u; } > "$d/provenance.txt"
"$bin" predict --validate --rounds 12 --save-calibration "$d/calibration.json" \
  --json "$d/validate.json" > "$d/validate.txt" 2> "$d/validate.err"
{ cat /proc/loadavg; date -u; } >> "$d/provenance.txt"
python3 "$d/summary.py" "$d/validate.json" > "$d/summary.md"

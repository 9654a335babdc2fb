#!/bin/sh
# (Copy of 2026-12-05-predict-placement/run.sh, after the predict-wait model fixes a1bf7c7, 02d6711.)
# Issue 41's check, quiet: `schedlab predict --validate` with its defaults (calibration here, then
# 1 and 2 threads, both lock kinds, every safe variant, outside 0 and 1000 ns, 6 rounds), then
# summary.py, which also holds every run against the calibration's prediction alone (the rule
# before d5a7c4d) for comparison. From the project root, after cargo build --release.
set -eu
d=notes/results/2026-12-05-predict-validate
bin=./target/release/schedlab
{ git describe --always --dirty --abbrev=7; rustc --version; nproc; grep -m1 'model name' /proc/cpuinfo;
  uname -r; cat /proc/loadavg; date -u; } > "$d/provenance.txt"
"$bin" predict --validate --save-calibration "$d/calibration.json" --json "$d/validate.json" \
  > "$d/validate.txt" 2> "$d/validate.err"
cat /proc/loadavg >> "$d/provenance.txt"
python3 notes/results/2026-12-05-predict-placement/summary.py "$d/validate.json" > "$d/summary.md"

#!/bin/sh
# Issue 41: two jobs' lock phases on the machine beside predict's simulation (phases.rs), both
# lock kinds, 3 rounds of 1 s per point, on the calibration's machine profile (transfer probed
# before each point). From the project root on a quiet machine:
#   cargo build --release -p schedlab-benches --example phases
#   sh notes/results/2026-12-05-phases/run.sh
set -eu
d=notes/results/2026-12-05-phases
bin=./target/release/examples/phases
cal=notes/results/2026-12-05-predict-order/calibration.json
{ git describe --always --dirty --abbrev=7; rustc --version; nproc;
  grep -m1 'model name' /proc/cpuinfo; uname -r; cat /proc/loadavg; date -u; } > "$d/provenance.txt"
for lock in fair-spin parking-lot; do
  "$bin" "$cal" "$lock" 1 3 > "$d/$lock.md" 2> "$d/$lock.log"
  { cat /proc/loadavg; date -u; } >> "$d/provenance.txt"
done

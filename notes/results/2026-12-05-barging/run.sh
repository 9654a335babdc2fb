#!/bin/sh
# The barging probe (benches/examples/barging.rs), quiet: both lock kinds, 10 (hold, gap) points,
# 3 rounds of 1 s, interleaved; the simulation on the machine of the 13:00 validation's calibration
# with the transfer probed before each point. From the project root, after
# cargo build --release -p schedlab-benches --example barging.
set -eu
d=notes/results/2026-12-05-barging
ex=./target/release/examples/barging
cal=notes/results/2026-12-05-predict-validate/calibration.json
{ git describe --always --dirty --abbrev=7; rustc --version; nproc; grep -m1 'model name' /proc/cpuinfo;
  uname -r; cat /proc/loadavg; date -u; } > "$d/provenance.txt"
"$ex" "$cal" parking-lot 1 3 > "$d/parking-lot.md" 2> "$d/parking-lot.log"
"$ex" "$cal" fair-spin 1 3 > "$d/fair-spin.md" 2> "$d/fair-spin.log"
{ cat /proc/loadavg; date -u; } >> "$d/provenance.txt"

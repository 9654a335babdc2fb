#!/bin/sh
# Issue 41: why the model's fair-spin points with 1000 ns outside collapse at two threads.
# Part 1 (simulation only, deterministic): the calibration of 2026-12-05-predict-order predicted
# again with one input changed at a time (transfer, interruptions, the lines each hold pulls),
# each time printing KIOPS and the scheduler lock's owner changes per acquisition.
# Part 2 (measured, quiet machine): compare at two threads, fair-spin, 1000 ns outside, every
# default variant, lock statistics on (owner changes and contentions are exact counts).
# From the project root, after cargo build --release: sh notes/results/2026-12-05-convoy/run.sh
set -eu
d=notes/results/2026-12-05-convoy
bin=./target/release/schedlab
{ "$bin" --version; git describe --always --dirty --abbrev=7; rustc --version; nproc;
  grep -m1 'model name' /proc/cpuinfo; uname -r; cat /proc/loadavg; date -u; } > "$d/provenance.txt"
python3 "$d/inputs.py" "$d"
for f in "$d"/sim/*.json; do
  case "$f" in *.out.json) continue ;; esac
  name=$(basename "$f" .json)
  case "$name" in
    topology-*) args="--calibration $d/calibration.json --topology $f" ;;
    calibration-*) args="--calibration $f" ;;
  esac
  # shellcheck disable=SC2086
  "$bin" predict $args --threads 2 --lock fair-spin --outside-list 1000 \
    --json "$d/sim/$name.out.json" > /dev/null 2>> "$d/sim/predict.err"
done
if [ "${SKIP_MEASURE:-0}" != 1 ]; then
  "$bin" compare --threads 2 --lock fair-spin --outside-ns 1000 --rounds 5 --no-aa \
    --placement pool --json "$d/compare.json" > "$d/compare.txt" 2> "$d/compare.err"
  { cat /proc/loadavg; date -u; } >> "$d/provenance.txt"
fi
python3 "$d/summary.py" "$d" > "$d/summary.md"

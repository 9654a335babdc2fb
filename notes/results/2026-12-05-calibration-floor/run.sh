#!/bin/sh
# The model's own floor at one thread (issue 41's order at one thread, issue 42's floor): the same
# binary calibrates N times in a row on the quiet machine, and each calibration predicts the
# one-thread points of `predict --validate`. Nothing is measured against the prediction here:
# the spread between calibrations is how finely the model can order two variants at all.
# From the project root, after cargo build --release.
set -eu
d=notes/results/2026-12-05-calibration-floor
bin=./target/release/schedlab
n=${N:-4}
{ "$bin" --version; git describe --always --dirty --abbrev=7; rustc --version; nproc;
  grep -m1 'model name' /proc/cpuinfo; uname -r; cat /proc/loadavg; date -u; } > "$d/provenance.txt"
i=1
while [ "$i" -le "$n" ]; do
  "$bin" predict --threads 1 --lock both --outside-list 0,1000 \
    --save-calibration "$d/calibration-$i.json" --json "$d/predict-$i.json" \
    > "$d/predict-$i.txt" 2> "$d/predict-$i.err"
  { cat /proc/loadavg; date -u; } >> "$d/provenance.txt"
  i=$((i + 1))
done
python3 "$d/summary.py" "$d" "$n" notes/results/2026-12-05-predict-order/validate.json > "$d/summary.md"

#!/bin/sh
# Issue 41 item 1: where the 2-thread prediction goes wrong, segment by segment. One calibration
# and prediction (this machine, 1 and 2 threads), then compare's instrumented runs of the same
# workloads (lock statistics on in alternating windows), and segments.py sets them side by side.
# Run from the repository root on a quiet machine: sh notes/results/2026-12-05-predict-segments/run.sh
set -eu
out=notes/results/2026-12-05-predict-segments
bin=target/release/schedlab
variants=sched-lock,queue-lock,epoch,no-stats
{ date -u; uname -r; nproc; rustc --version; git rev-parse --short HEAD; git status --short | head -5; } > $out/provenance.txt
$bin predict --threads 1,2 --variants $variants --lock both --outside-list 0,1000 \
  --save-calibration $out/calibration.json --json $out/predict.json > $out/predict.txt 2> $out/predict.err
for lock in fair-spin parking-lot; do
  for outside in 0 1000; do
    for threads in 1 2; do
      $bin compare --threads $threads --lock $lock --variants $variants --outside-ns $outside \
        --rounds 5 --no-aa --placement pool \
        --json $out/compare-$lock-$outside-$threads.json > /dev/null 2> $out/compare-$lock-$outside-$threads.err
    done
  done
done
python3 $out/segments.py $out > $out/segments.md
cat $out/segments.md

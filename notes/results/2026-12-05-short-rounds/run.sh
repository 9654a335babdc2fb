#!/bin/sh
# Issue 42's check with rounds short enough to fit inside a placement spell: three compare runs
# in a row with runs of 0.5 s after a 0.1 s ramp (a round of 8 runs about 5 s, so that three
# rounds fit in the shortest placement spell seen, 17 s; the default 1 s + 0.25 s makes 10 s),
# then --baseline against the first (same commit). Run from the repository root, quiet, with the
# release binary built at the commit under test: sh notes/results/2026-12-05-short-rounds/run.sh
set -e
out=$(dirname "$0")
B=${SCHEDLAB:-target/release/schedlab}
{
  echo "commit $(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- core variants benches src || echo -dirty) (the binary's own: each JSON's provenance)"
  echo "date $(date -u +%FT%TZ)"
  echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs"
  rustc --version
  echo "load before: $(cat /proc/loadavg)"
} > "$out/provenance.txt"
for i in 1 2 3; do
  $B compare --duration 0.5 --ramp 0.1 --json "$out/short-run$i.json" > "$out/short-run$i.txt" 2> "$out/short-run$i.err"
  echo "short-run$i done $(date -u +%T), load $(cat /proc/loadavg)" >> "$out/provenance.txt"
done
$B compare --duration 0.5 --ramp 0.1 --baseline "$out/short-run1.json" --json "$out/short-baseline.json" > "$out/short-baseline.txt" 2> "$out/short-baseline.err"
echo "baseline done $(date -u +%T), load $(cat /proc/loadavg)" >> "$out/provenance.txt"

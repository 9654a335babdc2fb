#!/bin/sh
# Issue 42's check with the old build interleaved: three `schedlab compare` runs in a row, each
# given this very build (a copy) as its baseline build. From the project root, quiet, after
# cargo build --release. `sh run.sh same` makes the default runs (60 s each), `sh run.sh long 4m`
# the same with --max-time 4m.
set -eu
d=notes/results/2026-12-05-baseline-build
bin=./target/release/schedlab
name=${1:-same}
cp "$bin" /tmp/schedlab-same
{ echo "== $name ${2:-}"; git describe --always --dirty --abbrev=7; rustc --version; nproc;
  grep -m1 'model name' /proc/cpuinfo; uname -r; cat /proc/loadavg; date -u; } >> "$d/provenance.txt"
for i in 1 2 3; do
  "$bin" compare --baseline /tmp/schedlab-same ${2:+--max-time "$2"} --json "$d/$name-$i.json" \
    > "$d/$name-$i.txt" 2> "$d/$name-$i.err" || echo "run $i: exit $?" >> "$d/provenance.txt"
  cat /proc/loadavg >> "$d/provenance.txt"
done

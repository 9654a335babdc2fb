#!/bin/sh
# Issue 42's check: three default compare runs in a row on a quiet machine, then --baseline
# against the first (same commit). Run at 0fc3b3d; its outputs are kept here as before-*.
set -e
B=/work/main/target/release/schedlab
for i in 1 2 3; do
  $B compare --json run$i.json --report run$i.html > run$i.txt 2> run$i.err
done
$B compare --baseline run1.json --json baseline.json > baseline.txt 2> baseline.err

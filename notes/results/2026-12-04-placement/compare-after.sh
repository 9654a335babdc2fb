#!/bin/sh
# Issue 42's check after the placement control: three default compare runs in a row on a quiet
# machine, then --baseline against the first (same commit). Run from this folder with the
# release binary built at the commit under test: SCHEDLAB=/path/to/schedlab ./compare-after.sh
set -e
B=${SCHEDLAB:-../../../target/release/schedlab}
for i in 1 2 3; do
  $B compare --json after-run$i.json > after-run$i.txt 2> after-run$i.err
done
$B compare --baseline after-run1.json --json after-baseline.json > after-baseline.txt 2> after-baseline.err

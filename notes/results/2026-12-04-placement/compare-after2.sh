#!/bin/sh
# Issue 42's check after moved rounds are never kept (acc8e60): three default compare runs in a
# row on a quiet machine, then --baseline against the first (same commit). Run from this folder with the
# release binary built at the commit under test: SCHEDLAB=/path/to/schedlab ./compare-after2.sh
set -e
B=${SCHEDLAB:-../../../target/release/schedlab}
for i in 1 2 3; do
  $B compare --json after2-run$i.json > after2-run$i.txt 2> after2-run$i.err
done
$B compare --baseline after2-run1.json --json after2-baseline.json > after2-baseline.txt 2> after2-baseline.err

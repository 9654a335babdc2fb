#!/usr/bin/env bash
# Issue 31 item 2: how the seeds' ratios in `compare` move with the submission sites. Runs
# `schedlab compare` (every safe variant, the seeds' defaults: null device, 4 groups, fair-spin)
# under --kernel bare (insert only), 4.12 (bio merge + insert: the seeds' kernels) and 6.18
# (bio merge + depth limit + insert), the three interleaved and repeated REPEATS times (default 2),
# into the folder given (default: this script's folder)/generations, then prints the seeds'
# ratios per profile with generations.py. Run from the repository root on a quiet machine.
set -euo pipefail
out=${1:-$(dirname "$0")}/generations
repeats=${REPEATS:-2}
mkdir -p "$out"
cargo build --release -q
bin=target/release/schedlab
{
  echo "commit $(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- core variants benches src || echo -dirty)"
  echo "date $(date -u +%FT%TZ)"
  echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs"
  rustc --version
  echo "load before: $(cat /proc/loadavg)"
} > "$out/provenance.txt"
for r in $(seq 1 "$repeats"); do
  for k in bare 4.12 6.18; do
    echo "== $bin compare --kernel $k --rounds 3 --duration 1 --json $out/$k-$r.json" | tee -a "$out/provenance.txt"
    "$bin" compare --kernel "$k" --rounds 3 --duration 1 --json "$out/$k-$r.json" > "$out/$k-$r.txt" 2> "$out/$k-$r.stderr"
    echo "   load after: $(cat /proc/loadavg)" | tee -a "$out/provenance.txt"
  done
done
python3 "$(dirname "$0")/generations.py" "$out"/*.json > "$out/ratios.txt"
cat "$out/ratios.txt"

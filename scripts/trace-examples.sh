#!/usr/bin/env bash
# The example traces of notes/tracing.md: sched-lock and queue-lock, 2 threads, the fair lock,
# each traced twice (everything; lock slices only, no fields), and sched-lock on parking-lot. Keeps each run's output, the
# trace-summary of its trace and an SVG excerpt (the traces themselves, 5-20 MB each, stay in
# TRACE_DIR). Usage: bash scripts/trace-examples.sh [OUT_DIR] [TRACE_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-notes/results/2026-11-29-tracing}
TRACES=${2:-target/traces}
mkdir -p "$OUT" "$TRACES"
cargo build --release -q --bin schedlab
B=target/release/schedlab
{
  echo "commit=$(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- . ':!notes' || echo -dirty)"
  echo "rustc=$(rustc --version)"
  echo "cpus=$(nproc) model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "date=$(date -u +%FT%TZ)"
  echo "command=bash scripts/trace-examples.sh $OUT $TRACES"
} > "$OUT/provenance.txt"
for v in sched-lock queue-lock; do
  args=(run --variant "$v" --threads 2 --duration 1 --ramp 0.25 --lock fair-spin)
  echo "schedlab ${args[*]} --trace $TRACES/$v-full.json" > "$OUT/$v-full.run.txt"
  "$B" "${args[@]}" --trace "$TRACES/$v-full.json" >> "$OUT/$v-full.run.txt"
  "$B" trace-summary "$TRACES/$v-full.json" --svg "$OUT/$v-full.svg" --span-us 400 > "$OUT/$v-full.summary.txt"
  lean=(--trace-filter schedlab::lock=trace --trace-no-args)
  echo "schedlab ${args[*]} ${lean[*]} --trace $TRACES/$v-locks.json" > "$OUT/$v-locks.run.txt"
  "$B" "${args[@]}" "${lean[@]}" --trace "$TRACES/$v-locks.json" >> "$OUT/$v-locks.run.txt"
  "$B" trace-summary "$TRACES/$v-locks.json" --svg "$OUT/$v-locks.svg" --span-us 100 > "$OUT/$v-locks.summary.txt"
done
# The unfair lock for contrast: sched-lock on parking-lot, lock slices only.
args=(run --variant sched-lock --threads 2 --duration 1 --ramp 0.25 --lock parking-lot)
lean=(--trace-filter schedlab::lock=trace --trace-no-args)
echo "schedlab ${args[*]} ${lean[*]} --trace $TRACES/sched-lock-parking-locks.json" > "$OUT/sched-lock-parking-locks.run.txt"
"$B" "${args[@]}" "${lean[@]}" --trace "$TRACES/sched-lock-parking-locks.json" >> "$OUT/sched-lock-parking-locks.run.txt"
"$B" trace-summary "$TRACES/sched-lock-parking-locks.json" --svg "$OUT/sched-lock-parking-locks.svg" --span-us 100 \
  > "$OUT/sched-lock-parking-locks.summary.txt"
# One more excerpt: the end of the longest stall in the lock-only sched-lock trace (both threads
# waiting: the thread whose ticket is up is off its CPU), 60 µs before it ends to 40 µs after.
"$B" trace-summary "$TRACES/sched-lock-locks.json" --stall-svg "$OUT/sched-lock-locks-stall.svg" > /dev/null

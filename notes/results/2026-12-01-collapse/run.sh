#!/usr/bin/env bash
# The fair lock under oversubscription (issue 12, item 6): sched-lock at 1, 2, 4, 8, 16 jobs on
# both lock kinds, quiet and with one CPU-bound process beside it, REPS interleaved repetitions.
# Each run writes its JSON (provenance, KIOPS, per-job KIOPS, other processes' CPUs) to raw/;
# summarize.py turns them into the tables of ../2026-12-01-collapse.md.
# Usage (from the repository root, after cargo build --release):
#   bash notes/results/2026-12-01-collapse/run.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")"
BIN=../../../target/release/schedlab
REPS=${1:-5}
mkdir -p raw
hog=""
stop_hog() { if [ -n "$hog" ]; then kill "$hog" 2>/dev/null || true; wait "$hog" 2>/dev/null || true; hog=""; fi; }
trap stop_hog EXIT
for rep in $(seq 1 "$REPS"); do
  for load in quiet loaded; do
    if [ "$load" = loaded ]; then (while :; do :; done) & hog=$!; fi
    for lock in fair-spin parking-lot; do
      for t in 1 2 4 8 16; do
        "$BIN" run --variant sched-lock --threads "$t" --duration 1 --ramp 0.1 --lock "$lock" \
          --json "raw/$load-$lock-t$t-r$rep.json" >/dev/null 2>>raw/warnings.txt
      done
    done
    stop_hog
  done
done

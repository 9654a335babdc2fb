#!/bin/sh
# Issue 41 items 1-2: the recorded 2026-12-05 validation predicted again before and after the
# model fixes, and the simulation's lock counters beside the measured lock statistics. No
# measurement of the scheduler: deterministic simulation on saved calibrations only.
# From the repository root. OLD: a build of 84b404d; NEW: a build of this commit; COUNTERS: a
# build of this commit with sim-counters.patch applied (git apply).
set -eu
d=notes/results/2026-12-05-predict-wait
python3 $d/repredict.py notes/results/2026-12-05-predict-placement/validate.json \
  "$OLD" "$NEW" "${TMPDIR:-/tmp}/predict-wait-repredict" > $d/repredict.md
python3 $d/counters.py "$COUNTERS" notes/results/2026-12-05-predict-segments \
  "${TMPDIR:-/tmp}/predict-wait-counters" > $d/counters.md

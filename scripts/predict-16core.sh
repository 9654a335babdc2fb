#!/usr/bin/env bash
# Measured against predicted from 1 to 16 threads on a machine with at least 16 CPUs (and, where it
# can run, `schedlab kernel` at 1..16 threads: the real BFQ in the seeds' regime): every safe
# variant, both lock kinds, direct insert, outside work 0. `schedlab predict --validate` measures
# this machine's profile (cores and siblings from sysfs, line transfers, wake-ups), calibrates
# every variant single-threaded (never on the runs it is judged on), predicts 1..16 threads, then
# runs the workload at each thread count, jobs pinned one per CPU as the model places them, and
# prints measured beside predicted with the error and the variants' order.
#
# Budget: about 12 calibrations × 2 s + 6 variants × 2 locks × 16 thread counts × (0.8 s + 0.1 s
# ramp) ≈ 3.5 min, re-runs of noisy runs bounded (--retries 1); killed at 9.5 min whatever happens.
#
# Usage: bash scripts/predict-16core.sh [OUTPUT_DIR]   (default: notes/results/<date>-predict-16core)
#        FORCE=1 bash scripts/predict-16core.sh        runs on fewer than 16 CPUs too (up to their count)
#
# A machine without cargo (the lent 16-core device machine) runs a binary built elsewhere:
# SCHEDLAB_BIN=path/to/schedlab, with SCHEDLAB_COMMIT and SCHEDLAB_RUSTC for the provenance.
set -euo pipefail
cd "$(dirname "$0")/.."
CPUS=$(nproc)
THREADS=16
if [ "$CPUS" -lt 16 ]; then
  if [ "${FORCE:-0}" != 1 ]; then
    echo "predict-16core.sh: this machine has $CPUS CPUs; the script is for one with at least 16 (FORCE=1 runs 1..$CPUS here)" >&2
    exit 2
  fi
  THREADS=$CPUS
fi
OUT=${1:-notes/results/$(date -u +%Y-%m-%d)-predict-16core}
mkdir -p "$OUT"
if [ -n "${SCHEDLAB_BIN:-}" ]; then
  B=$SCHEDLAB_BIN
else
  cargo build --release -q
  B=target/release/schedlab
fi
[ -x "$B" ] || { echo "predict-16core.sh: no schedlab binary at $B" >&2; exit 2; }
COMMIT=${SCHEDLAB_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
RUSTC=${SCHEDLAB_RUSTC:-$(rustc --version 2>/dev/null || echo unknown)}
{
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname): $CPUS CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "# kernel $(uname -r); commit $COMMIT; $RUSTC; binary $B"
  echo "# command: scripts/predict-16core.sh (predict --validate --threads 1-$THREADS --lock both --insert direct --outside-list 0 --rounds 1 --duration 0.8 --ramp 0.1 --retries 1 --pin)"
  echo "# lscpu: $(lscpu | grep -E '^(Thread|Core|Socket|NUMA node\(s\))' | tr -s ' ' | tr '\n' ';')"
  echo "# load before: $(cut -d' ' -f1-4 /proc/loadavg)"
} >"$OUT/machine.txt"
cat "$OUT/machine.txt"
timeout --signal=INT "${PREDICT_LIMIT_S:-570}" "$B" predict --validate --threads "1-$THREADS" --lock both --insert direct \
  --outside-list 0 --rounds 1 --duration 0.8 --ramp 0.1 --retries 1 --pin \
  --save-calibration "$OUT/calibration.json" --save-topology "$OUT/topology.json" \
  --json "$OUT/predict-validate.json" 2>&1 | tee "$OUT/predict-validate.txt"
echo "wrote $OUT (predict-validate.txt: measured beside predicted; the JSON has every run and the calibration)"
# The kernel peer at 1..16 threads (the seeds' regime on a real kernel), where this machine can run
# it (root, fio, perf, bpftrace, BFQ, a free loop device: scripts/kernel-ready.sh). About 35 s per
# thread count: 1 round of 1 s, no profile.
if why=$(bash scripts/kernel-ready.sh); then
  for t in 1 2 4 8 16; do
    [ "$t" -le "$THREADS" ] || break
    timeout --signal=INT 120 "$B" kernel --threads "$t" --duration 1 --ramp 0.1 --rounds 1 --groups 4 --no-profile \
      --model-lock parking-lot --json "$OUT/kernel-$t.json" > "$OUT/kernel-$t.txt" 2>&1 || echo "kernel at $t threads: exit $?" >> "$OUT/kernel-failures.txt"
  done
  echo "wrote $OUT/kernel-*.txt (schedlab kernel at 1..$THREADS threads)"
else
  {
    echo "schedlab kernel skipped: $why"
    # What this kernel offers, so the note can say what a kernel peer would need here.
    echo "kernel: $(uname -r); root: $([ "$(id -u)" = 0 ] && echo yes || echo no)"
    for tool in fio perf bpftrace losetup; do echo "$tool: $(command -v $tool || echo absent)"; done
    echo "block schedulers: $(cat /sys/block/*/queue/scheduler 2>/dev/null | sort -u | tr '\n' ';' || echo none readable)"
    echo "bfq module: $(grep -c '^bfq ' /proc/modules 2>/dev/null || echo unreadable)"
    echo "loop devices: $(ls /dev/loop* 2>/dev/null | wc -l); cgroup2: $(grep -c ' cgroup2 ' /proc/mounts 2>/dev/null)"
    echo "tracefs lock events: $(ls /sys/kernel/tracing/events/lock 2>/dev/null | tr '\n' ' ' || echo none)"
  } | tee "$OUT/kernel-skipped.txt"
fi

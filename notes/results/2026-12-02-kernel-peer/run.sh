#!/usr/bin/env bash
# Reproduces notes/results/2026-12-02-kernel-peer.md: the issue's check command with flamegraphs,
# the same with the model on parking-lot, and the same with the model's outside work at 0 (the
# model as every other command runs it). Run as root from the repository root, on a quiet
# machine; writes into the folder given (default: this script's folder).
set -euo pipefail
out=${1:-$(dirname "$0")}
bin=target/release/schedlab
cargo build --release -q
{
  echo "commit $(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- core variants benches src || echo -dirty)"
  echo "date $(date -u +%FT%TZ)"
  echo "kernel $(uname -r)"
  echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs"
  rustc --version
  fio --version; perf --version; bpftrace --version
  echo "load before: $(cat /proc/loadavg)"
} > "$out/provenance.txt"
run() {
  local name=$1; shift
  echo "== $name: $bin kernel $*" | tee -a "$out/provenance.txt"
  /usr/bin/time -f "%e s wall" -o "$out/$name.time" "$bin" kernel "$@" --json "$out/$name.json" > "$out/$name.txt" 2> "$out/$name.stderr"
  echo "   load after: $(cat /proc/loadavg), $(cat "$out/$name.time")" | tee -a "$out/provenance.txt"
}
run check --threads 2 --duration 2 --rounds 3 --groups 4 --flamegraphs "$out/fg"
run parking-lot --threads 2 --duration 2 --rounds 3 --groups 4 --model-lock parking-lot --no-profile --contention off
run outside-0 --threads 2 --duration 2 --rounds 3 --groups 4 --model-outside-ns 0 --no-profile --contention off
python3 "$(dirname "$0")/ratios.py" "$out"/check.json "$out"/parking-lot.json "$out"/outside-0.json > "$out/ratios.txt"

#!/usr/bin/env bash
# The model's half of issue 40's seeds' experiment after the model's jobs take turns on the CPUs
# (driver/turns.rs) and its completion contexts do the device's work before the completion, held
# against the kernel halves recorded on 2026-12-04 (this session's kernel has no BFQ:
# CONFIG_IOSCHED_BFQ is not set), with the model inputs those runs used (--model-from):
#   inject-4  `--inject 0,2000,4000 --threads 4`, kernel half of ../2026-12-04-softirq/inject-4.json
#   inject-2  `--inject 0,2000 --threads 2`, kernel half of ../2026-12-04-softirq/inject-2.json
#   points    the model at 1 job x iodepth 32 and 2 jobs x iodepth 32 (check.json's inputs), per
#             site, with the completion after the device's work (now) and before it (BEFORE=
#             path to a model_point binary built before 80a6ac6)
# Run as root from the repository root, quiet.
set -euo pipefail
out=${1:-$(dirname "$0")}
rec=notes/results/2026-12-04-softirq
bin=target/release/schedlab
cargo build --release -q
cargo build --release -q -p schedlab-benches --example model_point
{
  echo "commit $(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- core variants benches src || echo -dirty)"
  echo "date $(date -u +%FT%TZ)"
  echo "kernel $(uname -r) (BFQ: $(zcat /proc/config.gz 2>/dev/null | grep -c '^CONFIG_IOSCHED_BFQ=' || true))"
  echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs"
  rustc --version
  echo "load before: $(cat /proc/loadavg)"
} > "$out/provenance.txt"
run() {
  local name=$1; shift
  echo "== $name: $bin kernel $*" | tee -a "$out/provenance.txt"
  /usr/bin/time -f "%e s wall" -o "$out/$name.time" "$bin" kernel "$@" --json "$out/$name.json" > "$out/$name.txt" 2> "$out/$name.stderr" || echo "   exit $?" | tee -a "$out/provenance.txt"
  echo "   load after: $(cat /proc/loadavg), $(cat "$out/$name.time")" | tee -a "$out/provenance.txt"
}
run inject-4 --inject 0,2000,4000 --threads 4 --kernel-from "$rec/inject-4.json" --model-from "$rec/k4.json" --svg "$out/inject-4.svg"
run inject-2 --inject 0,2000 --threads 2 --kernel-from "$rec/inject-2.json" --model-from "$rec/check.json" --svg "$out/inject-2.svg"
for p in "1 32" "2 32"; do
  set -- $p
  echo "== point $1x$2 (this commit)" | tee -a "$out/provenance.txt"
  target/release/examples/model_point "$rec/check.json" "$1" "$2" 5 > "$out/point-$1x$2.txt"
  if [ -n "${BEFORE:-}" ]; then
    echo "== point $1x$2 (completion first, before 80a6ac6)" | tee -a "$out/provenance.txt"
    "$BEFORE" "$rec/check.json" "$1" "$2" 5 > "$out/point-$1x$2-before.txt"
  fi
done
echo "load after all: $(cat /proc/loadavg)" >> "$out/provenance.txt"

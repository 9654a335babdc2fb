#!/usr/bin/env bash
# Makes the runs of issue 40's check for this results page (after completions moved into the
# jobs' interrupt points and the holds per site to one job at iodepth 1), into the folder given (default: this
# script's folder):
#   check     the issue's command, `schedlab kernel --threads 2 --duration 2 --rounds 5 --groups 4`,
#             at every point of the default axis ({1, 2} jobs x iodepth {1, 32}), with the HTML
#             report and the chart: the fidelity table, its null-model and constant columns and
#             the lock sites are in check.txt / check.json;
#   k4        the main point at 4 jobs (its lock sites and pads, for --inject at 4 jobs);
#   inject-2  `--inject 0,2000 --threads 2`, the model that check.json judged (--model-from);
#   inject-4  `--inject 0,2000,4000 --threads 4`, the model that k4.json judged;
# Run as root from the repository root, on a quiet machine (the runs flag any other load in
# their warnings: *.stderr). SKIP_CHECK=1 reuses an existing check.json.
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
  /usr/bin/time -f "%e s wall" -o "$out/$name.time" "$bin" kernel "$@" --json "$out/$name.json" > "$out/$name.txt" 2> "$out/$name.stderr" || echo "   exit $?" | tee -a "$out/provenance.txt"
  echo "   load after: $(cat /proc/loadavg), $(cat "$out/$name.time")" | tee -a "$out/provenance.txt"
}
[ "${SKIP_CHECK:-0}" = 1 ] || run check --threads 2 --duration 2 --rounds 5 --groups 4 --report "$out/check.html" --svg "$out/check.svg"
run inject-2 --inject 0,2000 --threads 2 --model-from "$out/check.json" --svg "$out/inject-2.svg"
run k4 --threads 4 --points main --duration 2 --rounds 5 --groups 4
run inject-4 --inject 0,2000,4000 --threads 4 --model-from "$out/k4.json" --svg "$out/inject-4.svg"

#!/usr/bin/env bash
# Makes the runs of issue 31's check for the fidelity results page, into the folder given
# (default: this script's folder), as notes/results/2026-12-02-kernel-peer/run.sh did for issue 23:
#   check        the issue's command, `schedlab kernel --threads 2 --duration 2 --rounds 3 --groups 4`,
#                at every point of the default axis ({1, 2} jobs x iodepth {1, 32}), with flamegraphs,
#                the HTML report and the chart: the fidelity table is in check.txt / check.json;
#   parking-lot  the same with the model on parking-lot (profiles kept: the elevator cost is
#                measured again; no contention recording);
#   outside-0    the same with the model's outside work and elevator cost at 0 (the model as every
#                other command runs it).
# Run as root from the repository root, on a quiet machine (the runs flag any other load in
# their warnings: *.stderr). POINTS=main makes the check one point (a quick look, not the page);
# OTHER_POINTS (default main) is the axis of the parking-lot and outside-0 runs: their question
# (the lock kind, the outside work) is asked at the main point, which keeps the quiet window short.
set -euo pipefail
out=${1:-$(dirname "$0")}
points=${POINTS:-auto}
other_points=${OTHER_POINTS:-main}
bin=target/release/schedlab
cargo build --release -q
{
  echo "commit $(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- core variants benches src || echo -dirty)"
  echo "date $(date -u +%FT%TZ)"
  echo "kernel $(uname -r)"
  echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs"
  rustc --version
  fio --version; perf --version; bpftrace --version
  echo "points $points (parking-lot, outside-0: $other_points)"
  echo "load before: $(cat /proc/loadavg)"
} > "$out/provenance.txt"
run() {
  local name=$1 points=$2; shift 2
  echo "== $name: $bin kernel $*" | tee -a "$out/provenance.txt"
  /usr/bin/time -f "%e s wall" -o "$out/$name.time" "$bin" kernel "$@" --points "$points" --json "$out/$name.json" > "$out/$name.txt" 2> "$out/$name.stderr"
  echo "   load after: $(cat /proc/loadavg), $(cat "$out/$name.time")" | tee -a "$out/provenance.txt"
}
run check "$points" --threads 2 --duration 2 --rounds 3 --groups 4 --flamegraphs "$out/fg" --report "$out/check.html" --svg "$out/check.svg"
run parking-lot "$other_points" --threads 2 --duration 2 --rounds 3 --groups 4 --model-lock parking-lot --contention off
run outside-0 "$other_points" --threads 2 --duration 2 --rounds 3 --groups 4 --model-outside-ns 0 --model-elevator-ns 0 --no-profile --contention off
python3 "$(dirname "$0")/fidelity.py" "$out"/check.json "$out"/parking-lot.json "$out"/outside-0.json > "$out/fidelity.txt"

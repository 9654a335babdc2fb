#!/usr/bin/env bash
# Makes every kind of `--report` page and shoots each with headless Chromium at 1280 px, into
# notes/reports/ (its README says what each shows). Run it on a quiet machine, from the project
# root, after `cargo build --release`: the pages carry their own timings. The kernel peer's page
# needs root, BFQ, fio, perf and bpftrace; without them it is left as it was, and the script says
# so. Usage: bash scripts/report-shots.sh [OUT_DIR]   (default notes/reports)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-notes/reports}")
bin=$PWD/target/release/schedlab
[ -x "$bin" ] || { echo "no $bin: run cargo build --release first" >&2; exit 2; }
command -v chromium >/dev/null || { echo "chromium is not installed (apt-get install chromium)" >&2; exit 2; }
root=$PWD
commit=$(git -C "$root" describe --always --dirty --abbrev=7)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
cd "$work"
"$bin" compare --threads 2 --lock parking-lot --duration 0.5 --rounds 3 \
  --variants sched-lock,queue-lock,epoch,debug-off,rstat,no-stats --brief \
  --report compare.html --svg compare.svg
"$bin" sweep --threads 1,2 --variants sched-lock,debug-off --duration 0.1 \
  --lockstat-duration 0 --csv sweep.csv --svg sweep.svg --report sweep.html
"$bin" simulate --device hdd --jobs 4 --iodepth 1 --runtime 2 --report simulate.html
"$bin" roundtrip --rounds 3 --iterations 20000 --report roundtrip.html
"$bin" flamegraph --variant sched-lock --diff sched-lock debug-off --threads 2 --duration 0.5 \
  --out fg --report flamegraph.html
"$bin" run --variant sched-lock --threads 2 --duration 0.3 --lockstat --trace trace.json \
  --report run.html
"$bin" trace-summary trace.json --svg excerpt.svg --report trace-summary.html
"$bin" predict --topology "$root/notes/topology/i7-4850hq.json" --threads 1-8 --report predict.html
kinds="compare sweep simulate roundtrip flamegraph run trace-summary predict"
if [ "$(id -u)" = 0 ] && "$bin" kernel --threads 1 --duration 0.5 --rounds 1 --svg kernel.svg \
  --report kernel.html; then
  kinds="$kinds kernel"
else
  echo "the kernel peer's page was not made (it needs root, BFQ, fio, perf and bpftrace):" \
    "kernel.png is left as it was" >&2
fi
# The kernel peer's --inject page needs none of that when its kernel half is read from a recorded
# run (--kernel-from: 2 jobs on this machine kind's BFQ, 2026-12-04): the model's half runs here,
# and the page says where the kernel's came from.
recorded=$root/notes/results/2026-12-04-fidelity
if "$bin" kernel --inject 0,2000 --threads 2 --kernel-from "$recorded/inject-2.json" \
  --model-from "$recorded/check.json" --svg kernel-inject.svg --report kernel-inject.html; then
  kinds="$kinds kernel-inject"
fi
shoot() { # shoot FILE PNG WIDTH HEIGHT
  chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --screenshot="$2" \
    --window-size="$3,$4" "file://$work/$1" >/dev/null 2>&1
}
for kind in $kinds; do
  shoot "$kind.html" "$out/$kind.png" 1280 1100
done
shoot compare.svg "$out/compare-chart.png" 660 700
cp compare.svg "$out/compare-chart.svg"
{
  "$bin" run --variant no-stats --threads 1 --duration 0.01 --json "$work/provenance.json" >/dev/null 2>&1
  echo "binary's commit: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["provenance"]["commit"])' "$work/provenance.json") ($("$bin" --version)); tree: $commit"
  echo "rustc: $(rustc --version)"
  echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "load average before: $load_before"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "kinds: $kinds"
} >"$out/shots.txt"
echo "shots in $out: $kinds (provenance in shots.txt)"

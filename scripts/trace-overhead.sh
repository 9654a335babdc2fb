#!/usr/bin/env bash
# What the tracing instrumentation costs when nobody records it (notes/tracing.md).
#
# Three builds of the `schedlab` binary:
#   before    BASE (default c22da2a, the last commit without the tracing spans), release
#   traced    HEAD, release: every span compiled in, no subscriber recording TRACE (the default)
#   no-trace  HEAD, release, --features no-trace: every TRACE site compiled out
# Then
#   1. callgrind instructions per round trip, per variant and build (repeatable: no noise);
#   2. `schedlab compare --measure plain` interleaved: ROUNDS rounds, each running the three builds
#      in a rotated order; per variant, KIOPS of traced / before and traced / no-trace in the same
#      round, median (min-max) over rounds.
# Usage: bash scripts/trace-overhead.sh [OUT_DIR] [ROUNDS] [BASE]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-notes/results/2026-11-29-tracing-overhead}
ROUNDS=${2:-5}
BASE=${3:-c22da2a}
mkdir -p "$OUT"
ROOT=$(pwd)
T=target/trace-overhead

if [ ! -x "$T/before/release/schedlab" ]; then
  rm -rf "$T/before-src"
  git worktree add -f --detach "$T/before-src" "$BASE" >/dev/null
  (cd "$T/before-src" && CARGO_TARGET_DIR="$ROOT/$T/before" cargo build --release -q --bin schedlab)
  git worktree remove --force "$T/before-src"
fi
cargo build --release -q --bin schedlab
CARGO_TARGET_DIR=$T/notrace cargo build --release -q --bin schedlab --features no-trace
declare -A BIN=([before]=$T/before/release/schedlab [traced]=target/release/schedlab [no-trace]=$T/notrace/release/schedlab)
BUILDS=(before traced no-trace)
VARIANTS=(sched-lock queue-lock epoch debug-off no-stats)

{
  echo "base=$BASE head=$(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- . ':!notes' || echo -dirty)"
  echo "rustc=$(rustc --version)"
  echo "cpus=$(nproc) model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "date=$(date -u +%FT%TZ)"
  echo "command=bash scripts/trace-overhead.sh $OUT $ROUNDS $BASE"
} > "$OUT/provenance.txt"

# 1. Instructions per round trip, counted only inside the round-trip closure (callgrind's
#    --toggle-collect): no start-up, no set-up, no clock calibration, so the count is exact and
#    repeatable. The closure runs N * 1.1 times (10 % warm-up).
if command -v valgrind >/dev/null; then
  N=10000
  echo "variant,build,instructions_per_round_trip" > "$OUT/callgrind.csv"
  for v in "${VARIANTS[@]}"; do
    for b in "${BUILDS[@]}"; do
      collected=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "--toggle-collect=*roundtrip::measure::*closure*" \
        "${BIN[$b]}" roundtrip --variant "$v" --rounds 1 --iterations "$N" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
      echo "$v,$b,$(( collected * 10 / (N * 11) ))" >> "$OUT/callgrind.csv"
    done
  done
fi

# 2. Interleaved compare rounds.
for r in $(seq 1 "$ROUNDS"); do
  shift_by=$(( (r - 1) % 3 ))
  order=("${BUILDS[@]:$shift_by}" "${BUILDS[@]:0:$shift_by}")
  for b in "${order[@]}"; do
    echo "round $r: $b" >&2
    "${BIN[$b]}" compare --measure plain --rounds 1 --duration 1 --ramp 0.25 --brief \
      --json "$OUT/compare-r$r-$b.json" >/dev/null
  done
done

python3 - "$OUT" "$ROUNDS" <<'EOF'
import json, sys, statistics, csv, os
out, rounds = sys.argv[1], int(sys.argv[2])
builds = ["before", "traced", "no-trace"]
kiops = {}  # (variant, build) -> [per round]
for r in range(1, rounds + 1):
    for b in builds:
        d = json.load(open(f"{out}/compare-r{r}-{b}.json"))
        for res in d["results"]:
            kiops.setdefault((res["variant"], b), []).append(res["kiops"]["runs"][0])
variants = sorted({v for v, _ in kiops}, key=["sched-lock", "queue-lock", "epoch", "debug-off", "no-stats"].index)
def fmt(xs):
    return f"{statistics.median(xs):.3f} ({min(xs):.3f}–{max(xs):.3f})"
lines = ["| variant | KIOPS before | KIOPS traced | KIOPS no-trace | traced ÷ before | traced ÷ no-trace |",
         "| --- | ---: | ---: | ---: | ---: | ---: |"]
for v in variants:
    k = {b: kiops[(v, b)] for b in builds}
    vs_before = [t / p for t, p in zip(k["traced"], k["before"])]
    vs_off = [t / p for t, p in zip(k["traced"], k["no-trace"])]
    lines.append(f"| {v} | {statistics.median(k['before']):.0f} | {statistics.median(k['traced']):.0f} | "
                 f"{statistics.median(k['no-trace']):.0f} | {fmt(vs_before)} | {fmt(vs_off)} |")
if os.path.exists(f"{out}/callgrind.csv"):
    rows = list(csv.DictReader(open(f"{out}/callgrind.csv")))
    ins = {(r["variant"], r["build"]): int(r["instructions_per_round_trip"]) for r in rows}
    lines += ["", "| variant | instructions / round trip: before | traced | no-trace | traced − no-trace | traced − before |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for v in variants:
        t, n, b = ins[(v, 'traced')], ins[(v, 'no-trace')], ins[(v, 'before')]
        lines.append(f"| {v} | {b} | {t} | {n} | {t - n:+d} ({100 * (t - n) / n:+.1f} %) | {t - b:+d} ({100 * (t - b) / b:+.1f} %) |")
open(f"{out}/summary.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF

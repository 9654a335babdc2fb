#!/bin/bash
# The floor of the measured acquisition: how much of the lock statistics' cost is left when parts
# of the fast path are taken out. Builds five binaries from one commit (the shipped path and four
# cuts, each a patch in this folder, none of them shippable: each drops something the
# statistics report), then measures them interleaved:
#   a  no per-class held counts and no `work` test at the release (records fold inside outer
#      holds; no "inside" split; kept records and gap redraws wait for the next timed release)
#   b  a as well, and no owner check, no exact-mode test: the per-(class, path) countdown only
#      (the exact count and the sampler), i.e. "count every acquisition" and nothing else
#   c  b as well, and lock acquisitions not counted at all: what is left is the guard word's
#      release branch, the statistics sections' countdowns and samples, and (contended only) the
#      contention count and the wait sampler
#   d  b with one countdown per class instead of per (class, path): the cheapest count of this
#      design (b's cut plus one, not on top of c)
# Each patch is taken against the pristine file and applied to it alone. The figures in the
# results page's §8 were made before d was added: d's are in callgrind-d.txt and roundtrip-b-d.txt.
# Usage: floor.sh [COMMIT] (default HEAD); run from the repository root; outputs in $OUT (default
# /tmp/floorrun).
set -euo pipefail
commit=${1:-HEAD}
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/floorrun}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
wt=$(mktemp -d /tmp/floor-wt.XXXXXX)
git worktree add -f -d "$wt" "$commit" >/dev/null
trap 'git worktree remove --force "$wt"' EXIT
build() { (cd "$wt" && cargo build --release -p schedlab -q && cp target/release/schedlab "$OUT/schedlab-$1"); }
build head
for p in a-no-held-counts b-count-only c-no-lock-counting d-count-only-per-class; do
  (cd "$wt" && git checkout -q core/src/sync/measure.rs && git apply "$here/floor-$p.diff")
  l=${p:0:1}; build "floor${l^^}"
done
cg=$here/../callgrind.sh
{ echo "# callgrind.sh VARIANT with SCHEDLAB=<binary>, $(date -u +%FT%TZ), $(git rev-parse --short=12 "$commit") (instructions are"
  echo "# deterministic; the plain figure differs between binaries because code layout does)"
  for b in head floorA floorB floorC floorD; do for v in sched-lock no-stats; do
    SCHEDLAB=$OUT/schedlab-$b bash "$cg" $v | sed "s/^/$b /"
  done; done; } | tee "$OUT/callgrind.txt"
"$OUT/schedlab-head" run --variant sched-lock --threads 1 --duration 0.5 --lockstat > "$OUT/run-counts.txt" 2>&1
for r in 1 2 3; do for b in head floorA floorB floorC floorD; do for v in sched-lock no-stats; do
  echo "== $r $b $v"; "$OUT/schedlab-$b" roundtrip --variant $v --lockstat --rounds 7 2>&1 | grep -E "^$v "
done; done; done | tee "$OUT/roundtrip.txt"
cmp() { "$OUT/schedlab-$1" compare --lock "$2" --variants sched-lock,queue-lock,no-stats,epoch 2>&1 | grep -E "^(sched-lock|queue-lock|no-stats|epoch) "; }
for r in 1 2 3; do for b in head floorC; do echo "== round $r $b"; cmp $b both; done; done | tee "$OUT/compare-both-head-c.txt"
for r in 1 2 3; do for b in head floorA floorB; do echo "== round $r $b"; cmp $b parking-lot; done; done | tee "$OUT/compare-parking-lot-head-a-b.txt"

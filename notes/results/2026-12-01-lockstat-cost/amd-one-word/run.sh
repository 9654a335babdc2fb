#!/usr/bin/env bash
# Issue 13, §7 of ../../2026-12-01-lockstat-cost.md: the one-word guard, the countdown as the
# count, the owner written at the release, holds 1 in 256, the bookkeeping before the attempt.
# Run from the repository root after `cargo build --release`; OLD is a release build of the
# commit before (8d7cb40), built in a worktree. Timing runs first (nothing else running), then
# the deterministic instruction counts.
set -euo pipefail
out=notes/results/2026-12-01-lockstat-cost/amd-one-word
new=target/release/schedlab
old=${OLD:-/tmp/old-target/release/schedlab}
{ date -u; git rev-parse --short HEAD; "$old" --version; rustc --version; nproc; grep -m1 'model name' /proc/cpuinfo; uptime; } > $out/provenance.txt
# compare, the old and the new binary interleaved, 3 runs each per lock kind
for i in 1 2 3; do
  for lock in fair-spin parking-lot; do
    $old compare --lock $lock > $out/compare-$lock-old-$i.txt 2>&1
    $new compare --lock $lock > $out/compare-$lock-new-$i.txt 2>&1
  done
done
# the round trip (alternating windows on one scheduler: the new binary's method)
for lock in fair-spin parking-lot; do
  $new roundtrip --lockstat --rounds 7 --lock $lock > $out/roundtrip-$lock.txt 2>&1
done
cargo test --release -p schedlab-core --test lockstat_accuracy -- --nocapture > $out/accuracy.txt 2>&1
$new run --variant sched-lock --threads 2 --duration 2 --lockstat exact > $out/run-exact-fair-spin.txt 2>&1
$new run --variant sched-lock --threads 2 --duration 2 --lockstat exact --lock parking-lot > $out/run-exact-parking-lot.txt 2>&1
$new flamegraph --variant all --threads 2 --duration 2 --out /tmp/fg-one-word > $out/flamegraph.txt 2>&1
uptime >> $out/provenance.txt
# instructions per round trip, two callgrind streams at a time (counts do not depend on load)
cg_new=notes/results/2026-12-01-lockstat-cost/callgrind.sh
cg_old=${OLD_CALLGRIND:-/tmp/old/notes/results/2026-12-01-lockstat-cost/callgrind.sh}
: > $out/callgrind.txt
for lock in fair-spin parking-lot; do
  for v in sched-lock queue-lock unlocked epoch debug-off rstat no-stats; do
    { echo "new $lock $(bash $cg_new $v --lock $lock)"; } >> $out/callgrind.txt &
    { echo "old $lock $(SCHEDLAB=$old bash $cg_old $v --lock $lock)"; } >> $out/callgrind.txt &
    wait
  done
done

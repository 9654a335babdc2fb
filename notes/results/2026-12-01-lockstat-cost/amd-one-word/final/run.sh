#!/usr/bin/env bash
# The shipped code (after the revert of the bookkeeping before the attempt): the round trip,
# one more compare per lock kind, the accuracy test, instructions per round trip.
set -euo pipefail
d=notes/results/2026-12-01-lockstat-cost/amd-one-word/final
b=target/release/schedlab
{ date -u; git rev-parse --short HEAD; uptime; } > $d/provenance.txt
for lock in fair-spin parking-lot; do
  $b roundtrip --lockstat --rounds 7 --lock $lock > $d/roundtrip-$lock.txt 2>&1
  $b compare --lock $lock > $d/compare-$lock.txt 2>&1
done
cargo test --release -p schedlab-core --test lockstat_accuracy -- --nocapture > $d/accuracy.txt 2>&1
uptime >> $d/provenance.txt
: > $d/callgrind.txt
for v in sched-lock queue-lock unlocked epoch debug-off rstat no-stats; do
  bash notes/results/2026-12-01-lockstat-cost/callgrind.sh $v >> $d/callgrind.txt &
  bash notes/results/2026-12-01-lockstat-cost/callgrind.sh $v --lock parking-lot | sed 's/^/parking-lot /' >> $d/callgrind.txt &
  wait
done

#!/usr/bin/env bash
# The checks repeated at the branch's last code commit (instruction counts, the accuracy test as the
# machine was and beside two CPU hogs, exact-mode runs). From the repository root, after
# `cargo build --release` and `cargo test --release -p schedlab-core --no-run`.
set -uo pipefail
cd "$(dirname "$0")/../../.."
R=notes/results/2026-12-01-lockstat-cost/raw/final
mkdir -p "$R"
git rev-parse --short=12 HEAD > "$R/commit.txt"
for v in sched-lock queue-lock unlocked epoch debug-off no-stats; do
  bash notes/results/2026-12-01-lockstat-cost/callgrind.sh $v
  bash notes/results/2026-12-01-lockstat-cost/callgrind.sh $v --lock parking-lot
done > "$R/callgrind.txt" 2>&1
T=$(ls -t target/release/deps/lockstat_accuracy-* | grep -v '\.d$' | head -1)
{ echo "== as the machine was"; uptime; for i in 1 2 3 4; do "$T" --nocapture 2>&1 | grep -E "rounds,|test result|panicked"; done
  echo "== beside two CPU hogs"; (timeout 60 sh -c 'while :; do :; done' & timeout 60 sh -c 'while :; do :; done' &); sleep 1; uptime
  for i in 1 2 3; do "$T" --nocapture 2>&1 | grep -E "rounds,|test result|panicked"; done; } > "$R/accuracy.txt" 2>&1
sleep 40
for lock in fair-spin parking-lot; do
  target/release/schedlab run --variant sched-lock --threads 2 --duration 2 --lock $lock --lockstat exact > "$R/run-exact-$lock.txt" 2>&1
done

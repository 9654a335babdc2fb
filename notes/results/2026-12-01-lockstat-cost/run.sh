#!/usr/bin/env bash
# Issue 13's checks, as run for notes/results/2026-12-01-lockstat-cost.md. Usage (from the
# repository root, after `cargo build --release`): bash notes/results/2026-12-01-lockstat-cost/run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=target/release/schedlab
R=notes/results/2026-12-01-lockstat-cost/raw
mkdir -p "$R"
uptime > "$R/uptime-start.txt"
# 1. Single-threaded round trip, lock statistics on against off, interleaved per round, both lock kinds.
for lock in fair-spin parking-lot; do
  $B roundtrip --lockstat --rounds 9 --lock $lock > "$R/roundtrip-$lock.txt" 2>&1
done
# 2. compare with its defaults (one run per variant and round; the cost from alternating windows).
$B compare --json "$R/compare-default.json" > "$R/compare-default.txt" 2>&1
# 3. both lock kinds at 2 threads, one-run mode; then the two-run mode for the same question.
$B compare --lock both --json "$R/compare-both-locks.json" > "$R/compare-both-locks.txt" 2>&1
$B compare --lock both --measure both --json "$R/compare-both-locks-two-runs.json" > "$R/compare-both-locks-two-runs.txt" 2>&1
# 4. flamegraphs of every variant at 2 threads, three times.
for i in 1 2 3; do
  $B flamegraph --variant all --threads 2 --duration 2 --out "$R/flamegraphs-$i" > "$R/flamegraph-$i.txt" 2>&1
  rm -f "$R/flamegraphs-$i"/*.svg "$R/flamegraphs-$i"/*.folded
done
# 5. Sampled against exact in real runs (exact mode keeps the sampler's picks apart).
for lock in fair-spin parking-lot; do
  $B run --variant sched-lock --threads 2 --duration 2 --lock $lock --lockstat exact > "$R/run-exact-$lock.txt" 2>&1
done
uptime > "$R/uptime-end.txt"

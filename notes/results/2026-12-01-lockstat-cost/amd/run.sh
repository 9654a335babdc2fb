#!/usr/bin/env bash
# Issue 13 on the AMD EPYC machine of this kind, after wait sampling: every command of §6 of
# ../../2026-12-01-lockstat-cost.md, outputs beside this script. Run from the repository root
# with a release build (cargo build --release).
set -euo pipefail
out=notes/results/2026-12-01-lockstat-cost/amd
bin=target/release/schedlab
{ date -u; git rev-parse --short HEAD; rustc --version; nproc; grep -m1 'model name' /proc/cpuinfo; uptime; } > $out/provenance.txt
for i in 1 2 3; do
  $bin compare > $out/compare-default-$i.txt 2>&1
  $bin compare --lock parking-lot > $out/compare-parking-lot-$i.txt 2>&1
done
$bin roundtrip --lockstat --rounds 15 --iterations 100000 > $out/roundtrip-fair-spin.txt 2>&1
$bin roundtrip --lockstat --rounds 15 --iterations 100000 --lock parking-lot > $out/roundtrip-parking-lot.txt 2>&1
cargo test --release -p schedlab-core --test lockstat_accuracy -- --nocapture > $out/accuracy.txt 2>&1
$bin run --variant sched-lock --threads 2 --duration 2 --lockstat exact > $out/run-exact-fair-spin.txt 2>&1
$bin run --variant sched-lock --threads 2 --duration 2 --lockstat exact --lock parking-lot > $out/run-exact-parking-lot.txt 2>&1
$bin flamegraph --variant all --threads 2 --duration 2 --out /tmp/fg-amd > $out/flamegraph.txt 2>&1
uptime >> $out/provenance.txt

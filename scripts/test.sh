#!/usr/bin/env bash
# The one test command (README, .ci/run): unit, integration and CLI tests in release mode, the
# loom models (bounded, in their own target directory), the shuttle models (in theirs), and a
# smoke run of every benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's wall time, for the budget (notes/verify-budget.md: the whole command within 30
# minutes on the 2-vCPU machine kind, the loom part within 10).
stage_start=$SECONDS
took() { echo "== ($1 took $((SECONDS - stage_start)) s; $SECONDS s in all)"; stage_start=$SECONDS; }

echo "== cargo test --workspace --release"
cargo test --workspace --release
took "workspace tests"

echo "== schedlab kernel on the real kernel (tests/cli_kernel.rs: its ignored tests)"
if why=$(bash scripts/kernel-ready.sh); then
  cargo test --release --test cli_kernel -- --ignored --test-threads=1
  # What it does with privilege, by ownership (system.rs's tests that need root: the loop
  # device's detach, the cgroup left with a stranger in it, the setting put back).
  cargo test --release -p schedlab-benches --lib -- --ignored kernel::system
  # Its stop test, generated with every subcommand's (tests/cli_stops.rs).
  cargo test --release --test cli_stops -- --ignored stops::kernel
  # Its path cases that need a run (descriptors, awkward names, a full file system).
  cargo test --release --test cli_paths -- --ignored --test-threads=1 kernel_real
else
  echo "skipped: $why (the 21 tests on the real kernel stay ignored; install fio, linux-perf and bpftrace as root to run them)"
fi
took "kernel peer"

if [ -d verify/tests ] && ls verify/tests/loom_*.rs >/dev/null 2>&1; then
  echo "== loom models (LOOM_MAX_PREEMPTIONS=2, debug assertions on)"
  CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS=2 \
    RUSTFLAGS="--cfg loom --cfg crossbeam_loom --cfg crossbeam_sanitize -C debug-assertions=on" \
    cargo test -p schedlab-verify --release
  took "loom models"
fi

echo "== shuttle models and controls (PCT depth 3 then random, 2000 schedules each, debug assertions on)"
CARGO_TARGET_DIR=target/shuttle RUSTFLAGS="--cfg shuttle -C debug-assertions=on" \
  cargo test -p schedlab-verify --release --test shuttle_models --test shuttle_controls --test coverage_map
took "shuttle models"

echo "== benchmark smoke run (cargo bench -- --test)"
cargo bench -p schedlab-benches -- --test
took "benchmark smoke run"

#!/usr/bin/env bash
# The one test command (README, .ci/run): unit, integration and CLI tests in release mode, the
# loom models (bounded, in their own target directory), and a smoke run of every benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo test --workspace --release"
cargo test --workspace --release

if [ -d verify/tests ] && ls verify/tests/loom_*.rs >/dev/null 2>&1; then
  echo "== loom models (LOOM_MAX_PREEMPTIONS=2, debug assertions on)"
  CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS=2 \
    RUSTFLAGS="--cfg loom --cfg crossbeam_loom --cfg crossbeam_sanitize -C debug-assertions=on" \
    cargo test -p schedlab-verify --release
fi

echo "== benchmark smoke run (cargo bench -- --test)"
cargo bench -p schedlab-benches -- --test

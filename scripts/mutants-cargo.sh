#!/usr/bin/env bash
# The test command cargo-mutants runs for each mutant (scripts/mutants.sh puts this script in
# $CARGO): the loom suite and the real-thread stress suite, which need different RUSTFLAGS and so
# cannot be one `cargo test`. cargo-mutants calls it as `$CARGO test --no-run ...` (build) and
# `$CARGO test ...` (test), in its copy of the tree; the arguments it adds are not used.
#
#   build: the loom model binary (the other builds wait until a mutant survives loom)
#   test:  1. the generated loom models at one preemption (seconds: most mutants fail here)
#          2. the real-thread stress test (every safe variant under group churn, 1 s each)
#          3. the shuttle models (3-4 threads, tens of requests, churn, moves, the timer)
#   A failing step is a caught mutant; passing all three is a missed one.
# The loom models at two preemptions (the CI bound) are not part of it: about four minutes per
# surviving mutant, which the 90-minute budget does not have; shuttle's larger scenarios stand in.
set -euo pipefail
real_cargo="${SCHEDLAB_REAL_CARGO:-cargo}"
if [ "${1:-}" != test ]; then exec "$real_cargo" "$@"; fi
unset CARGO_ENCODED_RUSTFLAGS
# Faster builds of the same code: no debug info, parallel codegen (numbers, not the binaries, matter).
export CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
# Incremental: a mutant changes one function; the rest of each crate is reused between mutants.
export CARGO_PROFILE_RELEASE_INCREMENTAL=true
loom_flags="--cfg loom --cfg crossbeam_loom --cfg crossbeam_sanitize -C debug-assertions=on --cap-lints=warn"
loom() { # preemption bound, test targets...
  local bound=$1; shift
  CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS=$bound RUSTFLAGS="$loom_flags" \
    "$real_cargo" test -q -p schedlab-verify --release "$@"
}
case " $* " in
  *" --no-run "*) loom 1 --test loom_models --no-run ;;
  *)
    loom 1 --test loom_models
    # A quick survey (SCHEDLAB_MUTANTS_QUICK=1) stops here: what survives it is a candidate for
    # the full command, not a result.
    if [ -n "${SCHEDLAB_MUTANTS_QUICK:-}" ]; then exit 0; fi
    SCHEDLAB_STRESS_SECS=1 RUSTFLAGS="--cap-lints=warn" "$real_cargo" test -q -p schedlab-verify --release --test stress
    CARGO_TARGET_DIR=target/shuttle RUSTFLAGS="--cfg shuttle -C debug-assertions=on --cap-lints=warn" \
      "$real_cargo" test -q -p schedlab-verify --release --test shuttle_models
    ;;
esac

#!/usr/bin/env bash
# Mutation score of the verification suite over issue 24's scope: the locks (the ticket lock, the
# run-time lock kind and `Lock` in core/src/sync/lock.rs, and the measured wrapper's acquisition,
# release, owner word and counts in lock.rs and measure/) and attribution (the I7 ledger: where
# core/src/state/ charges it and hands it on, and `check_consistency`, which checks it).
# scripts/mutants.sh covers the lifetime code; this run is the locks and the ledger only.
#
#   bash scripts/mutants-locks-ledger.sh [OUTPUT-DIR] [cargo-mutants options, e.g. --list]
#       (default target/mutants-locks-ledger; results in OUTPUT-DIR/mutants.out)
#   SCHEDLAB_LL_RE=REGEX bash scripts/mutants-locks-ledger.sh ...   (only the mutants REGEX names)
#
# With `--in-place` (then run it in a worktree of its own: the source is mutated there) the test
# command runs only the stages of the mutant's scope and reuses that tree's builds; in
# cargo-mutants' default copy mode it runs every stage.
#
# Test command, stage by stage; a stage that fails catches the mutant and the rest do not run
# (this script is also that command: cargo-mutants calls it as $CARGO, see the top):
#   1. the loom lock models and their negative controls (`--test loom_locks`);
#   2. the generated loom models of two variants, every scenario (each ends with I2 and I7), and
#      the attribution scenario for every variant (`--test loom_models`, the filter below);
#   3. without loom: core's sync unit tests, the single-threaded behaviour tests (their
#      consistency checks include I7), and the real-thread stress test (1 s per variant).
# Loom runs at LOOM_MAX_PREEMPTIONS=2, the bound of scripts/test.sh. Builds go to
# target/mutants-locks-ledger-build (incremental: a mutant changes one function).
# notes/results/2026-12-02-mutants-locks-ledger.md records a run and explains each miss.
set -euo pipefail

if [ -n "${SCHEDLAB_LL_REAL_CARGO:-}" ]; then
  # ---- the test command: cargo-mutants calls `$CARGO test --no-run ...` (build) and
  # `$CARGO test ...` (test) in its copy of the tree; the arguments it adds are not used.
  real_cargo=$SCHEDLAB_LL_REAL_CARGO
  if [ "${1:-}" != test ]; then exec "$real_cargo" "$@"; fi
  unset CARGO_ENCODED_RUSTFLAGS
  # Faster builds of the same code: no debug info, parallel codegen, incremental.
  export CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_INCREMENTAL=true
  loom() {
    CARGO_TARGET_DIR="$SCHEDLAB_LL_TARGET/loom" LOOM_MAX_PREEMPTIONS=2 RUST_BACKTRACE=0 \
      RUSTFLAGS="--cfg loom --cfg crossbeam_loom --cfg crossbeam_sanitize -C debug-assertions=on --cap-lints=warn" \
      "$real_cargo" test -q -p schedlab-verify --release "$@"
  }
  plain() {
    CARGO_TARGET_DIR="$SCHEDLAB_LL_TARGET/plain" RUSTFLAGS="-C debug-assertions=on --cap-lints=warn" \
      "$real_cargo" test -q --release "$@"
  }
  # The scope of the mutant: with `--in-place` the mutated file is the one `git diff` names; in
  # a copy without git history, both scopes' stages run.
  scope=all
  changed=$(git diff --name-only -- core/src 2>/dev/null || true)
  case "$changed" in
    core/src/sync/*) scope=locks ;;
    core/src/state/* | core/src/scheduler.rs) scope=ledger ;;
  esac
  case " $* " in
    *" --no-run "*)
      case $scope in
        locks) loom --test loom_locks --no-run ;;
        ledger) loom --test loom_models --no-run ;;
        *) loom --test loom_locks --test loom_models --no-run ;;
      esac
      ;;
    *)
      if [ $scope != ledger ]; then
        loom --test loom_locks
      fi
      if [ $scope != locks ]; then
        # Every scenario of two variants (one per lock layout) and the attribution scenario of all.
        loom --test loom_models -- sched_lock:: queue_lock:: attribution
      fi
      if [ $scope != ledger ]; then
        plain -p schedlab-core --lib -- sync::
      fi
      if [ $scope != locks ]; then
        plain -p schedlab-variants --test scheduler_behaviour
        SCHEDLAB_STRESS_SECS=1 plain -p schedlab-verify --test stress
      fi
      ;;
  esac
  exit 0
fi

cd "$(dirname "$0")/.."
out="${1:-target/mutants-locks-ledger}"
shift || true
command -v cargo-mutants >/dev/null || cargo install cargo-mutants --locked --version 27.1.0

# The locks: the ticket lock (every function of `TicketLock`) and the measured wrapper's
# acquisition, contention count, owner word and release (`Measured`'s lock paths in lock.rs;
# `acquired`, `released_untimed` and `thread_id` in measure.rs, and `contended` and `released`
# as whole functions). Not in scope: the fault-injection switches (`weakened`,
# `owner_after_release`: they re-create bugs on purpose); the timing and tracing of holds and
# waits (`traced_word`, `lock_traced`, `unlock_measured`, the wait sampler's countdown in
# `contended`, the timed branch of `released`); the sampler's countdown arithmetic (`count_slow`,
# `take_acquisitions`); `spin_once` (when a waiter yields: performance, which no test may time);
# the accessors; and the run-time kind dispatch (`RawKindLock`, `Lock`, parking_lot's impl).
locks='sync/lock\.rs:.*(TicketLock|Measured<R>::(lock_measured|wait_contended|note_owner)|<impl RawMutex for Measured<R>>::lock( |$)|replace <impl RawMutex for Measured<R>>::try_lock )'
locks+='|sync/measure/[a-z]+\.rs:.*((replace|in) (acquired|released_untimed|thread_id)( |$)|replace (contended|released) )'
# Attribution: the ledger's own code, the lines of state.rs that charge it, the I7 lines of
# `check_consistency` (its I2 lines are the lifetime run's) and that function as a whole. Lines
# are found by their text, so that the selection follows the code.
lines() { { grep -n "$1" "$2" || true; } | cut -d: -f1 | paste -sd'|'; }
check=$(lines 'let full = \|let charged = \|kept != charged\|&& groups_misattributed\.is_empty()' core/src/scheduler.rs)
attribution="state/[a-z0-9]+\\.rs:.*Ledger::|scheduler\\.rs:($check):.*check_consistency|replace Scheduler<P>::check_consistency "
for file in core/src/state/*.rs; do
  charges=$(lines 'ledger\.\(serviced\|service_bytes\|merged\) +=' "$file")
  [ -z "$charges" ] || attribution+="|state/$(basename "$file" .rs)\\.rs:($charges):"
done
exclude='weakened::|owner_after_release|fault_'

export SCHEDLAB_LL_REAL_CARGO="$(command -v cargo)" SCHEDLAB_LL_TARGET="$PWD/target/mutants-locks-ledger-build"
# Run cargo-mutants directly: as `cargo mutants`, cargo would set $CARGO to itself. Its exit
# status is 2 when a mutant was missed and 3 when one timed out: results, not failures here.
status=0
CARGO="$PWD/scripts/mutants-locks-ledger.sh" cargo-mutants mutants \
  -p schedlab-core \
  -f core/src/sync/lock.rs -f 'core/src/sync/measure/*.rs' -f 'core/src/state/*.rs' -f core/src/scheduler.rs \
  --re "${SCHEDLAB_LL_RE:-$locks|$attribution}" --exclude-re "$exclude" \
  --test-workspace=false --test-package schedlab-verify \
  --timeout 600 --build-timeout 900 --no-shuffle \
  --output "$out" "$@" || status=$?
case $status in 0|2|3) ;; *) echo "mutants-locks-ledger.sh: cargo-mutants failed (exit $status)" >&2; exit "$status" ;; esac
case " $* " in *" --list "*) exit 0 ;; esac
python3 - "$out/mutants.out" <<'EOF'
import os, sys
out = sys.argv[1]
def count(name):
    path = os.path.join(out, name)
    return sum(1 for l in open(path) if l.strip()) if os.path.exists(path) else 0
caught, missed, timeout, unviable = (count(f + ".txt") for f in ("caught", "missed", "timeout", "unviable"))
viable = caught + missed + timeout
print(f"mutation score: {caught + timeout} caught of {viable} viable ({100 * (caught + timeout) / max(viable, 1):.1f} %): "
      f"{caught} caught, {timeout} timed out (counted caught), {missed} missed; {unviable} unviable")
EOF

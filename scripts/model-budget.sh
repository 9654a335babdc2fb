#!/usr/bin/env bash
# Times every model of the loom and shuttle suites on its own (the bounds of the test command)
# and measures shuttle's detection rate per negative control; prints the Markdown tables of
# notes/verify-budget.md. Usage: bash scripts/model-budget.sh [SCHEDULES-FOR-RATES] > out.md
set -euo pipefail
cd "$(dirname "$0")/.."
schedules="${1:-2000}"

time_binary() { # target-dir, test file
  local dir=$1 file=$2 bin
  # the newest binary built from this test file (older builds may linger in deps/)
  bin=$(ls -t "$dir"/release/deps/"$file"-* | grep -v '\.d$' | head -1)
  for t in $($bin --list 2>/dev/null | sed -n 's/: test$//p'); do
    local start end res out
    start=$(date +%s.%N)
    if out=$($bin --exact "$t" --test-threads 1 2>&1); then res=$(echo "$out" | grep -o 'ok$\|FAILED$' | head -1); else res=FAILED; fi
    end=$(date +%s.%N)
    printf "| %s | %s | %s | %.2f |\n" "$file" "$t" "$res" "$(echo "$end - $start" | bc)"
  done
}

time_table() { # target-dir, test file... : one table of every model of these files
  local dir=$1 file
  shift
  echo "| test file | model | result | seconds |"
  echo "| --- | --- | --- | --- |"
  for file in "$@"; do time_binary "$dir" "$file"; done
}

echo "## loom (LOOM_MAX_PREEMPTIONS=${LOOM_MAX_PREEMPTIONS:-2}, one model at a time)"
echo
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}"
RUSTFLAGS="--cfg loom --cfg crossbeam_loom --cfg crossbeam_sanitize -C debug-assertions=on" CARGO_TARGET_DIR=target/loom \
  cargo test -p schedlab-verify --release --no-run 2>&1 | tail -1 >&2
time_table target/loom loom_models loom_controls
echo
echo "## shuttle (PCT depth 3, then random; 2000 schedules each unless a control is caught first)"
echo
RUSTFLAGS="--cfg shuttle -C debug-assertions=on" CARGO_TARGET_DIR=target/shuttle \
  cargo test -p schedlab-verify --release --test shuttle_models --test shuttle_controls --no-run 2>&1 | tail -1 >&2
time_table target/shuttle shuttle_models shuttle_controls
echo
echo "## shuttle detection rates ($schedules schedules per scheduler and control)"
echo
RUSTFLAGS="--cfg shuttle -C debug-assertions=on" CARGO_TARGET_DIR=target/shuttle \
  cargo run -q -p schedlab-verify --release --bin shuttle-rates -- "$schedules"

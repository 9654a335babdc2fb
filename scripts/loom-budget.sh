#!/usr/bin/env bash
# Times every loom model on its own (the same bound as the test command) and prints a Markdown
# table for notes/loom-budget.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}"
export RUSTFLAGS="--cfg loom --cfg crossbeam_loom --cfg crossbeam_sanitize"
cargo test -p schedlab-verify --release --no-run 2>&1 | tail -1 >&2
echo "| test file | model | result | seconds |"
echo "| --- | --- | --- | --- |"
for src in verify/tests/loom_*.rs; do
  file=$(basename "$src" .rs)
  # the newest binary built from this test file (older builds may linger in deps/)
  bin=$(ls -t target/loom/release/deps/"$file"-* | grep -v '\.d$' | head -1)
  for t in $($bin --list 2>/dev/null | sed -n 's/: test$//p'); do
    start=$(date +%s.%N)
    if out=$($bin --exact "$t" --test-threads 1 2>&1); then res=$(echo "$out" | grep -o 'ok$\|FAILED$' | head -1); else res=FAILED; fi
    end=$(date +%s.%N)
    printf "| %s | %s | %s | %.2f |\n" "$file" "$t" "$res" "$(echo "$end - $start" | bc)"
  done
done

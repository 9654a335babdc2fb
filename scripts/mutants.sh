#!/usr/bin/env bash
# Mutation score of the verification suite over the code where lifetimes are decided: group and
# queue objects, reference counts, removal, moves, frees, teardown, the idle timer, the
# protections and epoch reclamation, the rstat lists and the insert lists, and the variants. Test
# command, stage by stage, each on what the previous ones left: the loom models, the real-thread
# stress suite and the shuttle models (scripts/mutants-cargo.sh, every mutant); the loom negative
# controls, then the single-threaded behaviour tests (scripts/mutants-survivors.sh). Budget: 90 minutes on the project's 2-vCPU
# machine kind (cargo-mutants' own timeouts bound a mutant that hangs).
#
#   bash scripts/mutants.sh [OUTPUT-DIR]      (default target/mutants; results in OUTPUT-DIR/mutants.out)
#
# Then: caught.txt, missed.txt, timeout.txt, unviable.txt and outcomes.json in mutants.out (stages
# 1-3), variants.txt (the variant files, stages 1-3), controls.txt and behaviour.txt (stages 4-5),
# and the score, printed last: caught / viable. notes/results/*-mutants.md explains each miss.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-target/mutants}"
shift || true
command -v cargo-mutants >/dev/null || cargo install cargo-mutants --locked --version 27.1.0
# Functions that take, drop or depend on a reference, free or reparent, or decide a protection.
# Not in scope: `Census` (the models' oracle: what they count with, not what decides a lifetime),
# identity helpers (`addr`), reporting (`check_consistency`, `groups`) and the scheduling
# arithmetic of the service trees.
lifetimes='GroupShared::|GroupPtr::get|RetiredGroup::(group|free|scheduler_gone)|QueueShared::|QueueRef::(get|free)'
lifetimes+='|protection\.rs|release|free_after|retire_after|reclaim_step|quiesce'
lifetimes+='|put_queue|move_queue|offline_group|put_online_ref|teardown|SchedState::expire( |$)|new_queue'
lifetimes+='|SchedState::create_group|set_in_service|run_idle_timer|SchedState::complete|alloc_request|set_wait_request'
lifetimes+='|remove_group|move_to|Scheduler<P>::retire|lookup -> Result|finish_body|dispatch_body|insert_body'
lifetimes+='|impl Drop for|effective_route|apply_locked|Router|spawn_process|sync/epoch\.rs'
lifetimes+='|splice|release_listed|free_queue|pending|insert_locked|take_listed|take_all|rstat|RstatLists|iostat|add_legacy_deltas'
# The fault-injection branches (`fault_*` functions, `fault.rs`) re-create bugs on purpose: out of scope.
exclude='fault_|GroupShared::serial|QueueShared::pid'
export SCHEDLAB_REAL_CARGO="$(command -v cargo)"
# SCHEDLAB_MUTANTS_VARIANTS_ONLY=1: only the variant files (below), into an existing OUTPUT-DIR.
if [ -z "${SCHEDLAB_MUTANTS_VARIANTS_ONLY:-}" ]; then
# Run cargo-mutants directly: as `cargo mutants`, cargo would set $CARGO to itself. Its exit
# status is 2 when a mutant was missed and 3 when one timed out: results, not failures of this
# script (which then goes on to the variant files).
status=0
CARGO="$PWD/scripts/mutants-cargo.sh" cargo-mutants mutants \
  -p schedlab-core -p schedlab-variants \
  -f 'core/src/objects/*.rs' -f core/src/protection.rs -f 'core/src/state/*.rs' -f core/src/scheduler.rs \
  -f core/src/sync/epoch.rs -f 'core/src/insert/*.rs' -f core/src/stats.rs \
  -f 'variants/src/*.rs' \
  --re "$lifetimes" --exclude-re "$exclude" \
  --test-workspace=false --test-package schedlab-verify \
  --timeout 300 --build-timeout 600 --no-shuffle \
  --output "$out" "$@" || status=$?
case $status in 0|2|3) ;; *) echo "mutants.sh: cargo-mutants failed (exit $status)" >&2; exit "$status" ;; esac
fi

# The variant files are declared by the registry macro, which cargo-mutants does not expand: list
# their mutants with cargo-mutants itself and run each through the same test command, in a copy
# of the tree (the source tree is never modified).
root=$PWD
variants_out="$out/mutants.out/variants.txt"
: > "$variants_out"
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
git ls-files -z | (cd "$root" && xargs -0 cp --parents -t "$copy")
for file in variants/src/*.rs; do
  [ "$(basename "$file")" = lib.rs ] && continue
  cargo mutants --Zmutate-file "$file" --json 2>/dev/null \
    | python3 -c 'import json, sys; [print(json.dumps(m)) for m in json.load(sys.stdin)]' \
    | while read -r mutant; do
      name=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["name"])' "$mutant")
      python3 -c 'import json, sys; print(json.loads(sys.argv[1])["diff"])' "$mutant" > "$copy/mutant.diff"
      (cd "$copy" && patch -s "$file" < mutant.diff)
      if ! (cd "$copy" && "$root/scripts/mutants-cargo.sh" test --no-run >/dev/null 2>&1); then
        outcome=unviable
      elif (cd "$copy" && "$root/scripts/mutants-cargo.sh" test >/dev/null 2>&1); then
        outcome=missed
      else
        outcome=caught
      fi
      (cd "$copy" && patch -s -R "$file" < mutant.diff)
      printf '%s\t%s\n' "$outcome" "$file:${name#*:}" | tee -a "$variants_out"
    done
done

# Stages 4 and 5 on the survivors, then the score.
bash scripts/mutants-survivors.sh controls "$out/mutants.out"
bash scripts/mutants-survivors.sh behaviour "$out/mutants.out"
python3 - "$out/mutants.out" <<'EOF'
import os, sys
out = sys.argv[1]
def outcomes(name):
    path = os.path.join(out, name)
    return [l.split("\t", 1)[0] for l in open(path)] if os.path.exists(path) else []
variants = outcomes("variants.txt")
caught = len(outcomes("caught.txt")) + len(outcomes("timeout.txt")) + variants.count("caught")
survived = len(outcomes("missed.txt")) + variants.count("missed")
stale = 0
for stage in ("controls.txt", "behaviour.txt"):
    o = outcomes(stage)
    caught += o.count("caught")
    survived -= o.count("caught") + o.count("unviable") + o.count("stale")
    stale += o.count("stale")
viable = caught + survived
note = f"; {stale} stale (the code changed under them since stage 1)" if stale else ""
print(f"mutation score: {caught} caught of {viable} viable ({100 * caught / max(viable, 1):.1f} %), {survived} survived{note}")
EOF

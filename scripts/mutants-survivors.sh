#!/usr/bin/env bash
# Runs the mutants that survived scripts/mutants.sh through one more stage, in a copy of the tree
# (the source tree is never modified):
#
#   controls  the loom models again (bound 1, as they are now: models strengthened after the
#             main run kill survivors here), then the loom negative controls
#             (verify/src/controls.rs) at the CI's bound of two preemptions: the last stage of the
#             mutation test command. A mutant that deletes or
#             weakens a check the correct code never trips (a liveness assertion, a guard that
#             only a broken variant needs) passes every model of the correct code; it shows only
#             when a broken version the check should reject is no longer rejected, or a fixed
#             form the check protects fails. Running the stages in order, stopping at the first
#             failure, is the same command as scripts/mutants-cargo.sh followed by this stage; it
#             is split because building the controls for each of ~200 mutants would not fit the
#             90-minute budget.
#   behaviour the core's and the variants' unit and behaviour tests (single-threaded, on a manual
#             clock), on what the controls did not catch: the command's last stage. The functions
#             in scope take and drop references and also compute a budget, a deadline or a
#             depth, which no lifetime model states; these tests do (a stage of its own, after
#             the controls, for the same budget reason).
#
#   bash scripts/mutants-survivors.sh controls|behaviour [MUTANTS-OUT-DIR]   (default target/mutants/mutants.out)
#
# Reads the survivors (outcomes.json for core mutants; variants.txt for variant-file mutants, whose
# diffs are re-listed by cargo-mutants; for `behaviour`, those still missed in controls.txt) and writes
# STAGE.txt in the same directory: "caught|missed|unviable|stale<TAB>mutant" (stale: the diff no
# longer applies, the code changed since the run).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
stage="${1:?usage: mutants-survivors.sh controls|behaviour [MUTANTS-OUT-DIR]}"
out="${2:-target/mutants/mutants.out}"
case "$stage" in controls|behaviour) ;; *) echo "mutants-survivors.sh: unknown stage \`$stage\` (controls or behaviour)" >&2; exit 2 ;; esac
result="$out/$stage.txt"
: > "$result"
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
git ls-files -z | xargs -0 cp --parents -t "$copy"
export CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_INCREMENTAL=true
run_stage() {
  if [ "$stage" = controls ]; then
    local flags="--cfg loom --cfg crossbeam_loom --cfg crossbeam_sanitize -C debug-assertions=on --cap-lints=warn"
    (cd "$copy" && CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS=1 RUSTFLAGS="$flags" \
      cargo test -q -p schedlab-verify --release --test loom_models "$@") &&
    (cd "$copy" && CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS=2 RUSTFLAGS="$flags" \
      cargo test -q -p schedlab-verify --release --test loom_controls "$@")
  else
    (cd "$copy" && RUSTFLAGS="--cap-lints=warn" cargo test -q --release -p schedlab-core -p schedlab-variants "$@")
  fi
}
echo "building the $stage stage in $copy (once)" >&2
run_stage --no-run >/dev/null 2>&1
# Each survivor with its diff: core mutants from outcomes.json, variant-file mutants by name.
python3 - "$out" "$stage" > "$copy/survivors.tsv" <<'EOF'
import json, os, subprocess, sys
out, stage = sys.argv[1], sys.argv[2]
# For `behaviour`, only what the controls did not catch.
still = None
if stage == "behaviour":
    still = {l.split("\t", 1)[1].rstrip("\n") for l in open(os.path.join(out, "controls.txt")) if l.startswith("missed\t")}
outcomes = json.load(open(os.path.join(out, "outcomes.json")))["outcomes"]
for o in outcomes:
    m = o["scenario"].get("Mutant") if isinstance(o["scenario"], dict) else None
    if m and o["summary"] == "MissedMutant" and (still is None or m["name"] in still):
        print(f"{m['name']}\t{os.path.abspath(os.path.join(out, o['diff_path']))}\t{m['file']}")
variants = os.path.join(out, "variants.txt")
if os.path.exists(variants):
    listed = {}
    for line in open(variants):
        outcome, name = line.rstrip("\n").split("\t")
        if outcome == "missed" and (still is None or name in still):
            path = name.split(":")[0]
            if path not in listed:
                listed[path] = json.loads(subprocess.run(
                    ["cargo", "mutants", "--Zmutate-file", path, "--json"],
                    capture_output=True, text=True, check=True).stdout)
            for mutant in listed[path]:
                if f"{path}:{mutant['name'].split(':', 1)[1]}" == name:
                    diff = os.path.join(out, "variant-" + str(abs(hash(name))) + ".diff")
                    open(diff, "w").write(mutant["diff"])
                    print(f"{name}\t{os.path.abspath(diff)}\t{path}")
EOF
while IFS=$'\t' read -r name diff file; do
  if ! (cd "$copy" && patch -s --dry-run "$file" < "$diff" >/dev/null 2>&1); then
    # The code changed since the mutation run: this mutant no longer exists as written.
    printf '%s\t%s\n' stale "$name" | tee -a "$result"
    continue
  fi
  (cd "$copy" && patch -s "$file" < "$diff")
  if ! run_stage --no-run >/dev/null 2>&1; then outcome=unviable
  elif run_stage >/dev/null 2>&1; then outcome=missed
  else outcome=caught; fi
  (cd "$copy" && git -C "$root" show "HEAD:$file" > "$file")
  printf '%s\t%s\n' "$outcome" "$name" | tee -a "$result"
done < "$copy/survivors.tsv"

#!/usr/bin/env bash
# The last stage of the mutation test command, run on the survivors only: the loom negative
# controls (verify/src/controls.rs, at the CI's bound of two preemptions) against each mutant that
# passed the loom models, the stress suite and the shuttle models. A mutant that deletes or weakens
# a check the correct code never trips (a liveness assertion, a census count) passes every model of
# the correct code; it is seen only when a broken version that the check should reject is no
# longer rejected. Running the stages in order and stopping at the first failure is the same
# command as scripts/mutants-cargo.sh followed by this one; it is split because building the
# controls for every one of ~200 mutants would not fit the 90-minute budget.
#
#   bash scripts/mutants-controls.sh [MUTANTS-OUT-DIR]   (default target/mutants/mutants.out)
#
# Reads missed.txt and the diffs of outcomes.json (core mutants) and variants.txt (variant-file
# mutants, re-listed by cargo-mutants); writes controls.txt: "caught|missed|unviable<TAB>mutant".
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="${1:-target/mutants/mutants.out}"
result="$out/controls.txt"
: > "$result"
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
git ls-files -z | xargs -0 cp --parents -t "$copy"
export CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_INCREMENTAL=true
controls() {
  (cd "$copy" && CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS=2 \
    RUSTFLAGS="--cfg loom --cfg crossbeam_loom --cfg crossbeam_sanitize -C debug-assertions=on --cap-lints=warn" \
    cargo test -q -p schedlab-verify --release --test loom_controls "$@")
}
echo "building the controls in $copy (once)" >&2
controls --no-run >/dev/null 2>&1
# Each survivor with its diff: core mutants from outcomes.json, variant-file mutants by name.
python3 - "$out" > "$copy/survivors.tsv" <<'EOF'
import json, os, subprocess, sys
out = sys.argv[1]
outcomes = json.load(open(os.path.join(out, "outcomes.json")))["outcomes"]
for o in outcomes:
    m = o["scenario"].get("Mutant") if isinstance(o["scenario"], dict) else None
    if m and o["summary"] == "MissedMutant":
        print(f"{m['name']}\t{os.path.abspath(os.path.join(out, o['diff_path']))}\t{m['file']}")
variants = os.path.join(out, "variants.txt")
if os.path.exists(variants):
    listed = {}
    for line in open(variants):
        outcome, name = line.rstrip("\n").split("\t")
        if outcome == "missed":
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
  (cd "$copy" && patch -s "$file" < "$diff")
  if ! controls --no-run >/dev/null 2>&1; then outcome=unviable
  elif controls >/dev/null 2>&1; then outcome=missed
  else outcome=caught; fi
  (cd "$copy" && git -C "$root" show "HEAD:$file" > "$file")
  printf '%s\t%s\n' "$outcome" "$name" | tee -a "$result"
done < "$copy/survivors.tsv"

#!/usr/bin/env python3
"""Mutation of the models' oracles (issue 35, item 1): every comparison, connective, sign and
negation inside the functions that decide whether a model passes, each changed alone, and the
oracle's own tests run against it.

    python3 scripts/mutants-oracles.py [--list] [OUTPUT-DIR]      (default target/mutants-oracles)
    SCHEDLAB_ORACLE_MUTANTS=REGEX python3 scripts/mutants-oracles.py ...   (only those functions)
    SCHEDLAB_MUTANTS_ROUND_ROBIN=1 ...   (one mutant of each function in turn: a stopped run samples all)

The functions and the tests that must catch their mutants:

| function | file | test command |
| --- | --- | --- |
| `check_consistency` | core/src/scheduler.rs | core's `consistency_conditions` unit tests |
| `conservation_failures`, `alive_failures` | verify/src/scenarios.rs | `verify/tests/oracle_conditions.rs` |
| `check_attribution`, `check_reads`, `feasible`, `groups_during`, `descendants`, `first_online` | verify/src/history.rs | `history`'s unit tests |

Operators (one occurrence at a time, outside string literals and comments): `==`<->`!=`,
`&&`<->`||`, `>=`->`>`, `<=`->`<`, ` > `->` >= `, ` < `->` <= `, `+=`->`-=`, ` + `->` - `,
` - `->` + `, `.all(`<->`.any(`, a leading `!` removed, `return true`<->`return false`.
A mutant that does not build is unviable; one whose tests fail is caught; one whose tests pass
survived. The source file is restored after every mutant (and on exit). Results: OUTPUT-DIR/
mutants.tsv (one line per mutant) and the score on stdout. Builds with `-j 2` (or
`SCHEDLAB_MUTANTS_JOBS`) in cargo's target directory (`CARGO_TARGET_DIR` if set; debug profile),
so that the deps are built once.

`SCHEDLAB_MUTANTS_SET=core-new` takes, instead of the oracles, the core's paths added in round
four and after (issue 45, item 6), with the same operators:

| function | file | test command |
| --- | --- | --- |
| `Process::submit`, `bio_merge_body`, `limit_depth_body`, `count_at_submit` | core/src/scheduler.rs | core's unit tests, then `variants/tests/scheduler_behaviour.rs` |
| `lookup_bio_group`, `charge_allocated`, `bio_merge`, `find_front_merge`, `over_limit`, `nr_requests`, `back_merge` | core/src/state/mod.rs | the same |
| `submit_sites`, `has`, `sched_lock_sites`, `lock_sequence` | core/src/profile.rs | the same |
| mq-deadline's `dir_of` ... `queued` | core/src/deadline.rs | the same |
| `Mainline::route`, `run_deferred` | variants/src/mainline.rs | the same |
"""
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

JOBS = os.environ.get("SCHEDLAB_MUTANTS_JOBS", "2")
CARGO_TEST = ["cargo", "test", "-q", "-j", JOBS]
# A test command is a list of cargo invocations, run in order; the first that fails decides.
CORE_TEST = [CARGO_TEST + ["-p", "schedlab-core", "--lib", "consistency_conditions"]]
VERIFY_TEST = [CARGO_TEST + ["-p", "schedlab-verify", "--test", "oracle_conditions"]]
HISTORY_TEST = [CARGO_TEST + ["-p", "schedlab-verify", "--lib", "history"]]
CORE_NEW_TEST = [
    CARGO_TEST + ["-p", "schedlab-core", "--lib"],
    CARGO_TEST + ["-p", "schedlab-variants", "--test", "scheduler_behaviour"],
]

ORACLE_REGIONS = [
    ("core/src/scheduler.rs", "pub fn check_consistency(", CORE_TEST),
    ("verify/src/scenarios.rs", "pub fn conservation_failures(", VERIFY_TEST),
    ("verify/src/scenarios.rs", "pub fn alive_failures(", VERIFY_TEST),
    ("verify/src/history.rs", "pub fn check_attribution<", HISTORY_TEST),
    ("verify/src/history.rs", "pub fn check_reads<", HISTORY_TEST),
    ("verify/src/history.rs", "fn feasible(", HISTORY_TEST),
    ("verify/src/history.rs", "fn first_online(", HISTORY_TEST),
    ("verify/src/history.rs", "fn descendants(", HISTORY_TEST),
    ("verify/src/history.rs", "fn groups_during(", HISTORY_TEST),
]

CORE_NEW_REGIONS = [
    (path, signature, CORE_NEW_TEST)
    for path, signatures in [
        ("core/src/scheduler.rs", ["pub fn submit(", "fn bio_merge_body(", "fn limit_depth_body(",
                                   "fn count_at_submit("]),
        ("core/src/state/mod.rs", ["fn lookup_bio_group(", "fn charge_allocated(", "pub(crate) fn bio_merge(",
                                   "fn find_front_merge(", "fn over_limit(", "fn nr_requests(",
                                   "fn back_merge("]),
        ("core/src/profile.rs", ["pub fn submit_sites(", "pub fn has(", "pub fn sched_lock_sites(",
                                 "pub fn lock_sequence("]),
        ("core/src/deadline.rs", ["fn dir_of(", "fn back_candidate(", "fn front_candidate(", "fn try_merge(",
                                  "    fn insert(&mut self", "fn fifo_expired(", "    fn dispatch(&mut self",
                                  "pub fn bio_merge(", "pub fn insert(", "pub fn dispatch(", "pub fn queued("]),
        ("variants/src/mainline.rs", ["fn route(", "fn run_deferred("]),
    ]
    for signature in signatures
]

REGIONS = CORE_NEW_REGIONS if os.environ.get("SCHEDLAB_MUTANTS_SET") == "core-new" else ORACLE_REGIONS

OPERATORS = [
    ("==", "!="), ("!=", "=="), ("&&", "||"), ("||", "&&"), (">=", ">"), ("<=", "<"),
    (" > ", " >= "), (" < ", " <= "), ("+=", "-="), (" + ", " - "), (" - ", " + "),
    (".all(", ".any("), (".any(", ".all("), ("return true", "return false"), ("return false", "return true"),
]


def body_lines(lines, signature):
    """The line indices of the function whose signature line contains `signature`."""
    start = next(i for i, line in enumerate(lines) if signature in line)
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = next(i for i in range(start + 1, len(lines)) if lines[i].rstrip() == " " * indent + "}")
    return range(start + 1, end)


def code_spans(line):
    """(start, end) spans of `line` that are code: not a string literal, not a comment."""
    spans, i, start, in_str = [], 0, 0, False
    while i < len(line):
        c = line[i]
        if in_str:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_str, start = False, i + 1
        elif c == '"':
            spans.append((start, i))
            in_str = True
        elif line.startswith("//", i):
            spans.append((start, i))
            return spans
        i += 1
    if not in_str:
        spans.append((start, len(line)))
    return spans


def mutants_of(lines, rng):
    for n in rng:
        line = lines[n]
        for start, end in code_spans(line):
            for old, new in OPERATORS:
                for m in re.finditer(re.escape(old), line[start:end]):
                    at = start + m.start()
                    if old in ("==", "!=") and (line[at - 1:at] in "<>=!" or line[at + 2:at + 3] == "="):
                        continue
                    if old == "||" and line[:at].rstrip()[-1:] in ("", "(", ",", "&", "="):
                        continue  # a closure's empty parameter list, not a disjunction
                    yield n, line[:at] + new + line[at + len(old):], f"{old.strip()} -> {new.strip()}"
            # A leading negation removed: `!x`, not `!=`.
            for m in re.finditer(r"!(?!=)", line[start:end]):
                at = start + m.start()
                if line[at - 1:at].isalnum() or line[at - 1:at] == "_":
                    continue  # a macro call: format!, matches!
                yield n, line[:at] + line[at + 1:], "! removed"


# A test run (not a build) past this many seconds is a timeout: a mutant that makes a loop endless
# (the core's walks up the hierarchy) costs this much, so the core's set, whose tests take
# seconds, waits 120 s rather than the oracles' 600.
TEST_TIMEOUT = int(os.environ.get("SCHEDLAB_MUTANTS_TEST_TIMEOUT",
                                  "120" if REGIONS is CORE_NEW_REGIONS else "600"))


def run(cmds, log, suffix=()):
    """Runs each cargo invocation of `cmds` (with `suffix` appended) in order: the first nonzero
    status, or 0."""
    for cmd in cmds:
        timeout = 600 if "--no-run" in suffix else TEST_TIMEOUT
        # A session of its own, so that a timeout ends the test binary too, not only cargo.
        p = subprocess.Popen(list(cmd) + list(suffix), cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True)
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return "timeout"
        log.write(out.decode(errors="replace")[-4000:])
        if p.returncode != 0:
            return p.returncode
    return 0


def main():
    # SCHEDLAB_ORACLE_MUTANTS=REGEX: only the functions whose signature REGEX matches.
    only = os.environ.get("SCHEDLAB_ORACLE_MUTANTS")
    args = [a for a in sys.argv[1:] if a != "--list"]
    listing = "--list" in sys.argv[1:]
    out = os.path.join(ROOT, args[0] if args else "target/mutants-oracles")
    os.makedirs(out, exist_ok=True)
    plan = []
    for path, signature, test in REGIONS:
        if only and not re.search(only, signature):
            continue
        lines = open(os.path.join(ROOT, path)).read().split("\n")
        for n, mutated, what in mutants_of(lines, body_lines(lines, signature)):
            plan.append((path, signature, test, n, mutated, what))
    if os.environ.get("SCHEDLAB_MUTANTS_ROUND_ROBIN"):
        # One mutant of each function in turn, so that a run stopped early is a sample spread
        # over every function rather than the first functions' mutants only.
        by_function = {}
        for p in plan:
            by_function.setdefault((p[0], p[1]), []).append(p)
        queues = list(by_function.values())
        plan = [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]
    if listing:
        for path, signature, _, n, mutated, what in plan:
            print(f"{path}:{n + 1}\t{signature.strip('(<')}\t{what}\t{mutated.strip()}")
        print(f"{len(plan)} mutants")
        return
    # The unmutated tests must pass first.
    with open(os.path.join(out, "baseline.log"), "w") as log:
        for test in {tuple(map(tuple, p[2])) for p in plan}:
            if run(test, log) != 0:
                sys.exit(f"baseline failed: {test} (see {out}/baseline.log)")
    counts = {"caught": 0, "missed": 0, "unviable": 0, "timeout": 0}
    with open(os.path.join(out, "mutants.tsv"), "w") as tsv, open(os.path.join(out, "mutants.log"), "w") as log:
        tsv.write("outcome\tfile:line\tfunction\tmutation\tmutated line\tseconds\n")
        for path, signature, test, n, mutated, what in plan:
            full = os.path.join(ROOT, path)
            original = open(full).read()
            lines = original.split("\n")
            lines[n] = mutated
            t0 = time.time()
            try:
                open(full, "w").write("\n".join(lines))
                log.write(f"\n==== {path}:{n + 1} {what}: {mutated.strip()}\n")
                build = run(test, log, ["--no-run"])
                if build == "timeout":
                    outcome = "timeout"
                elif build != 0:
                    outcome = "unviable"
                else:
                    rc = run(test, log)
                    outcome = "timeout" if rc == "timeout" else ("missed" if rc == 0 else "caught")
            finally:
                open(full, "w").write(original)
            counts[outcome] += 1
            tsv.write(f"{outcome}\t{path}:{n + 1}\t{signature.strip('(<')}\t{what}\t{mutated.strip()}\t{time.time() - t0:.0f}\n")
            tsv.flush()
            print(f"{outcome:8} {path}:{n + 1} {what}", flush=True)
    viable = counts["caught"] + counts["missed"]
    print(f"caught {counts['caught']} of {viable} viable mutants ({100 * counts['caught'] / max(viable, 1):.1f} %); "
          f"unviable {counts['unviable']}, timeout {counts['timeout']}")


if __name__ == "__main__":
    main()

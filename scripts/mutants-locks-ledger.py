#!/usr/bin/env python3
# Hand-applied mutants over issue 24's new scope (the lock code and the I7 ledger): each is applied
# to the source, the loom test binaries are rebuilt, and the tests of that scope are run; "caught"
# means some test failed. Run from the repository root.
import subprocess, sys, shutil, time, os
M = [
 ("core/src/sync/lock.rs", "if self.serving.load(ordering(Ordering::Acquire, TICKET_FIRST_ATTEMPT_ACQUIRE)) == ticket {", "if self.serving.load(ordering(Ordering::Acquire, TICKET_FIRST_ATTEMPT_ACQUIRE)) != ticket {", "locks", "first attempt's answer inverted"),
 ("core/src/sync/lock.rs", "self.serving.store(serving.wrapping_add(1), ordering(Ordering::Release, TICKET_RELEASE));", "self.serving.store(serving.wrapping_add(2), ordering(Ordering::Release, TICKET_RELEASE));", "locks", "unlock skips a ticket"),
 ("core/src/sync/lock.rs", "            .is_ok()\n            .then(GuardNoSend::new)", "            .is_err()\n            .then(GuardNoSend::new)", "locks", "try_lock's success inverted"),
 ("core/src/sync/lock.rs", "while self.serving.load(ordering(Ordering::Acquire, TICKET_WAIT_ACQUIRE)) != ticket {", "while self.serving.load(ordering(Ordering::Acquire, TICKET_WAIT_ACQUIRE)) == ticket {", "locks", "queued wait's condition inverted"),
 ("core/src/sync/lock.rs", "self.next.load(Ordering::Relaxed).wrapping_sub(self.serving.load(Ordering::Relaxed)) > 1", "self.next.load(Ordering::Relaxed).wrapping_sub(self.serving.load(Ordering::Relaxed)) > 0", "locks", "has_waiters counts the holder"),
 ("core/src/sync/lock.rs", "        if flags & F_NEW_OWNER != 0 {\n            // Relaxed", "        if flags & F_NEW_OWNER == 0 {\n            // Relaxed", "locks", "owner word written only when not a new owner"),
 ("core/src/sync/lock.rs", "        self.note_owner(flags);\n        // SAFETY: the caller holds the lock through `raw` (this function's contract).", "        // SAFETY: the caller holds the lock through `raw` (this function's contract).", "locks", "owner word never written"),
 ("core/src/sync/lock.rs", "            Err(queued) => self.wait_contended(queued, mode),", "            Err(queued) => self.raw.wait_queued(queued),", "locks", "contention not counted"),
 ("core/src/sync/lock.rs", "            return self.raw.wait_queued(queued);\n        }\n        let raw = self.raw.wait_queued(queued);", "            return self.raw.lock();\n        }\n        let raw = self.raw.wait_queued(queued);", "locks", "contended wait takes a second ticket"),
 ("core/src/sync/measure.rs", "        if previous != 0 {\n            bump(&f.owner_changes[c]);\n        }", "        if previous != 0 {\n        }", "locks", "owner change not counted"),
 ("core/src/state.rs", "        ledger.serviced += 1;\n", "", "i7", "ledger misses a dispatch"),
 ("core/src/state.rs", "        ledger.service_bytes += r.sectors as i64 * 512;", "        ledger.service_bytes += r.sectors as i64 * 256;", "i7", "ledger's bytes halved"),
 ("core/src/state.rs", "            self.counters.merged += 1;\n            self.groups[self.queues[q].group].ledger.merged += 1;\n            sink.emit(queue, StatUpdate::IoMerged { op: spec.op });", "            self.counters.merged += 1;\n            sink.emit(queue, StatUpdate::IoMerged { op: spec.op });", "i7", "ledger misses an insert merge"),
 ("core/src/state.rs", "        p.ledger.absorb(gs.ledger);\n", "", "i7", "offline drops the child's ledger"),
 ("core/src/state.rs", "        self.merged += other.merged;\n", "", "i7", "absorb drops merges"),
 ("core/src/state.rs", "        let ledger = &mut self.groups[qs.group].ledger;", "        let ledger = &mut self.groups[self.root].ledger;", "i7", "ledger charges the root"),
]
loom_env = dict(os.environ, CARGO_TARGET_DIR="target/loom", LOOM_MAX_PREEMPTIONS="2", RUST_BACKTRACE="0",
                RUSTFLAGS="--cfg loom --cfg crossbeam_loom --cfg crossbeam_sanitize -C debug-assertions=on")
tests = {
 "locks": ["cargo", "test", "-p", "schedlab-verify", "--release", "--test", "loom_locks"],
 "i7": ["cargo", "test", "-p", "schedlab-verify", "--release", "--test", "loom_models", "--", "sched_lock::", "queue_lock::", "attribution"],
}
caught = 0
for i, (path, old, new, scope, what) in enumerate(M, 1):
    src = open(path).read()
    assert src.count(old) == 1, (i, what)
    shutil.copy(path, "target/mutants-locks-ledger.orig")
    open(path, "w").write(src.replace(old, new))
    t0 = time.time()
    try:
        b = subprocess.run(["cargo", "build", "-p", "schedlab-verify", "--tests", "--release"], env=loom_env, capture_output=True, text=True)
        if b.returncode != 0:
            verdict = "unviable"
        else:
            proc = subprocess.Popen(tests[scope], env=loom_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            try:
                rc = proc.wait(timeout=240)
                verdict = "caught" if rc != 0 else "MISSED"
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
                verdict = "caught (timeout)"
    finally:
        shutil.copy("target/mutants-locks-ledger.orig", path)
    if verdict.startswith("caught"):
        caught += 1
    print(f"{i:2} {verdict:16} {scope:5} {path}: {what} ({time.time()-t0:.0f} s)", flush=True)
print(f"caught {caught} of {len(M)}")

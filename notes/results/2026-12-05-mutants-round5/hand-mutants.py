# Hand-applied mutants outside scripts/mutants-oracles.py's operator set (issue 45, item 6, round five),
# run with its core-new test command (-j 1); each file is restored. Usage: python3 THIS OUT.tsv
import subprocess, os, sys, time
ROOT=os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
T=[["cargo","test","-q","-j","1","-p","schedlab-core","--lib"],["cargo","test","-q","-j","1","-p","schedlab-variants","--test","scheduler_behaviour"]]
M=[
 ("variants/src/mainline.rs","            Route::Skip\n        } else {\n            Route::Defer","            Route::Defer\n        } else {\n            Route::Skip","route: Skip and Defer swapped"),
 ("variants/src/mainline.rs","                lists.add(group, op, bytes);","                let _ = (group, op, bytes, &lists);","run_deferred: the per-CPU add dropped"),
 ("core/src/scheduler.rs","update: StatUpdate::LegacyIo { op: spec.op, bytes: spec.sectors as u64 * 512 },","update: StatUpdate::LegacyIo { op: spec.op, bytes: spec.sectors as u64 * 256 },","count_at_submit: bytes per sector 512 -> 256"),
 ("core/src/scheduler.rs","        if P::LEGACY_IO_AT_SUBMIT {\n            self.count_at_submit(spec);","        if !P::LEGACY_IO_AT_SUBMIT {\n            self.count_at_submit(spec);","insert: counts at submission for the other policies"),
 ("core/src/scheduler.rs","        let over = st.over_limit(self.queue, limit);","        let over = { let _ = limit; false };","limit_depth_body: never over"),
 ("core/src/profile.rs","        self.submit_sites().contains(&site)","        !self.submit_sites().contains(&site)","has: negated"),
 ("core/src/profile.rs","                &[SubmitSite::BioMerge, SubmitSite::LimitDepth, SubmitSite::Insert]","                &[SubmitSite::BioMerge, SubmitSite::Insert]","submit_sites: mainline without the depth limit"),
 ("core/src/deadline.rs","    usize::from(op.write)","    usize::from(!op.write)","dir_of: directions swapped"),
]
out=open(sys.argv[1],'w'); out.write("outcome\tfile\tmutant\tseconds\n")
import time
for path,old,new,what in M:
    full=os.path.join(ROOT,path); orig=open(full).read()
    assert orig.count(old)==1,(path,what)
    t0=time.time()
    try:
        open(full,'w').write(orig.replace(old,new))
        outcome='missed'
        for i,cmd in enumerate(T):
            b=subprocess.run(cmd+["--no-run"],cwd=ROOT,capture_output=True)
            if b.returncode!=0: outcome='unviable'; break
            r=subprocess.run(cmd,cwd=ROOT,capture_output=True,timeout=300)
            if r.returncode!=0: outcome='caught'; break
    finally:
        open(full,'w').write(orig)
    out.write(f"{outcome}\t{path}\t{what}\t{time.time()-t0:.0f}\n"); out.flush()
    print(outcome,path,what,flush=True)

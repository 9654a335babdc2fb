//! The core's one description of each call's locks (`schedlab_core::profile::lock_sequence`),
//! which the calibration and `predict` lay measured holds on, against the locks each call really
//! takes: for every registered variant, insert path and kernel profile, one call at a time with
//! the lock statistics on. A path that the core takes and the description lacks (a new lock
//! site modelled nowhere) fails here, by name.
//!
//! One test function: the lock statistics are global to the process.

use schedlab_benches::driver::roundtrip::read_4k;
use schedlab_benches::model::calibrate::lock_order;
use schedlab_benches::model::harness::Call;
use schedlab_core::lockstat::{self, LockPath};
use schedlab_core::{
    InsertPathKind, KernelProfile, LockKind, SchedClock, SchedConfig, Scheduler, StatsPolicy,
};
use schedlab_variants::VariantVisitor;
use std::collections::BTreeMap;

/// Acquisitions per lock class, and per path of the scheduler lock, made by `f`.
fn taken(f: impl FnOnce()) -> (BTreeMap<String, u64>, BTreeMap<&'static str, u64>) {
    lockstat::reset();
    lockstat::set_enabled(true);
    f();
    lockstat::set_enabled(false);
    lockstat::flush();
    let stats = lockstat::snapshot();
    let mut classes = BTreeMap::new();
    let mut sched_paths = BTreeMap::new();
    for summary in stats.summarize(1) {
        if summary.acquisitions > 0 {
            classes.insert(summary.name.to_string(), summary.acquisitions);
        }
        if summary.name == "sched" {
            for p in &summary.paths {
                if p.acquisitions > 0 {
                    sched_paths.insert(p.path.name(), p.acquisitions);
                }
            }
        }
    }
    (classes, sched_paths)
}

fn counted(order: &[&'static str]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for name in order {
        *m.entry(name.to_string()).or_insert(0) += 1;
    }
    m
}

/// Checks one call: the core's classes (`sched`, `insert`) exactly as described, `queue` at most
/// as described (only variants that defer under it take it), nothing else of the core's.
fn check(
    what: &str,
    call: Call,
    insert: InsertPathKind,
    profile: KernelProfile,
    got: &BTreeMap<String, u64>,
) {
    let want = counted(&lock_order(call, insert, profile));
    for class in ["sched", "insert"] {
        let (w, g) = (want.get(class).copied().unwrap_or(0), got.get(class).copied().unwrap_or(0));
        assert_eq!(g, w, "{what} {call:?}: took `{class}` {g} times, the description says {w} ({got:?} against {want:?})");
    }
    let (w, g) = (want.get("queue").copied().unwrap_or(0), got.get("queue").copied().unwrap_or(0));
    assert!(g <= w, "{what} {call:?}: took `queue` {g} times, the description allows {w}");
}

struct Sites {
    insert: InsertPathKind,
    profile: KernelProfile,
}

impl VariantVisitor for Sites {
    type Output = ();
    fn visit<P: StatsPolicy>(self) {
        let what = format!("{} on {} under {}", P::NAME, self.insert, self.profile);
        let cfg = SchedConfig {
            slots: 2,
            insert: self.insert,
            profile: self.profile,
            ..SchedConfig::default()
        };
        let sched = Scheduler::<P>::new(LockKind::FairSpin, cfg, SchedClock::real());
        let group = sched.create_group(sched.root(), 200).unwrap();
        let process = sched.spawn_process(group).unwrap();
        let spec = |i: u64| read_4k(1_000_000 * (i + 1), i);
        // A queued request first, so that the queue is active and the depth limit walks it.
        process.submit(spec(0));
        let first = sched.dispatch().expect("the first request");
        process.submit(spec(1));
        let (got, paths) = taken(|| {
            process.submit(spec(2));
        });
        check(&what, Call::Insert, self.insert, self.profile, &got);
        // Each submission site under its own path name.
        let merge = self.profile.submit_sites().contains(&schedlab_core::SubmitSite::BioMerge);
        assert_eq!(paths.get("bio-merge").copied(), merge.then_some(1), "{what}: {paths:?}");
        let depth = self.profile.submit_sites().contains(&schedlab_core::SubmitSite::LimitDepth);
        assert_eq!(paths.get("limit-depth").copied(), depth.then_some(1), "{what}: {paths:?}");
        let (got, _) = taken(|| drop(first.complete()));
        check(&what, Call::Complete, self.insert, self.profile, &got);
        // Each dispatch finds a newly submitted request (listed, on the lists path: then it splices
        // and releases the listing's pin, its second hold).
        let mut on_device = Vec::new();
        for i in 3..5 {
            let (got, _) = taken(|| on_device.push(sched.dispatch().expect("a queued request")));
            check(&what, Call::Dispatch, self.insert, self.profile, &got);
            process.submit(spec(i));
        }
        on_device.push(sched.dispatch().expect("the last request"));
        on_device.push(sched.dispatch().expect("the last request"));
        let (got, _) = taken(|| assert!(sched.dispatch().is_none()));
        check(&what, Call::EmptyDispatch, self.insert, self.profile, &got);
        for rq in on_device {
            rq.complete();
        }
        // An idle queue: the depth limit still takes the lock (6.13 on, the kernel reads
        // `on_st_or_in_serv` under it) and finds the queue under no limit.
        let (_, paths) = taken(|| assert!(!process.limit_depth()));
        assert_eq!(
            paths.get("limit-depth").copied(),
            Some(1),
            "{what}: an idle queue's depth limit took no lock: {paths:?}"
        );
        drop(process);
    }
}

#[test]
fn every_call_takes_the_locks_the_core_describes() {
    for info in schedlab_variants::ALL {
        for &insert in InsertPathKind::ALL {
            for profile in KernelProfile::ALL {
                schedlab_variants::visit(info.name, Sites { insert, profile })
                    .expect("a registered variant");
            }
        }
    }
    // Every path that takes the scheduler lock on the request cycle has a name of its own.
    for name in ["bio-merge", "limit-depth", "insert", "dispatch", "completion"] {
        assert!(LockPath::ALL.iter().any(|p| p.name() == name), "{name}");
    }
}

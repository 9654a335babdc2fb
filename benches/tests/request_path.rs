//! One structure: the request path `predict` simulates against the one the core runs, for every
//! kernel profile and insert path (and every registered variant). The program the simulation
//! builds ([`Program::outline`]: each hold with its site and pad, the gaps between) is compared
//! with what the core does for one request with the same `SitePads`: the scheduler lock's hold
//! spans, their lock path and the time each hold and each stretch between holds took on a
//! ticking manual clock (every clock read moves it by 1 ns, so a pad of `ns` spins `ns` reads and
//! the time is a count, not a measurement). The pads are distinct powers of two times a unit far
//! above the core's own reads, so each one is recognised by value.
//!
//! A site out of order, a pad on another site or a gap before another site, in the core or in the
//! simulation alone, fails here.

use schedlab_benches::driver::roundtrip::read_4k;
use schedlab_benches::model::calibrate::{lock_order, Calibration, CallModel, Segment};
use schedlab_benches::model::harness::Call;
use schedlab_benches::model::sim::{PathStep, Program};
use schedlab_core::{
    Clock, InsertPathKind, KernelProfile, LockKind, ManualClock, PadSite, SchedClock, SchedConfig,
    Scheduler, SitePads, StatsPolicy,
};
use schedlab_variants::VariantVisitor;
use std::sync::{Arc, Mutex};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A hold pad's unit and a gap's: the core's own clock reads in a hold or between two holds of
/// one request are far fewer than either.
const HOLD_UNIT: u64 = 1_000;
const GAP_UNIT: u64 = 100_000;

/// Every site's pad and every gap different, and no sum of some equal to another.
const PADS: SitePads = SitePads {
    hold_ns: [HOLD_UNIT, 2 * HOLD_UNIT, 4 * HOLD_UNIT, 8 * HOLD_UNIT, 16 * HOLD_UNIT],
    gap_ns: [GAP_UNIT, 2 * GAP_UNIT, 4 * GAP_UNIT],
};

/// A calibration whose calls take the locks in the core's described order (as the calibration
/// lays measured holds), each hold and each piece of work 1 ns.
fn calibration(insert: InsertPathKind, profile: KernelProfile) -> Calibration {
    let call = |call: Call| {
        let mut segments = vec![Segment { lock: None, ns: 1.0, lines: 0.0, probability: 1.0 }];
        for lock in lock_order(call, insert, profile) {
            segments.push(Segment {
                lock: Some(lock.to_string()),
                ns: 1.0,
                lines: 0.0,
                probability: 1.0,
            });
            segments.push(Segment { lock: None, ns: 1.0, lines: 0.0, probability: 1.0 });
        }
        CallModel { call, total_ns: segments.len() as f64, cv: 0.0, segments }
    };
    let calls: Vec<CallModel> =
        [Call::Insert, Call::Dispatch, Call::Complete].into_iter().map(call).collect();
    Calibration {
        variant: "path".into(),
        lock: LockKind::FairSpin,
        insert: insert.name().into(),
        kernel: profile,
        transfer_ns: 0.0,
        relayed: false,
        loop_ns: 0.0,
        solo_cycle_ns: 1.0,
        timing_ns: 0.0,
        solo: calls,
        pair: Vec::new(),
        raw: Vec::new(),
        windows: 1,
        rounds_per_window: 1,
        anomalies: 0,
    }
}

/// The scheduler lock's part of a path: `hold SITE +PAD` and `gap NS`, the gaps merged across
/// the other locks' holds.
fn sched_steps(outline: &[PathStep]) -> Vec<String> {
    let mut out = Vec::new();
    let mut gap = 0u64;
    for step in outline {
        match step {
            PathStep::Gap { ns } => gap += ns,
            PathStep::Hold { lock, site, pad_ns } if lock == "sched" => {
                if gap > 0 {
                    out.push(format!("gap {gap}"));
                    gap = 0;
                }
                out.push(format!("hold {} +{pad_ns}", site.map_or("?", PadSite::name)));
            }
            PathStep::Hold { .. } => {}
        }
    }
    if gap > 0 {
        out.push(format!("gap {gap}"));
    }
    out
}

/// What the subscriber saw: each scheduler-lock hold's path, and the clock at its start and end.
#[derive(Default)]
struct Seen {
    paths: Vec<(u64, String)>,
    holds: Vec<(String, u64, u64)>,
    open: Vec<(String, u64)>,
}

/// Keeps the scheduler lock's hold spans, timed on the manual clock.
struct Holds {
    seen: Arc<Mutex<Seen>>,
    clock: Arc<ManualClock>,
    next: std::sync::atomic::AtomicU64,
}

struct PathField(Option<String>);

impl tracing::field::Visit for PathField {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "path" {
            self.0 = Some(format!("{value:?}"));
        }
    }
}

impl Subscriber for Holds {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if span.metadata().name() == "sched lock: hold" {
            let mut path = PathField(None);
            span.record(&mut path);
            self.seen.lock().unwrap().paths.push((id, path.0.unwrap_or_default()));
        }
        Id::from_u64(id)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, id: &Id) {
        let mut seen = self.seen.lock().unwrap();
        if let Some((_, path)) = seen.paths.iter().find(|(i, _)| *i == id.into_u64()) {
            let path = path.clone();
            let now = self.clock.now_ns();
            seen.open.push((path, now));
        }
    }
    fn exit(&self, id: &Id) {
        let mut seen = self.seen.lock().unwrap();
        if seen.paths.iter().any(|(i, _)| *i == id.into_u64()) {
            let (path, start) = seen.open.pop().expect("entered");
            let now = self.clock.now_ns();
            seen.holds.push((path, start, now));
        }
    }
}

/// One request through the core (submission, the insert→dispatch gap the job spins, dispatch,
/// completion), in the scheduler lock's steps.
struct CorePath {
    insert: InsertPathKind,
    profile: KernelProfile,
}

impl VariantVisitor for CorePath {
    type Output = Vec<String>;
    fn visit<P: StatsPolicy>(self) -> Vec<String> {
        let (clock, handle) = SchedClock::manual_ticking(0);
        let cfg = SchedConfig {
            slots: 2,
            insert: self.insert,
            profile: self.profile,
            pads: PADS,
            ..SchedConfig::default()
        };
        let sched = Scheduler::<P>::new(LockKind::FairSpin, cfg, clock.clone());
        let group = sched.create_group(sched.root(), 200).unwrap();
        let process = sched.spawn_process(group).unwrap();
        let spec = |i: u64| read_4k(1_000_000 * (i + 1), i);
        // One request first, so that the traced one meets a scheduler that has run.
        process.submit(spec(0));
        drop(sched.dispatch().expect("the first request").complete());
        let seen = Arc::new(Mutex::new(Seen::default()));
        let subscriber =
            Holds { seen: seen.clone(), clock: handle.clone(), next: Default::default() };
        let start = handle.now_ns();
        tracing::subscriber::with_default(subscriber, || {
            process.submit(spec(1));
            // The job loop's third gap (`job_loop`: spun on the scheduler's clock after submit).
            for _ in 0..PADS.gap_ns[2] {
                clock.now_ns();
            }
            drop(sched.dispatch().expect("the request").complete());
        });
        drop(process);
        let seen = seen.lock().unwrap();
        let mut out = Vec::new();
        let mut last = start;
        for (path, from, to) in &seen.holds {
            let gap = (from - last) / GAP_UNIT * GAP_UNIT;
            if gap > 0 {
                out.push(format!("gap {gap}"));
            }
            out.push(format!("hold {path} +{}", (to - from) / HOLD_UNIT * HOLD_UNIT));
            last = *to;
        }
        out
    }
}

#[test]
fn predict_simulates_the_request_path_the_core_runs() {
    let mut cases = 0;
    for profile in KernelProfile::ALL {
        for &insert in InsertPathKind::ALL {
            let program = Program::new(&calibration(insert, profile), 1, 0.0)
                .expect("a program")
                .with_pads(PADS);
            let simulated = sched_steps(&program.outline());
            for info in schedlab_variants::ALL {
                let core = schedlab_variants::visit(info.name, CorePath { insert, profile })
                    .expect("a registered variant");
                let what = format!("{} on {insert} under {profile}", info.name);
                assert_eq!(
                    simulated, core,
                    "{what}: the simulated path (left) is not the core's (right)"
                );
                cases += 1;
            }
        }
    }
    assert!(cases >= KernelProfile::ALL.len() * InsertPathKind::ALL.len());
}

/// Without pads the program is the calibrated one: no gap, no pad anywhere.
#[test]
fn no_pads_leave_the_calibrated_path_as_it_was() {
    for profile in KernelProfile::ALL {
        for &insert in InsertPathKind::ALL {
            let program = Program::new(&calibration(insert, profile), 1, 0.0)
                .expect("a program")
                .with_pads(SitePads::NONE);
            for step in program.outline() {
                assert!(
                    matches!(step, PathStep::Hold { pad_ns: 0, .. }),
                    "{insert} under {profile}: {step:?}"
                );
            }
        }
    }
}

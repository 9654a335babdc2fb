//! The kernel's time at each of BFQ's lock sites and between them, measured from the running
//! kernel, and the model's pads computed from it (issue 40, item 1).
//!
//! ## What is measured, and how
//!
//! - **Locked time per site** (hold and wait together), from the profile of kernel `bfq` taken
//!   before the rounds (`perf record -a -g`, `cpu-clock`): the samples with the site's entry
//!   function on the stack ([`SITES`]) and, under it, the lock's release with
//!   interrupts back on (`_raw_spin_unlock_irq`, `_raw_spin_unlock_irqrestore`) or its slow path.
//!   BFQ's sections run with interrupts off; in a guest without a PMU the sampling timer is an
//!   interrupt, so a sample due inside a section is taken when the section ends, at the unlock:
//!   those samples are the section's time (wait and hold). Per I/O: their share of the
//!   experiment's samples × the profiled run's CPU per I/O. On a machine whose `perf` samples on
//!   a PMU (NMIs) the samples land inside the section instead and this undercounts; the report
//!   says which clock the profile used only through its counts, so read it with that in mind.
//! - **Wait per site**, from a run recorded with the contention tracepoints right after the
//!   profile (`contention`): contended acquisitions × mean wait, per I/O. The recorder's handler
//!   runs inside the slow path, so the waits it reports are longer than in an unrecorded run
//!   (bpftrace on the contention tracepoints cost bfq a third of its IOPS at 2 jobs × iodepth 32,
//!   `notes/results/2026-12-04-fidelity.md`): at a contended point, locked − wait comes out far
//!   below the hold (0 at two of five sites on 2026-12-04).
//! - **Hold per site**, therefore, where waits are negligible: bfq profiled and recorded again at
//!   one job and iodepth 1 ([`Uncontended`]; on 2026-12-04 its recorded waits were under 1 % of
//!   its locked time at every site), hold = locked − wait there (at least 0), per acquisition
//!   (one per site per I/O). This is the hold of an uncontended section; the model's own hold is
//!   likewise measured uncontended (one job), and both lengthen alike under contention by the
//!   cache lines the other CPU pulls, which the model pays for real. At a point that is itself one
//!   job at iodepth 1, or without that run, the point's own locked − wait is used. Without the
//!   recorder (`--contention off`) the locked time stands in for the hold (an upper bound).
//! - **Gaps**: the submitting context's time in blk-mq between the sites, no BFQ frame on the
//!   stack, by the innermost function of [`GAP_FUNCTIONS`]: request allocation before the depth
//!   limit (bio merge → depth limit), tags, request set-up and the plug (depth limit → insert),
//!   running the hardware queue (insert → dispatch).
//!
//! Cost: one profiled run (made anyway for the elevator cost) and one recorded run per point, and
//! one profiled and one recorded run at one job and iodepth 1 per point that is not that one.
//!
//! ## The model's pads
//!
//! The model's own hold per site is measured by a one-job run of the model's BFQ row with exact
//! lock statistics; the pad is the kernel's hold less the model's own (at least 0): the core's
//! work plus the pad is the kernel's hold. The gaps are spun as they are.

use super::contention::ContentionSummary;
use super::profile::is_experiment_sample;
use crate::driver::profile::Folded;
use crate::error::failed;
use crate::error::ExperimentError;
use schedlab_core::{PadSite, SitePads};
use serde::Serialize;

/// The kernel functions that take BFQ's lock, as the contention recorder names their callers,
/// and the model's lock path of each.
pub const SITES: [(&[&str], &str); 5] = [
    (&["bfq_insert_requests", "bfq_insert_request"], "insert"),
    (&["bfq_dispatch_request", "__bfq_dispatch_request"], "dispatch"),
    (&["bfq_finish_requeue_request", "bfq_finish_request"], "completion"),
    (&["bfq_bio_merge"], "bio-merge"),
    // `bfqq_request_over_limit` takes the lock; inlined, the caller is `bfq_limit_depth`.
    (&["bfqq_request_over_limit", "bfq_limit_depth"], "limit-depth"),
];

/// The model's path for a kernel caller of BFQ's lock, if it is one of [`SITES`].
pub fn site_of(caller: &str) -> Option<&'static str> {
    SITES.iter().find(|(fns, _)| fns.contains(&caller)).map(|(_, path)| *path)
}

/// blk-mq functions between BFQ's sites, by the gap they fall in: `Some(i)` is gap `i` of
/// [`SitePads::gap_ns`]; `None` is work after the dispatch (handing the request to the device:
/// the model's outside work). The innermost listed frame of a stack decides.
pub const GAP_FUNCTIONS: [(&str, Option<usize>); 14] = [
    ("blk_mq_dispatch_rq_list", None),
    ("__blk_mq_alloc_driver_tag", None),
    ("blk_mq_get_tag", Some(1)),
    ("__blk_mq_get_tag", Some(1)),
    ("blk_mq_rq_ctx_init", Some(1)),
    ("blk_add_rq_to_plug", Some(1)),
    ("__blk_mq_alloc_requests", Some(0)),
    ("blk_mq_get_new_requests", Some(0)),
    ("blk_mq_run_hw_queue", Some(2)),
    ("blk_mq_sched_dispatch_requests", Some(2)),
    ("__blk_mq_sched_dispatch_requests", Some(2)),
    ("blk_mq_dispatch_list", Some(1)),
    ("blk_mq_flush_plug_list", Some(1)),
    ("blk_mq_insert_requests", Some(1)),
];

/// A frame's name without the compiler's suffixes (`blk_mq_rq_ctx_init.isra.0`).
fn base(frame: &str) -> &str {
    frame.split('.').next().unwrap_or(frame)
}

fn gap_of(frames: &[&str]) -> Option<usize> {
    frames
        .iter()
        .rev()
        .find_map(|f| GAP_FUNCTIONS.iter().find(|(name, _)| *name == base(f)).map(|(_, g)| *g))?
}

fn is_release_or_spin(frame: &str) -> bool {
    frame.contains("spin_unlock_irq") || frame.contains("queued_spin_lock_slowpath")
}

/// Samples of a profile by site and gap.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SiteSamples {
    /// The experiment's samples (the base of every share).
    pub samples: u64,
    /// Locked samples per site, in [`PadSite::ALL`]'s order.
    pub locked: [u64; 5],
    /// Samples per gap.
    pub gaps: [u64; 3],
}

impl SiteSamples {
    /// A profile's samples by site and gap; an error when a sum of its sample counts passes
    /// `u64::MAX` (issue 43: checked, where a saturated sum gave a wrong share silently).
    pub fn of(folded: &Folded) -> Result<SiteSamples, ExperimentError> {
        const WHAT: &str = "the bfq profile's samples";
        let add = |slot: &mut u64, n: u64| crate::counts::add_to(slot, n, WHAT).map_err(failed);
        let mut out = SiteSamples::default();
        for (stack, &n) in &folded.stacks {
            let frames: Vec<&str> = stack.split(';').collect();
            if !is_experiment_sample(&frames) {
                continue;
            }
            add(&mut out.samples, n)?;
            let entry = frames.iter().position(|f| site_of(f).is_some());
            match entry {
                Some(i) => {
                    let site = site_of(frames[i]).and_then(PadSite::from_name);
                    if let Some(site) =
                        site.filter(|_| frames[i + 1..].iter().any(|f| is_release_or_spin(f)))
                    {
                        add(&mut out.locked[site as usize], n)?;
                    }
                }
                None if !frames.iter().any(|f| super::profile::is_bfq(f)) => {
                    if let Some(g) = gap_of(&frames) {
                        add(&mut out.gaps[g], n)?;
                    }
                }
                None => {}
            }
        }
        Ok(out)
    }
}

/// The kernel's time at one site, µs per I/O.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SiteTime {
    pub site: &'static str,
    /// Locked (hold and wait) at this point, from the profile.
    pub locked_us: f64,
    /// The profile's samples behind `locked_us`.
    pub samples: u64,
    /// Waited at this point, from the recorded run (`None` without one).
    pub wait_us: Option<f64>,
    /// Held: locked − wait (at least 0) where the holds were measured ([`SiteCalibration::holds_at`]);
    /// locked when no wait was recorded there.
    pub hold_us: f64,
    /// The locked time, samples and wait behind `hold_us` where they are not this point's own.
    pub uncontended: Option<UncontendedSite>,
}

/// One site's figures at the point where the holds are measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UncontendedSite {
    pub locked_us: f64,
    pub samples: u64,
    pub wait_us: Option<f64>,
}

/// Kernel bfq's profile (and waits) at the point where its waits are negligible, one job at
/// iodepth 1: where the holds per site are measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Uncontended {
    /// The point, in words.
    pub point: String,
    pub samples: SiteSamples,
    /// The profiled run's CPU per I/O, µs.
    pub cpu_per_io_us: f64,
    /// Waits per site per I/O, from its recorded run (`None` without one).
    pub waits: Option<[f64; 5]>,
}

/// µs per I/O of `n` of `samples.samples` profile samples in a run of `cpu_per_io_us`.
fn us_per_io(samples: &SiteSamples, cpu_per_io_us: f64, n: u64) -> f64 {
    if samples.samples == 0 {
        0.0
    } else {
        n as f64 / samples.samples as f64 * cpu_per_io_us
    }
}

/// The kernel's per-site times and gaps at one point, and the pads the model runs with.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SiteCalibration {
    /// The profiled run's CPU per I/O, µs, and the samples of the profile.
    pub cpu_per_io_us: f64,
    pub samples: u64,
    pub sites: Vec<SiteTime>,
    /// bio merge → depth limit, depth limit → insert, insert → dispatch, µs per I/O.
    pub gaps_us: [f64; 3],
    /// The model's own hold per site (one job, exact lock statistics), µs; empty when not measured.
    pub model_own_hold_us: Vec<(String, f64)>,
    /// What the model's rows run with.
    pub pads: SitePads,
    /// Where the holds were measured: this point, or one job at iodepth 1.
    pub holds_at: String,
    /// How the holds were had, in words.
    pub basis: String,
}

/// Waits per site per I/O from a recorded run: its scheduler-lock callers mapped to the sites.
pub fn waits_per_io(c: &ContentionSummary, ios: f64) -> [f64; 5] {
    let mut w = [0.0; 5];
    if ios <= 0.0 {
        return w;
    }
    for (caller, k) in &c.scheduler_callers {
        if let Some(site) = site_of(caller).and_then(PadSite::from_name) {
            w[site as usize] += k.wait_total_ns as f64 / 1e3 / ios;
        }
    }
    w
}

impl SiteCalibration {
    /// From a profile's samples at this point, its run's CPU per I/O, the recorded waits (if
    /// any), the uncontended point's profile where the holds are measured (if made) and the
    /// model's own holds (if measured). The gaps are always this point's.
    pub fn of(
        samples: &SiteSamples,
        cpu_per_io_us: f64,
        waits: Option<[f64; 5]>,
        uncontended: Option<Uncontended>,
        model_own_hold_us: Vec<(String, f64)>,
    ) -> SiteCalibration {
        let per_io = |n: u64| us_per_io(samples, cpu_per_io_us, n);
        let sites: Vec<SiteTime> = PadSite::ALL
            .iter()
            .map(|&s| {
                let i = s as usize;
                let locked_us = per_io(samples.locked[i]);
                let wait_us = waits.map(|w| w[i]);
                let uncontended = uncontended.as_ref().map(|u| UncontendedSite {
                    locked_us: us_per_io(&u.samples, u.cpu_per_io_us, u.samples.locked[i]),
                    samples: u.samples.locked[i],
                    wait_us: u.waits.map(|w| w[i]),
                });
                let hold_us = match &uncontended {
                    Some(u) => (u.locked_us - u.wait_us.unwrap_or(0.0)).max(0.0),
                    None => (locked_us - wait_us.unwrap_or(0.0)).max(0.0),
                };
                SiteTime {
                    site: s.name(),
                    locked_us,
                    samples: samples.locked[i],
                    wait_us,
                    hold_us,
                    uncontended,
                }
            })
            .collect();
        let gaps_us = [per_io(samples.gaps[0]), per_io(samples.gaps[1]), per_io(samples.gaps[2])];
        let own =
            |site: &str| model_own_hold_us.iter().find(|(s, _)| s == site).map_or(0.0, |(_, h)| *h);
        let ns = |us: f64| (us * 1e3).round().max(0.0) as u64;
        let mut hold_ns = [0u64; 5];
        for (i, t) in sites.iter().enumerate() {
            hold_ns[i] = ns(t.hold_us - own(t.site));
        }
        let pads = SitePads { hold_ns, gap_ns: [ns(gaps_us[0]), ns(gaps_us[1]), ns(gaps_us[2])] };
        let (holds_at, recorded) = match &uncontended {
            Some(u) => (u.point.clone(), u.waits.is_some()),
            None => ("this point".to_string(), waits.is_some()),
        };
        let basis = match (uncontended.is_some(), recorded) {
            (true, true) => format!("hold = locked time (profile) − wait (recorded run), both at {holds_at}, where waits are negligible"),
            (true, false) => format!("hold = locked time (profile) at {holds_at}, waits not recorded: an upper bound"),
            (false, true) => "hold = locked time (profile) − wait (recorded run) at this point; the recorder lengthens waits, so a lower bound".to_string(),
            (false, false) => "hold = locked time (profile), waits not recorded: an upper bound".to_string(),
        };
        SiteCalibration {
            cpu_per_io_us,
            samples: samples.samples,
            sites,
            gaps_us,
            model_own_hold_us,
            pads,
            holds_at,
            basis,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn folded(lines: &[(&str, u64)]) -> Folded {
        let stacks: BTreeMap<String, u64> =
            lines.iter().map(|(s, n)| (s.to_string(), *n)).collect();
        Folded { stacks, ..Folded::default() }
    }

    #[test]
    fn locked_samples_are_those_at_the_release_under_a_site_and_gaps_go_by_function() {
        let f = folded(&[
            // Insert, sampled at the unlock: locked.
            ("fio;blk_mq_dispatch_list;bfq_insert_requests;_raw_spin_unlock_irq", 10),
            // Insert, sampled in its work with interrupts on (before the lock): not locked.
            ("fio;blk_mq_dispatch_list;bfq_insert_requests;bfq_init_rq", 3),
            // Completion in softirq, at the unlock: locked.
            ("ksoftirqd/1;blk_mq_end_request;bfq_finish_requeue_request;_raw_spin_unlock_irqrestore", 7),
            // The depth limit (inlined into bfq_limit_depth), at the unlock.
            ("fio;__blk_mq_alloc_requests;bfq_limit_depth;_raw_spin_unlock_irq", 2),
            // Gaps.
            ("fio;blk_mq_submit_bio;__blk_mq_alloc_requests;kmem_cache_alloc", 4),
            ("fio;blk_mq_submit_bio;__blk_mq_alloc_requests;blk_mq_rq_ctx_init.isra.0", 5),
            ("fio;blk_mq_dispatch_list;blk_mq_run_hw_queue;__blk_mq_sched_dispatch_requests", 6),
            // After the dispatch: the device's, no gap.
            ("fio;blk_mq_run_hw_queue;blk_mq_dispatch_rq_list;loop_queue_rq", 8),
            // Another process: not the experiment's.
            ("cc1;do_page_fault", 100),
        ]);
        let s = SiteSamples::of(&f).unwrap();
        assert_eq!(s.samples, 10 + 3 + 7 + 2 + 4 + 5 + 6 + 8);
        assert_eq!(s.locked, [0, 2, 10, 0, 7]);
        assert_eq!(s.gaps, [4, 5, 6]);
        // 45 samples over 9 µs per I/O: 0.2 µs a sample.
        let waits = [0.0, 0.1, 0.5, 0.0, 0.2];
        let own = vec![("insert".to_string(), 0.3)];
        let c = SiteCalibration::of(&s, 9.0, Some(waits), None, own);
        let insert = &c.sites[PadSite::Insert as usize];
        assert!(
            (insert.locked_us - 2.0).abs() < 1e-9 && (insert.hold_us - 1.5).abs() < 1e-9,
            "{insert:?}"
        );
        // The pad is the kernel's hold less the model's own work there.
        assert_eq!(c.pads.hold(PadSite::Insert), 1200);
        assert_eq!(c.pads.hold(PadSite::Completion), 1200);
        assert_eq!(c.pads.gap_ns, [800, 1000, 1200]);
        // A wait longer than the locked time gives no negative hold.
        let c = SiteCalibration::of(&s, 9.0, Some([0.0, 5.0, 0.0, 0.0, 0.0]), None, Vec::new());
        assert_eq!(c.pads.hold(PadSite::LimitDepth), 0);
    }

    /// With the uncontended point's profile, the holds (and so the pads) are its locked time less
    /// its waits, never this point's (whose recorded waits can eat the whole locked time); the
    /// gaps and this point's own locked time and wait stay this point's.
    #[test]
    fn holds_come_from_the_uncontended_point_and_gaps_from_this_one() {
        let here = SiteSamples { samples: 100, locked: [10, 10, 10, 10, 10], gaps: [5, 0, 0] };
        // At this point every site waited as long as it was locked: no hold left.
        let waits_here = [1.0; 5];
        let quiet = Uncontended {
            point: "1 job × iodepth 1 (io_uring)".into(),
            samples: SiteSamples { samples: 200, locked: [20, 0, 0, 40, 0], gaps: [0, 50, 0] },
            cpu_per_io_us: 20.0,
            waits: Some([0.1, 0.0, 0.0, 0.0, 0.0]),
        };
        let c = SiteCalibration::of(
            &here,
            10.0,
            Some(waits_here),
            Some(quiet),
            vec![("dispatch".to_string(), 0.5)],
        );
        // Bio merge: 20 of 200 samples of 20 µs = 2 µs locked, less 0.1 waited.
        let bio = &c.sites[PadSite::BioMerge as usize];
        assert!((bio.hold_us - 1.9).abs() < 1e-9 && (bio.locked_us - 1.0).abs() < 1e-9, "{bio:?}");
        assert_eq!(bio.uncontended.as_ref().map(|u| u.samples), Some(20));
        assert_eq!(c.pads.hold(PadSite::BioMerge), 1900);
        // Dispatch: 4 µs held uncontended, 0.5 of them the model's own.
        assert_eq!(c.pads.hold(PadSite::Dispatch), 3500);
        // The gaps are this point's: 5 of 100 samples of 10 µs.
        assert_eq!(c.pads.gap_ns, [500, 0, 0]);
        assert!(c.holds_at.contains("1 job") && c.basis.contains("negligible"), "{}", c.basis);
        // Without it, the same point's holds are all 0 (the recorded waits ate them).
        let c = SiteCalibration::of(&here, 10.0, Some(waits_here), None, Vec::new());
        assert_eq!(c.pads.hold_ns, [0; 5]);
        assert_eq!(c.holds_at, "this point");
    }

    /// Sample counts near the largest: summed up to it, refused past it in one line (a
    /// saturated sum gave a share of a wrong whole).
    #[test]
    fn sample_counts_that_add_up_past_the_largest_are_refused() {
        let insert_locked = "fio;blk_mq_dispatch_list;bfq_insert_requests;_raw_spin_unlock_irq";
        let s = SiteSamples::of(&folded(&[(insert_locked, u64::MAX - 1), ("fio;read_tsc", 1)]))
            .unwrap();
        assert_eq!(s.samples, u64::MAX);
        let past = folded(&[(insert_locked, u64::MAX), ("fio;read_tsc", 1)]);
        let e = SiteSamples::of(&past).unwrap_err().message;
        assert!(e.contains("add up past 18446744073709551615") && !e.contains('\n'), "{e}");
    }
}

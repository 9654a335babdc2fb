//! A known cost injected where a request enters the scheduler (`--inject-ns N --at
//! inside|outside`): the model's half of `schedlab kernel --inject`, which spins the same cost in
//! the running kernel at `block:block_rq_insert` (inside BFQ's lock) and `block:block_getrq`
//! (outside it, same submitting thread).
//!
//! | site | where the scheduler spins `ns` | kernel site |
//! | --- | --- | --- |
//! | [`InjectSite::Inside`] | holding the scheduler lock where the request enters the scheduler: in the `direct` insert, after the insert work; on the `lists` path, in the dispatch's splice, once per spliced request | `block_rq_insert` in `bfq_insert_request`, under `bfqd->lock` |
//! | [`InjectSite::Outside`] | in the submitting thread just before the insert, holding no lock | `block_getrq` in `blk_mq_submit_bio`, before the insert |
//!
//! The cost is a spin on the scheduler's clock (the real clock in runs; models leave it at 0).
//! A spin reads the clock at most `ns` times, so a clock that does not move (a manual clock in a
//! test) cannot hold it for ever.
//!
//! NOTE: the kernel's inside site is `bfq_insert_request`'s tracepoint, which on the 2024
//! insertion lists runs in `bfq_insert_requests` (the submitter flushing its plug), not in a
//! dispatch's splice as here: this model's lists path moved the insert work to the dispatcher,
//! and the injected cost goes with that work (see `insert/lists.rs`).

use crate::clock::SchedClock;

/// Where the injected cost is spent.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum InjectSite {
    /// Under the scheduler lock, where the request enters the scheduler.
    #[default]
    Inside,
    /// In the submitting thread just before the insert, outside every scheduler lock.
    Outside,
}

impl InjectSite {
    pub const ALL: [InjectSite; 2] = [InjectSite::Inside, InjectSite::Outside];

    pub fn name(self) -> &'static str {
        match self {
            InjectSite::Inside => "inside",
            InjectSite::Outside => "outside",
        }
    }

    pub fn from_name(name: &str) -> Option<InjectSite> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// A cost per request and where it is spent; `ns == 0` injects nothing.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Inject {
    pub ns: u64,
    pub at: InjectSite,
}

impl Inject {
    /// Nothing injected.
    pub const NONE: Inject = Inject { ns: 0, at: InjectSite::Inside };

    /// The cost spent under the scheduler lock per request, ns.
    pub fn inside_ns(self) -> u64 {
        if self.at == InjectSite::Inside {
            self.ns
        } else {
            0
        }
    }

    /// The cost spent before the insert per request, ns.
    pub fn outside_ns(self) -> u64 {
        if self.at == InjectSite::Outside {
            self.ns
        } else {
            0
        }
    }
}

/// One of BFQ's five lock sites, by the model's lock-path name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PadSite {
    BioMerge,
    LimitDepth,
    Insert,
    Dispatch,
    Completion,
}

impl PadSite {
    /// Every site, in the order a request meets them.
    pub const ALL: [PadSite; 5] = [
        PadSite::BioMerge,
        PadSite::LimitDepth,
        PadSite::Insert,
        PadSite::Dispatch,
        PadSite::Completion,
    ];

    /// The lock path's name (`lockstat`'s, and the kernel peer's `fidelity::SITES`).
    pub fn name(self) -> &'static str {
        match self {
            PadSite::BioMerge => "bio-merge",
            PadSite::LimitDepth => "limit-depth",
            PadSite::Insert => "insert",
            PadSite::Dispatch => "dispatch",
            PadSite::Completion => "completion",
        }
    }

    pub fn from_name(name: &str) -> Option<PadSite> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// The kernel's time at each lock site that the core's own work lacks, and the kernel's time
/// between the submission's sites (`schedlab kernel` measures both from the running kernel's
/// profile: issue 40). A hold pad is spun holding the scheduler lock at the end of the site's
/// work (on the `lists` path the insert's pad goes with the insert work, into the dispatch's
/// splice, as [`Inject`]'s inside cost does); a gap is spun holding no lock between two
/// submission sites. Nothing by default: every other command and every model check runs the
/// core's own work only.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct SitePads {
    /// ns per acquisition, in [`PadSite::ALL`]'s order.
    pub hold_ns: [u64; 5],
    /// ns between the bio merge and the depth limit, and between the depth limit and the insert
    /// (spun by [`crate::Process::submit`]); and between the insert and the dispatch that
    /// follows it on the same thread (blk-mq running the hardware queue: spun by the caller,
    /// which decides when to dispatch).
    pub gap_ns: [u64; 3],
}

impl SitePads {
    pub const NONE: SitePads = SitePads { hold_ns: [0; 5], gap_ns: [0; 3] };

    /// The gaps' sum, ns.
    pub fn gaps(&self) -> u64 {
        self.gap_ns.iter().sum()
    }

    pub fn hold(&self, site: PadSite) -> u64 {
        self.hold_ns[site as usize]
    }
}

/// Spins `ns` on `clock` (at most `ns` clock reads; nothing for 0).
#[inline]
pub(crate) fn spin(clock: &SchedClock, ns: u64) {
    if ns == 0 {
        return;
    }
    let end = clock.now_ns().saturating_add(ns);
    let mut reads = 1u64;
    while reads < ns && clock.now_ns() < end {
        std::hint::spin_loop();
        reads += 1;
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn each_site_spends_only_its_own_cost() {
        let inside = Inject { ns: 500, at: InjectSite::Inside };
        assert_eq!((inside.inside_ns(), inside.outside_ns()), (500, 0));
        let outside = Inject { ns: 500, at: InjectSite::Outside };
        assert_eq!((outside.inside_ns(), outside.outside_ns()), (0, 500));
        assert_eq!((Inject::NONE.inside_ns(), Inject::NONE.outside_ns()), (0, 0));
        for s in InjectSite::ALL {
            assert_eq!(InjectSite::from_name(s.name()), Some(s));
        }
        assert_eq!(InjectSite::from_name("between"), None);
    }

    #[test]
    fn a_spin_takes_at_least_its_cost_on_the_real_clock_and_ends_on_a_stopped_one() {
        let clock = SchedClock::real();
        let t0 = clock.now_ns();
        spin(&clock, 200_000);
        assert!(clock.now_ns() - t0 >= 200_000);
        // A manual clock that never moves: the spin ends after its bounded reads.
        let (manual, _handle) = SchedClock::manual(0);
        spin(&manual, 1_000);
    }
}

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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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

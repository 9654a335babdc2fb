//! The clock the scheduler reads: a cheap real monotonic clock for runs, a manual clock for tests,
//! models and virtual-time simulation. Nothing in the core calls `Instant::now()` directly.
//!
//! `Instant::now()` is slow on the virtual machines this runs on
//! (`../shared/reference/measuring.md`, "This kind of machine") and stats paths read the clock
//! several times per request, so the real clock reads the TSC through `quanta`.

use crate::sync::{Arc, AtomicU64, Ordering, RawClock};

/// A monotonic nanosecond clock.
pub trait Clock: Send + Sync {
    /// Nanoseconds since an arbitrary origin fixed at creation.
    fn now_ns(&self) -> u64;
}

/// The real clock: TSC-based, calibrated once (the source lives in the sync facade).
pub struct RealClock {
    raw: RawClock,
}

impl RealClock {
    pub fn new() -> Self {
        RealClock { raw: RawClock::new() }
    }
}

impl Default for RealClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for RealClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.raw.now_ns()
    }
}

/// A clock that only moves when told to — or, ticking, also by 1 ns at every read (for the
/// models: every interval a statistic measures is then at least 1 ns, so a lost completion
/// statistic shows in the totals).
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicU64,
    /// Reads so far, added to `now` when ticking. A plain `std` atomic: an oracle beside the
    /// algorithm, not a scheduling point for a model checker.
    reads: std::sync::atomic::AtomicU64,
    ticking: bool,
}

impl ManualClock {
    pub fn new(start_ns: u64) -> Self {
        ManualClock {
            now: AtomicU64::new(start_ns),
            reads: std::sync::atomic::AtomicU64::new(0),
            ticking: false,
        }
    }

    /// A clock that also moves forward by 1 ns at every read.
    pub fn ticking(start_ns: u64) -> Self {
        ManualClock { ticking: true, ..Self::new(start_ns) }
    }

    /// Moves the clock forward by `ns`.
    pub fn advance(&self, ns: u64) {
        self.now.fetch_add(ns, Ordering::Relaxed);
    }

    /// Sets the clock; it must not go backwards.
    pub fn set(&self, ns: u64) {
        let old = self.now.swap(ns, Ordering::Relaxed);
        assert!(ns >= old, "manual clock moved backwards: {old} -> {ns}");
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        let ticks = if self.ticking {
            self.reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
        } else {
            0
        };
        self.now.load(Ordering::Relaxed) + ticks
    }
}

/// The clock a scheduler instance uses.
#[derive(Clone)]
pub enum SchedClock {
    Real(Arc<RealClock>),
    Manual(Arc<ManualClock>),
}

impl SchedClock {
    /// A fresh real clock.
    pub fn real() -> Self {
        SchedClock::Real(Arc::new(RealClock::new()))
    }

    /// A manual clock starting at `start_ns`, and a handle to move it.
    pub fn manual(start_ns: u64) -> (Self, Arc<ManualClock>) {
        let clock = Arc::new(ManualClock::new(start_ns));
        (SchedClock::Manual(clock.clone()), clock)
    }

    /// A ticking manual clock ([`ManualClock::ticking`]) and a handle to move it.
    pub fn manual_ticking(start_ns: u64) -> (Self, Arc<ManualClock>) {
        let clock = Arc::new(ManualClock::ticking(start_ns));
        (SchedClock::Manual(clock.clone()), clock)
    }

    #[inline]
    pub fn now_ns(&self) -> u64 {
        match self {
            SchedClock::Real(c) => c.now_ns(),
            SchedClock::Manual(c) => c.now_ns(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_clock_is_monotonic_and_moves() {
        let c = RealClock::new();
        let a = c.now_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = c.now_ns();
        assert!(b > a + 1_000_000, "{a} -> {b}");
    }

    #[test]
    fn manual_clock_moves_only_when_told() {
        let (c, h) = SchedClock::manual(10);
        assert_eq!(c.now_ns(), 10);
        h.advance(5);
        assert_eq!(c.now_ns(), 15);
        h.set(100);
        assert_eq!(c.now_ns(), 100);
    }
}

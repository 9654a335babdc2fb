//! The table, like `/proc/lock_stat`: each thread folds its records into an accumulator of the
//! current generation, and accumulators merge into one global table when a thread flushes or
//! exits; [`reset`] starts a new generation, [`snapshot`] copies the table.

use super::*;
use std::cell::RefCell;

// The calling thread's accumulator; its destructor merges it into the table when the thread
// exits. Under loom, loom's thread-local, per model thread (see `FAST` in `sampler.rs`).
#[cfg(not(loom))]
thread_local! {
    pub(super) static ACC: AccSlot = const { AccSlot(RefCell::new(None)) };
}

#[cfg(loom)]
loom::thread_local! {
    pub(super) static ACC: AccSlot = AccSlot(RefCell::new(None));
}

/// Folds one record into the thread's histograms.
pub(super) fn fold(_f: &Fast, r: Pending) {
    let Pending { class, flags, path, outer, hold, wait } = r;
    let path = path as usize & (NR_PATHS - 1);
    with_acc(|acc| {
        let c = acc.class(class);
        let p = &mut c.paths[path];
        if flags & F_TIMED != 0 {
            c.hold.record(hold);
            p.hold += hold;
            p.holds_timed += 1;
            // In sampled mode a timed hold is a sampled one and `hold` is the sample itself.
            if flags & (F_EXACT | F_SAMPLED) == F_EXACT | F_SAMPLED {
                c.hold_sample.record(hold);
            }
            for_each_bit(outer, |i| c.hold_inside[i] += hold as u128);
        }
        if flags & F_WAIT_TIMED != 0 {
            c.wait.record(wait);
            p.wait += wait;
            p.waits_timed += 1;
            // In exact mode every wait is timed; the sampler's picks are also recorded apart.
            if flags & (F_EXACT | F_WAIT_SAMPLED) == F_EXACT | F_WAIT_SAMPLED {
                c.wait_sample.record(wait);
            }
            for_each_bit(outer, |i| c.wait_inside[i] += wait as u128);
        }
    });
}

pub(super) fn for_each_bit(mut bits: u16, mut f: impl FnMut(usize)) {
    while bits != 0 {
        let i = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        f(i);
    }
}

pub(super) struct Acc {
    pub(super) generation: u64,
    pub(super) classes: [Option<Box<ClassStats>>; MAX_CLASSES],
}

impl Acc {
    pub(super) fn new(generation: u64) -> Self {
        Acc { generation, classes: Default::default() }
    }

    pub(super) fn class(&mut self, class: LockClass) -> &mut ClassStats {
        self.classes[class.index()].get_or_insert_with(Default::default)
    }
}

pub(super) struct AccSlot(pub(super) RefCell<Option<Box<Acc>>>);

impl Drop for AccSlot {
    fn drop(&mut self) {
        // The thread exits: its counts (FAST has no destructor, so it is still there) and its
        // histograms go to the global table.
        let mut acc = self.0.get_mut().take();
        let _ = FAST.try_with(|f| fold_counts(f, &mut acc));
        if let Some(acc) = acc {
            merge_global(&acc);
        }
    }
}

/// Runs `f` on the calling thread's accumulator of the current generation (nothing if the thread's
/// thread-locals are being destroyed).
pub(super) fn with_acc(f: impl FnOnce(&mut Acc)) {
    let _ = ACC.try_with(|slot| {
        let generation = GENERATION.load(Ordering::Relaxed);
        let mut slot = slot.0.borrow_mut();
        let acc = slot.get_or_insert_with(|| Box::new(Acc::new(generation)));
        if acc.generation != generation {
            **acc = Acc::new(generation);
        }
        f(acc);
    });
}

/// Moves the thread's exact counters into `acc` (creating it) and zeroes them.
pub(super) fn fold_counts(f: &Fast, acc: &mut Option<Box<Acc>>) {
    let generation = GENERATION.load(Ordering::Relaxed);
    for c in 0..MAX_CLASSES {
        let owner_changes = f.owner_changes[c].replace(0);
        let mut any = owner_changes != 0;
        let mut per_path = [(0u64, 0u64); NR_PATHS];
        for (p, counts) in per_path.iter_mut().enumerate() {
            let slot = c * NR_PATHS + p;
            *counts = (take_acquisitions(f, slot), f.contentions[slot].replace(0));
            any |= counts.0 != 0 || counts.1 != 0;
        }
        if !any {
            continue;
        }
        let a = acc.get_or_insert_with(|| Box::new(Acc::new(generation)));
        if a.generation != generation {
            **a = Acc::new(generation);
        }
        let s = a.class(LockClass::from_index(c));
        s.owner_changes += owner_changes;
        for (p, (n, k)) in per_path.into_iter().enumerate() {
            s.acquisitions += n;
            s.contentions += k;
            s.paths[p].acquisitions += n;
            s.paths[p].contentions += k;
        }
    }
}

/// Bumped by [`reset`]: per-thread histograms of an older generation are dropped, never merged.
pub(super) static GENERATION: AtomicU64 = AtomicU64::new(1);

pub(super) struct Global {
    pub(super) generation: u64,
    pub(super) classes: [Option<Box<ClassStats>>; MAX_CLASSES],
}

pub(super) static GLOBAL: Mutex<Global> =
    Mutex::new(Global { generation: 1, classes: [const { None }; MAX_CLASSES] });

pub(super) fn merge_global(acc: &Acc) {
    let mut g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
    if g.generation != acc.generation {
        return;
    }
    for (mine, theirs) in g.classes.iter_mut().zip(&acc.classes) {
        if let Some(t) = theirs {
            mine.get_or_insert_with(Default::default).merge(t);
        }
    }
}

/// Merges the calling thread's counts into the global table (threads also do it when they exit).
pub fn flush() {
    let f = fast();
    if f.holds_none() && f.work.get() {
        settle(f);
    }
    let _ = ACC.try_with(|slot| {
        let mut acc = slot.0.borrow_mut().take();
        FAST.with(|f| fold_counts(f, &mut acc));
        if let Some(acc) = acc {
            merge_global(&acc);
        }
    });
}

/// Clears the global table and the calling thread's counts, and starts a new generation.
pub fn reset() {
    let mut g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
    let generation = GENERATION.fetch_add(1, Ordering::Relaxed) + 1;
    g.generation = generation;
    g.classes = Default::default();
    drop(g);
    let _ = ACC.try_with(|slot| slot.0.borrow_mut().take());
    FAST.with(|f| {
        let mut none = None;
        fold_counts(f, &mut none);
        f.npending.set(0);
    });
}

/// Flushes the calling thread, then copies the global table.
pub fn snapshot() -> LockStats {
    flush();
    let g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
    let classes = g
        .classes
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.as_ref().map(|c| (LockClass::from_index(i), (**c).clone())))
        .collect();
    LockStats { classes }
}

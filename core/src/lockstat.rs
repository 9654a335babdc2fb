//! Lock statistics in the spirit of Linux lockstat and mutrace: for every *class* of lock on the
//! paths (the scheduler lock, the queue lock, the statistics counters' sum locks), acquisitions,
//! contentions, owner changes, wait and hold time (histograms: total, avg, p50, p99, max), and
//! which path waited or held (insert, dispatch, completion, stats, group removal).
//!
//! No standard tool sees these locks (`../shared/reference/measuring.md` §1), so the sync facade
//! measures its own. This module holds the bookkeeping; the measuring itself lives in the lock
//! (`sync.rs`, real build only: under `cfg(loom)` a named lock is a plain loom `Mutex` and nothing
//! here is ever called).
//!
//! ## What is counted, and when
//!
//! | counter | meaning |
//! | --- | --- |
//! | acquisitions | every acquisition while instrumentation is on |
//! | contentions | acquisitions whose first `try_lock` failed |
//! | owner changes | acquisitions by a different thread than the previous holder (mutrace's "changed", lockstat's bounces: a proxy for the lock's line moving between CPUs) |
//! | wait | from the failed `try_lock` to the acquisition, contended acquisitions only (as lockstat's waittime) |
//! | hold | from the acquisition to the release |
//!
//! Timestamps come from the TSC (`quanta`'s raw counter, scaled to ns off the critical path), not
//! `Instant::now()`.
//!
//! ## Cost, and the switch
//!
//! Instrumentation is off until [`set_enabled`] turns it on; a lock then pays one relaxed load and
//! a predictable branch. When on, an acquisition costs a `try_lock` instead of a `lock`, two TSC
//! reads (about 16 ns each on this machine kind), a store of the owner id into the lock's own line,
//! and a 16-byte record pushed to a per-thread buffer. The buffer is folded into per-thread
//! histograms only when the thread holds no instrumented lock any more, so a lock nested inside
//! another (a counter sum inside the scheduler lock) adds its timestamps, but not its bookkeeping,
//! to the outer lock's hold time. Per-thread accumulators are merged into one global table when a
//! thread exits or calls [`flush`]: nothing on the hot path shares a line or takes a lock.
//! `schedlab compare` measures the remaining overhead (instrumented against plain) and reports both.
//!
//! ## Scope
//!
//! Like `/proc/lock_stat`, the table is global to the process: [`reset`] clears it (and makes every
//! thread drop what it had not flushed yet), [`snapshot`] reads it. Run one measured workload at a
//! time.

use crate::sync::lock_ticks_to_ns;
use serde::Serialize;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use crate::sync::OracleMutex as Mutex;

/// The most lock classes a process can name (the three built-in ones included).
pub const MAX_CLASSES: usize = 8;

/// What a named lock is counted as. Every lock of one class adds to the same counters: the
/// thirty-one sum locks of every group are one class, `stats-sum`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LockClass(u8);

const BUILTIN: [&str; 5] = ["", "sched", "queue", "stats-sum", "stats-section"];

static EXTRA_CLASSES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

impl LockClass {
    /// Not instrumented (a lock made with `Lock::new`).
    pub const NONE: LockClass = LockClass(0);
    /// The scheduler lock (`bfqd->lock`).
    pub const SCHED: LockClass = LockClass(1);
    /// The request-queue lock (`q->queue_lock`).
    pub const QUEUE: LockClass = LockClass(2);
    /// The per-counter locks that `percpu_counter_sum` takes, all groups and counters together.
    pub const STATS_SUM: LockClass = LockClass(3);
    /// Not a lock: the statistics updates applied under the scheduler lock ([`stats_section`]),
    /// timed like holds so that their share of the scheduler lock's hold time is measured.
    pub const STATS_SECTION: LockClass = LockClass(4);

    /// The class called `name`, registered on first use (for locks a variant adds).
    ///
    /// # Panics
    /// If more than [`MAX_CLASSES`] classes would exist.
    pub fn register(name: &'static str) -> LockClass {
        if let Some(i) = BUILTIN.iter().skip(1).position(|b| *b == name) {
            return LockClass(i as u8 + 1);
        }
        let mut extra = EXTRA_CLASSES.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = extra.iter().position(|n| *n == name) {
            return LockClass((BUILTIN.len() + i) as u8);
        }
        let id = BUILTIN.len() + extra.len();
        assert!(id < MAX_CLASSES, "at most {} lock classes; cannot add `{name}`", MAX_CLASSES - 1);
        extra.push(name);
        LockClass(id as u8)
    }

    /// The class's name in reports.
    pub fn name(self) -> &'static str {
        let i = self.0 as usize;
        if i < BUILTIN.len() {
            return BUILTIN[i];
        }
        let extra = EXTRA_CLASSES.lock().unwrap_or_else(|e| e.into_inner());
        extra.get(i - BUILTIN.len()).copied().unwrap_or("?")
    }

    /// Whether locks of this class are counted at all.
    #[inline]
    pub fn is_named(self) -> bool {
        self.0 != 0
    }

    #[inline]
    fn index(self) -> usize {
        self.0 as usize
    }
}

/// The path a thread is running when it waits for or holds a lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[repr(u8)]
pub enum LockPath {
    /// Anything not below (group creation, listing, process exit, reports).
    Other = 0,
    Insert = 1,
    Dispatch = 2,
    Completion = 3,
    /// Deferred statistics updates (`run_deferred`), whichever path runs them.
    Stats = 4,
    /// Group removal and process moves (the reparenting paths of cgroup churn).
    GroupRemoval = 5,
}

/// Number of [`LockPath`]s.
pub const NR_PATHS: usize = 6;

impl LockPath {
    /// Every path, in report order.
    pub const ALL: [LockPath; NR_PATHS] =
        [LockPath::Insert, LockPath::Dispatch, LockPath::Completion, LockPath::Stats, LockPath::GroupRemoval, LockPath::Other];

    pub fn name(self) -> &'static str {
        match self {
            LockPath::Other => "other",
            LockPath::Insert => "insert",
            LockPath::Dispatch => "dispatch",
            LockPath::Completion => "completion",
            LockPath::Stats => "stats",
            LockPath::GroupRemoval => "group-removal",
        }
    }

    fn from_u8(v: u8) -> LockPath {
        match v {
            1 => LockPath::Insert,
            2 => LockPath::Dispatch,
            3 => LockPath::Completion,
            4 => LockPath::Stats,
            5 => LockPath::GroupRemoval,
            _ => LockPath::Other,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The switch and the generation.

static ENABLED: AtomicBool = AtomicBool::new(false);
/// Hold-time sampling period per class: 1 times every hold; N times one hold in N on average
/// (jittered, so that a fixed sequence of acquisitions cannot alias with it).
static HOLD_SAMPLING: [AtomicU32; MAX_CLASSES] = {
    let mut periods = [const { AtomicU32::new(1) }; MAX_CLASSES];
    periods[LockClass::STATS_SUM.0 as usize] = AtomicU32::new(DEFAULT_SUM_SAMPLING);
    periods[LockClass::STATS_SECTION.0 as usize] = AtomicU32::new(DEFAULT_SUM_SAMPLING);
    periods
};

/// Default hold sampling of the `stats-sum` class and of stats sections: taken about ten times per
/// request, mostly inside the scheduler lock, where two TSC reads each would add about 30 ns to
/// the scheduler lock's hold time.
pub const DEFAULT_SUM_SAMPLING: u32 = 16;

/// Times one hold in `period` (on average) for locks of `class`; 1 times every hold. Counts
/// (acquisitions, contentions, owner changes) and contended waits stay exact; hold totals are
/// then estimated as the sampled mean × acquisitions.
pub fn set_hold_sampling(class: LockClass, period: u32) {
    HOLD_SAMPLING[class.index() % MAX_CLASSES].store(period.clamp(1, MAX_SAMPLING), Ordering::Relaxed);
}

/// The largest hold sampling period.
pub const MAX_SAMPLING: u32 = 10_000;

/// The hold sampling period of `class`.
pub fn hold_sampling(class: LockClass) -> u32 {
    HOLD_SAMPLING[class.index() % MAX_CLASSES].load(Ordering::Relaxed)
}
/// Bumped by [`reset`]: per-thread data of an older generation is dropped, never merged.
static GENERATION: AtomicU64 = AtomicU64::new(1);
static NEXT_THREAD_ID: AtomicU32 = AtomicU32::new(1);

/// Turns instrumentation on or off for every named lock. An acquisition made while it was on is
/// still accounted at its release, whatever the switch says then.
pub fn set_enabled(on: bool) {
    if on {
        crate::sync::lock_ticks_warm_up();
    }
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether named locks are being measured.
#[inline(always)]
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

// ---------------------------------------------------------------------------------------------
// The per-thread fast state: const-initialised, no destructor, so an access is a plain TLS load.

const PENDING: usize = 64;
const REC_ACQUIRE: u8 = 0;
const REC_HOLD: u8 = 1;
/// A timed stats section; `count` is the number of sections it stands for.
const REC_SECTION: u8 = 2;
const FLAG_CONTENDED: u8 = 1;
const FLAG_OWNER_CHANGED: u8 = 2;

/// One event, as pushed on the hot path and folded in later (16 bytes).
#[derive(Clone, Copy)]
struct Record {
    kind: u8,
    class: u8,
    path: u8,
    flags: u8,
    /// Classes the thread held besides this one (bit per class): for "held inside" accounting.
    outer: u8,
    /// Sections a section record stands for.
    count: u16,
    /// Wait (acquire records) or hold (hold and section records), in raw ticks.
    ticks: u64,
}

const EMPTY_RECORD: Record = Record { kind: 0, class: 0, path: 0, flags: 0, outer: 0, count: 0, ticks: 0 };

struct Fast {
    path: Cell<u8>,
    /// Instrumented locks held now.
    depth: Cell<u32>,
    /// Classes held now, one bit each.
    held: Cell<u8>,
    /// This thread's owner id (0: not assigned yet).
    id: Cell<u32>,
    /// Per class: acquisitions left before the next timed hold (0: draw a new gap).
    countdown: [Cell<u32>; MAX_CLASSES],
    /// xorshift state for the sampling gaps.
    rng: Cell<u32>,
    len: Cell<usize>,
    pending: [Cell<Record>; PENDING],
}

thread_local! {
    static FAST: Fast = const {
        Fast {
            path: Cell::new(0),
            depth: Cell::new(0),
            held: Cell::new(0),
            id: Cell::new(0),
            countdown: [const { Cell::new(0) }; MAX_CLASSES],
            rng: Cell::new(0),
            len: Cell::new(0),
            pending: [const { Cell::new(EMPTY_RECORD) }; PENDING],
        }
    };
    static ACC: AccSlot = const { AccSlot(RefCell::new(None)) };
}

/// Sets the calling thread's current path until the guard drops (then the previous one is back).
#[must_use = "the path is set only while the guard lives"]
pub struct PathGuard {
    previous: u8,
}

/// Marks what the calling thread is doing, for the per-path columns of the lock report.
#[inline]
pub fn enter(path: LockPath) -> PathGuard {
    let previous = FAST.with(|f| f.path.replace(path as u8));
    PathGuard { previous }
}

impl Drop for PathGuard {
    #[inline]
    fn drop(&mut self) {
        let previous = self.previous;
        FAST.with(|f| f.path.set(previous));
    }
}

/// The calling thread's current path.
pub fn current_path() -> LockPath {
    FAST.with(|f| LockPath::from_u8(f.path.get()))
}

#[inline]
fn thread_id(f: &Fast) -> u32 {
    let id = f.id.get();
    if id != 0 {
        return id;
    }
    let id = NEXT_THREAD_ID.fetch_add(1, Ordering::Relaxed).max(1);
    f.id.set(id);
    f.rng.set(id.wrapping_mul(0x9E37_79B9) | 1);
    id
}

/// Whether this acquisition's hold is timed (one in the class's period, on average): `Some(gap)`
/// when it is, `gap` being the number of acquisitions until the next timed one.
#[inline]
fn sample(f: &Fast, class: usize) -> Option<u32> {
    let left = f.countdown[class].get();
    if left > 1 {
        f.countdown[class].set(left - 1);
        return None;
    }
    let period = HOLD_SAMPLING[class].load(Ordering::Relaxed);
    if period <= 1 {
        return Some(1);
    }
    // Next gap uniform in 1..=2*period-1 (mean: period).
    if f.rng.get() == 0 {
        thread_id(f);
    }
    let mut x = f.rng.get() | 1;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    f.rng.set(x);
    let gap = 1 + x % (2 * period - 1);
    f.countdown[class].set(gap);
    // The first call of a thread (left == 0) only draws the first gap.
    (left == 1).then_some(gap)
}

#[inline]
fn push(f: &Fast, record: Record) {
    let len = f.len.get();
    f.pending[len].set(record);
    f.len.set(len + 1);
    if len + 1 == PENDING {
        // Full (deeply nested or a long run of nested sums): fold now, even inside a lock.
        fold_pending(f);
    }
}

// `acquired` and `released` are called by the real build's locks only (`sync.rs`); under loom
// named locks are plain loom mutexes and never call them.

/// Called by a measured lock right after it was acquired (the caller holds it). `owner` is the
/// lock's last-owner word, which only the holder touches. Returns whether to time this hold.
#[inline]
#[allow(dead_code)]
pub(crate) fn acquired(class: LockClass, contended: bool, wait_ticks: u64, owner: &AtomicU32) -> bool {
    FAST.with(|f| {
        let me = thread_id(f);
        // Relaxed: only the holder reads or writes the word, and the lock's own Acquire/Release
        // orders one holder's accesses before the next holder's.
        let previous = owner.load(Ordering::Relaxed);
        owner.store(me, Ordering::Relaxed);
        let owner_changed = previous != 0 && previous != me;
        let bit = 1u8 << class.index();
        let held = f.held.get();
        f.held.set(held | bit);
        f.depth.set(f.depth.get() + 1);
        let flags = (contended as u8 * FLAG_CONTENDED) | (owner_changed as u8 * FLAG_OWNER_CHANGED);
        let record = Record { kind: REC_ACQUIRE, class: class.0, path: f.path.get(), flags, outer: held & !bit, count: 1, ticks: wait_ticks };
        push(f, record);
        sample(f, class.index() % MAX_CLASSES).is_some()
    })
}

/// Called by a measured lock right after it was released; `hold_ticks` is `None` for an untimed
/// (not sampled) hold.
#[inline]
#[allow(dead_code)]
pub(crate) fn released(class: LockClass, hold_ticks: Option<u64>) {
    FAST.with(|f| {
        let bit = 1u8 << class.index();
        let held = f.held.get() & !bit;
        f.held.set(held);
        let depth = f.depth.get().saturating_sub(1);
        f.depth.set(depth);
        if let Some(ticks) = hold_ticks {
            push(f, Record { kind: REC_HOLD, class: class.0, path: f.path.get(), flags: 0, outer: held, count: 1, ticks });
        }
        if depth == 0 && f.len.get() != 0 {
            fold_pending(f);
        }
    })
}

/// A timed stats section (see [`stats_section`]); does nothing unless it was sampled.
#[must_use = "the section is timed until the guard drops"]
pub struct SectionGuard {
    /// TSC at the start, 0 when not timed.
    start: u64,
    count: u16,
}

/// Marks statistics work done under the scheduler lock, so that its share of the lock's hold
/// time is measured. While lockstat is off this is one relaxed load; while on, one section in
/// [`hold_sampling`]`(STATS_SECTION)` is timed (two TSC reads) and stands for the untimed ones.
#[inline(always)]
pub fn stats_section() -> SectionGuard {
    if !enabled() {
        return SectionGuard { start: 0, count: 0 };
    }
    start_section()
}

#[inline(never)]
fn start_section() -> SectionGuard {
    let class = LockClass::STATS_SECTION.index();
    FAST.with(|f| match sample(f, class) {
        None => SectionGuard { start: 0, count: 0 },
        Some(gap) => {
            // Counted in `depth` (its records fold after the outer lock is released) but not in
            // `held`: only timed sections would show as "outer" to the locks inside them.
            f.depth.set(f.depth.get() + 1);
            SectionGuard { start: crate::sync::lock_ticks().max(1), count: gap.min(u16::MAX as u32) as u16 }
        }
    })
}

impl Drop for SectionGuard {
    #[inline(always)]
    fn drop(&mut self) {
        if self.start != 0 {
            self.finish();
        }
    }
}

impl SectionGuard {
    #[inline(never)]
    fn finish(&mut self) {
        let ticks = crate::sync::lock_ticks().saturating_sub(self.start);
        let class = LockClass::STATS_SECTION;
        FAST.with(|f| {
            let held = f.held.get();
            let depth = f.depth.get().saturating_sub(1);
            f.depth.set(depth);
            let record = Record { kind: REC_SECTION, class: class.0, path: f.path.get(), flags: 0, outer: held, count: self.count, ticks };
            push(f, record);
            if depth == 0 {
                fold_pending(f);
            }
        })
    }
}

#[inline(never)]
fn fold_pending(f: &Fast) {
    let len = f.len.replace(0);
    // A thread whose accumulator is gone (its TLS is being destroyed) drops its last records.
    let _ = ACC.try_with(|slot| {
        let mut slot = slot.0.borrow_mut();
        let generation = GENERATION.load(Ordering::Relaxed);
        let acc = slot.get_or_insert_with(|| Box::new(Acc::new(generation)));
        if acc.generation != generation {
            **acc = Acc::new(generation);
        }
        for cell in &f.pending[..len] {
            acc.fold(cell.get());
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Histograms.

const SUB_BITS: u32 = 4;
const SUB: usize = 1 << SUB_BITS;
/// Log-linear buckets: exact below 32, then 16 buckets per power of two (≤ 6.25 % wide).
const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * SUB;

#[inline]
fn bucket_of(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    let sub = ((v >> (e - SUB_BITS)) as usize) & (SUB - 1);
    (e - SUB_BITS + 1) as usize * SUB + sub
}

fn bucket_low(i: usize) -> u64 {
    if i < 2 * SUB {
        return i as u64;
    }
    let e = (i / SUB) as u32 + SUB_BITS - 1;
    ((SUB + i % SUB) as u64) << (e - SUB_BITS)
}

/// A log-linear histogram of nanosecond values (count, sum, min, max exact; percentiles within
/// one bucket, at most 6.25 % of the value).
#[derive(Clone)]
pub struct Histogram {
    buckets: Box<[u64]>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Histogram {{ count: {}, sum: {}, max: {} }}", self.count, self.sum, self.max)
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    pub fn new() -> Self {
        Histogram { buckets: vec![0; BUCKETS].into_boxed_slice(), count: 0, sum: 0, min: u64::MAX, max: 0 }
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        self.buckets[bucket_of(v)] += 1;
        self.count += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.buckets.iter_mut().zip(other.buckets.iter()) {
            *a += b;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn sum(&self) -> u128 {
        self.sum
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The value below which a fraction `q` (0..=1) of the samples lie: the middle of the bucket
    /// holding that rank, clamped to the exact min and max. 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        if rank >= self.count {
            return self.max;
        }
        let mut seen = 0u64;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let low = bucket_low(i);
                let high = if i + 1 < BUCKETS { bucket_low(i + 1).saturating_sub(1) } else { u64::MAX };
                let mid = low + (high - low) / 2;
                return mid.clamp(self.min, self.max);
            }
        }
        self.max
    }
}

// ---------------------------------------------------------------------------------------------
// Accumulators: per thread, then global.

/// Everything counted for one class. Times are in raw clock ticks ([`LockStats::summarize`]
/// converts them to ns).
#[derive(Clone, Debug, Default)]
pub struct ClassStats {
    pub acquisitions: u64,
    pub contentions: u64,
    pub owner_changes: u64,
    /// Contended acquisitions only.
    pub wait: Histogram,
    /// Timed holds only (all of them, or a sample: see [`set_hold_sampling`]).
    pub hold: Histogram,
    pub paths: [PathStats; NR_PATHS],
    /// Timed hold of this class while the thread also held the class of that index.
    pub hold_inside: [u128; MAX_CLASSES],
    /// Wait of this class while the thread held the class of that index.
    pub wait_inside: [u128; MAX_CLASSES],
}

/// The part of a class's counts that one path did (ticks).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct PathStats {
    pub acquisitions: u64,
    pub contentions: u64,
    pub wait: u64,
    /// Sum of the timed holds, and how many there were.
    pub hold: u64,
    pub holds_timed: u64,
}

impl ClassStats {
    fn merge(&mut self, o: &ClassStats) {
        self.acquisitions += o.acquisitions;
        self.contentions += o.contentions;
        self.owner_changes += o.owner_changes;
        self.wait.merge(&o.wait);
        self.hold.merge(&o.hold);
        for (a, b) in self.paths.iter_mut().zip(&o.paths) {
            a.acquisitions += b.acquisitions;
            a.contentions += b.contentions;
            a.wait += b.wait;
            a.hold += b.hold;
            a.holds_timed += b.holds_timed;
        }
        for i in 0..MAX_CLASSES {
            self.hold_inside[i] += o.hold_inside[i];
            self.wait_inside[i] += o.wait_inside[i];
        }
    }
}

struct Acc {
    generation: u64,
    classes: [Option<Box<ClassStats>>; MAX_CLASSES],
}

impl Acc {
    fn new(generation: u64) -> Self {
        Acc { generation, classes: Default::default() }
    }

    fn fold(&mut self, r: Record) {
        let ticks = r.ticks;
        let c = self.classes[r.class as usize % MAX_CLASSES].get_or_insert_with(Default::default);
        let p = &mut c.paths[r.path as usize % NR_PATHS];
        if r.kind == REC_SECTION {
            // Stands for `count` sections, one of them timed.
            c.acquisitions += r.count as u64;
            p.acquisitions += r.count as u64;
        }
        let inside = if r.kind == REC_ACQUIRE { &mut c.wait_inside } else { &mut c.hold_inside };
        let mut outer = r.outer;
        while outer != 0 {
            let i = outer.trailing_zeros() as usize;
            outer &= outer - 1;
            inside[i % MAX_CLASSES] += ticks as u128;
        }
        if r.kind != REC_ACQUIRE {
            c.hold.record(ticks);
            p.hold += ticks;
            p.holds_timed += 1;
            return;
        }
        c.acquisitions += 1;
        p.acquisitions += 1;
        if r.flags & FLAG_OWNER_CHANGED != 0 {
            c.owner_changes += 1;
        }
        if r.flags & FLAG_CONTENDED != 0 {
            c.contentions += 1;
            p.contentions += 1;
            c.wait.record(ticks);
            p.wait += ticks;
        }
    }
}

struct AccSlot(RefCell<Option<Box<Acc>>>);

impl Drop for AccSlot {
    fn drop(&mut self) {
        if let Some(acc) = self.0.get_mut().take() {
            merge_global(&acc);
        }
    }
}

struct Global {
    generation: u64,
    classes: [Option<Box<ClassStats>>; MAX_CLASSES],
}

static GLOBAL: Mutex<Global> = Mutex::new(Global { generation: 1, classes: [const { None }; MAX_CLASSES] });

fn merge_global(acc: &Acc) {
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
/// Does nothing while the thread holds an instrumented lock.
pub fn flush() {
    FAST.with(|f| {
        if f.depth.get() == 0 && f.len.get() != 0 {
            fold_pending(f);
        }
    });
    let _ = ACC.try_with(|slot| {
        if let Some(acc) = slot.0.borrow_mut().take() {
            merge_global(&acc);
        }
    });
}

/// Clears the global table and starts a new generation: counts that threads have not flushed yet
/// are dropped when they are, not merged.
pub fn reset() {
    let mut g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
    let generation = GENERATION.fetch_add(1, Ordering::Relaxed) + 1;
    g.generation = generation;
    g.classes = Default::default();
    drop(g);
    let _ = ACC.try_with(|slot| slot.0.borrow_mut().take());
    FAST.with(|f| {
        if f.depth.get() == 0 {
            f.len.set(0);
        }
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
        .filter_map(|(i, c)| c.as_ref().map(|c| (LockClass(i as u8), (**c).clone())))
        .collect();
    LockStats { classes }
}

// ---------------------------------------------------------------------------------------------
// Reports.

/// A copy of the table: every class that was acquired at least once while measuring.
#[derive(Clone, Debug, Default)]
pub struct LockStats {
    pub classes: Vec<(LockClass, ClassStats)>,
}

/// Total, average, percentiles and maximum of a time, in ns.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct TimeSummary {
    pub total: u64,
    pub avg: f64,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

fn ns(ticks: u128) -> u64 {
    lock_ticks_to_ns(ticks.min(u64::MAX as u128) as u64)
}

impl TimeSummary {
    /// From a histogram of ticks; `scale` multiplies the total (sampled holds: acquisitions ÷
    /// timed holds).
    fn of(h: &Histogram, scale: f64) -> Self {
        let total = (ns(h.sum()) as f64 * scale).round() as u64;
        let per_tick = if h.sum() == 0 { 0.0 } else { ns(h.sum()) as f64 / h.sum() as f64 };
        TimeSummary {
            total,
            avg: h.mean() * per_tick,
            p50: ns(h.quantile(0.50) as u128),
            p99: ns(h.quantile(0.99) as u128),
            max: ns(h.max() as u128),
        }
    }
}

/// One path's share of a lock.
#[derive(Clone, Debug, Serialize)]
pub struct PathSummary {
    pub path: LockPath,
    pub acquisitions: u64,
    pub contentions: u64,
    pub wait_ns: u64,
    /// Estimated like the class's hold total when holds are sampled.
    pub hold_ns: u64,
}

/// One lock class, as reported (the JSON `locks[]` entry of `schedlab compare`).
#[derive(Clone, Debug, Serialize)]
pub struct LockSummary {
    pub name: &'static str,
    pub acquisitions: u64,
    pub contentions: u64,
    /// contentions ÷ acquisitions × 100.
    pub contention_pct: f64,
    pub owner_changes: u64,
    /// Over contended acquisitions only (as lockstat's waittime).
    pub wait_ns: TimeSummary,
    /// Over timed holds; `total` is scaled to every acquisition when holds are sampled.
    pub hold_ns: TimeSummary,
    /// One hold in this many was timed (1: all).
    pub hold_sampled_1_in: f64,
    /// Total hold ÷ wall time: the fraction of the run the lock was held (≈ the serial fraction
    /// for the dominant lock; above 1 for a class of many locks held at once).
    pub hold_occupancy: f64,
    /// Hold and wait spent while the same thread held another class, e.g. the counter sums done
    /// inside the scheduler lock.
    pub inside: Vec<InsideSummary>,
    pub paths: Vec<PathSummary>,
}

/// Time a class spent nested inside another (hold estimated when sampled).
#[derive(Clone, Debug, Serialize)]
pub struct InsideSummary {
    pub outer: &'static str,
    pub hold_ns: u64,
    pub wait_ns: u64,
}

impl LockStats {
    /// Adds another table (of another run) into this one.
    pub fn merge(&mut self, other: &LockStats) {
        for (class, stats) in &other.classes {
            match self.classes.iter_mut().find(|(c, _)| c == class) {
                Some((_, mine)) => mine.merge(stats),
                None => self.classes.push((*class, stats.clone())),
            }
        }
        self.classes.sort_by_key(|(c, _)| c.0);
    }

    /// The counts of one class, if it was seen.
    pub fn class(&self, class: LockClass) -> Option<&ClassStats> {
        self.classes.iter().find(|(c, _)| *c == class).map(|(_, s)| s)
    }

    /// The report rows; `wall_ns` is the measured time (for occupancy).
    pub fn summarize(&self, wall_ns: u64) -> Vec<LockSummary> {
        self.classes.iter().map(|(class, s)| summarize_class(*class, s, wall_ns)).collect()
    }
}

fn summarize_class(class: LockClass, s: &ClassStats, wall_ns: u64) -> LockSummary {
    let timed = s.hold.count();
    let scale = if timed == 0 { 0.0 } else { s.acquisitions as f64 / timed as f64 };
    let hold = TimeSummary::of(&s.hold, scale);
    let inside = (0..MAX_CLASSES)
        .filter(|&i| s.hold_inside[i] != 0 || s.wait_inside[i] != 0)
        .map(|i| InsideSummary {
            outer: LockClass(i as u8).name(),
            hold_ns: (ns(s.hold_inside[i]) as f64 * scale).round() as u64,
            wait_ns: ns(s.wait_inside[i]),
        })
        .collect();
    let paths = LockPath::ALL
        .iter()
        .map(|&p| {
            let ps = s.paths[p as usize];
            let path_scale = if ps.holds_timed == 0 { 0.0 } else { ps.acquisitions as f64 / ps.holds_timed as f64 };
            PathSummary {
                path: p,
                acquisitions: ps.acquisitions,
                contentions: ps.contentions,
                wait_ns: ns(ps.wait as u128),
                hold_ns: (ns(ps.hold as u128) as f64 * path_scale).round() as u64,
            }
        })
        .filter(|p| p.acquisitions != 0)
        .collect();
    LockSummary {
        name: class.name(),
        acquisitions: s.acquisitions,
        contentions: s.contentions,
        contention_pct: if s.acquisitions == 0 { 0.0 } else { 100.0 * s.contentions as f64 / s.acquisitions as f64 },
        owner_changes: s.owner_changes,
        wait_ns: TimeSummary::of(&s.wait, 1.0),
        hold_ns: hold,
        hold_sampled_1_in: scale,
        hold_occupancy: if wall_ns == 0 { 0.0 } else { hold.total as f64 / wall_ns as f64 },
        inside,
        paths,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_tight() {
        let mut last = 0;
        for v in (0..100_000u64).chain([1 << 20, (1 << 40) + 12345, u64::MAX]) {
            let b = bucket_of(v);
            assert!(b >= last, "{v}: buckets must not go down");
            assert!(b < BUCKETS);
            assert!(bucket_low(b) <= v, "{v}: bucket {b} starts at {}", bucket_low(b));
            if b + 1 < BUCKETS {
                assert!(bucket_low(b + 1) > v, "{v}");
            }
            if b + 1 < BUCKETS {
                let width = bucket_low(b + 1) - bucket_low(b);
                assert!(width as f64 <= (v as f64 / SUB as f64).max(1.0), "{v}: bucket {b} is {width} wide");
            }
            last = b;
        }
    }

    #[test]
    fn quantiles_are_within_a_bucket() {
        let mut h = Histogram::new();
        for v in 1..=10_000u64 {
            h.record(v);
        }
        assert_eq!(h.count(), 10_000);
        assert_eq!(h.max(), 10_000);
        let p50 = h.quantile(0.5) as f64;
        let p99 = h.quantile(0.99) as f64;
        assert!((p50 - 5000.0).abs() / 5000.0 < 0.07, "{p50}");
        assert!((p99 - 9900.0).abs() / 9900.0 < 0.07, "{p99}");
        assert!((h.mean() - 5000.5).abs() < 1e-9);
        let mut g = Histogram::new();
        g.record(1_000_000);
        h.merge(&g);
        assert_eq!(h.max(), 1_000_000);
        assert_eq!(h.quantile(1.0), 1_000_000);
    }

    #[test]
    fn classes_register_once() {
        assert_eq!(LockClass::register("sched"), LockClass::SCHED);
        let a = LockClass::register("lockstat-test-class");
        assert_eq!(LockClass::register("lockstat-test-class"), a);
        assert_eq!(a.name(), "lockstat-test-class");
        assert_eq!(LockClass::STATS_SUM.name(), "stats-sum");
    }

    #[test]
    fn path_guards_nest() {
        assert_eq!(current_path(), LockPath::Other);
        {
            let _a = enter(LockPath::Insert);
            {
                let _b = enter(LockPath::Stats);
                assert_eq!(current_path(), LockPath::Stats);
            }
            assert_eq!(current_path(), LockPath::Insert);
        }
        assert_eq!(current_path(), LockPath::Other);
    }
}

//! What keeps a group allocated while a deferred statistics update reaches it: the protections a
//! variant can declare, the witnesses that prove one is held, and how each frees a retired group.
//!
//! A deferred update holds a queue and reads the queue's *current* group when it is applied
//! (notes/invariants.md I1). Whether that group is still allocated depends on an agreement between
//! the update and every path that reparents a queue or frees a group. Here the agreement is a
//! type: a variant names its [`Protection`], the scheduler holds up its end of it (which locks
//! removal and moves take, whether they are allowed at all, how a retired group is freed), and
//! [`crate::DeferredBatch::apply`] asks for a [`Witness`] of the same protection, which only the
//! [`crate::DeferredCx`] of that protection can hand out. The compiler then checks the existence
//! argument that the kernel wrote as a comment; `unsafe` is left for code that argues its own
//! (the negative controls in `verify/src/broken.rs` are written that way).
//!
//! | protection | removal and moves | a retired group is freed | witness for applying a batch | invariant |
//! | --- | --- | --- | --- | --- |
//! | [`SchedLockOnly`] | under the scheduler lock | at once | none: nothing may be deferred | — |
//! | [`QueueLock`] | under the queue lock, then the scheduler lock | at once, still under the queue lock | [`QueueLockHeld`] (`cx.lock_queue()`) | I1b |
//! | [`GracePeriod`] | under the scheduler lock | after an epoch grace period, parents after one of their own | [`EpochPin`] (`cx.pin()`) | I1d |
//! | [`NoRemoval`] | refused | (only at teardown) | [`GroupsStay`] (`cx.groups_stay()`) | I1c |

use crate::objects::RetiredGroup;
use crate::sync::epoch;
use crate::sync::LockGuard;
use std::marker::PhantomData;

mod sealed {
    use crate::objects::RetiredGroup;

    /// Implemented by the four protections only. Its method is out of reach of other crates (the
    /// module is private), so a variant cannot call another protection's `release` (freeing at
    /// once under a grace-period protection) without `unsafe`.
    pub trait Sealed {
        /// Frees `group` as this protection's agreement says.
        fn release(group: RetiredGroup);
    }

    /// Marks the witness types.
    pub trait SealedWitness {}
}

/// A protection (see the module documentation for the table).
pub trait Protection: sealed::Sealed + Send + Sync + 'static {
    /// The name used in reports.
    const NAME: &'static str;
    /// Whether the scheduler lets groups be removed and processes move while the variant runs.
    const ALLOWS_REMOVAL: bool;
    /// Whether removal and moves hold the queue lock (taken before the scheduler lock), and free
    /// the groups they retire before releasing it.
    const REMOVAL_HOLDS_QUEUE_LOCK: bool;
    /// Whether a retired group is freed after a grace period rather than at once.
    const AFTER_GRACE_PERIOD: bool;
    /// Whether it has a witness, so that a variant may defer updates under it (all but
    /// [`SchedLockOnly`], under which nothing may be deferred).
    const MAY_DEFER: bool;

    /// Makes whatever progress on deferred reclamation is possible now, without blocking (for a
    /// grace-period protection: one pin, flush and collection attempt). Models call it from a
    /// thread racing the deferred updates, so that a free can land inside their window.
    fn reclaim_step() {}

    /// Finishes the deferred reclamation that is due (when the workload is quiescent).
    fn quiesce() {}
}

/// Nothing deferred reads a group: every update is applied under the scheduler lock, or skipped.
#[derive(Debug)]
pub struct SchedLockOnly;

/// The 4.15 design: deferred updates take the request-queue lock, which removal and moves also
/// hold while they reparent queues and free groups (I1b).
#[derive(Debug)]
pub struct QueueLock;

/// Deferred updates run inside an epoch pin; a group whose last reference goes is freed only
/// after every pin that could have read it has ended (I1d).
#[derive(Debug)]
pub struct GracePeriod;

/// Groups are never removed and processes never move while the variant runs (the scheduler
/// refuses), so a queue's group is the one its own reference keeps allocated (I1c).
#[derive(Debug)]
pub struct NoRemoval;

impl sealed::Sealed for SchedLockOnly {
    fn release(group: RetiredGroup) {
        // SAFETY: under this protection nothing is deferred, and every update applied under the
        // scheduler lock reads a group through a queue that holds a reference on it; this group's
        // last reference is gone, so no queue points at it and no update can reach it.
        unsafe { group.free_now() }
    }
}

impl Protection for SchedLockOnly {
    const NAME: &'static str = "scheduler lock only";
    const ALLOWS_REMOVAL: bool = true;
    const REMOVAL_HOLDS_QUEUE_LOCK: bool = false;
    const AFTER_GRACE_PERIOD: bool = false;
    const MAY_DEFER: bool = false;
}

impl sealed::Sealed for QueueLock {
    fn release(group: RetiredGroup) {
        // SAFETY: I1b. Retirement under this protection happens inside removal or a move, with
        // the queue lock held (the scheduler takes it for them), or at teardown, when no path can
        // run (I4). A deferred update reads its group with the queue lock held, so it either ran
        // before the reparenting (and has finished) or reads the new group.
        unsafe { group.free_now() }
    }
}

impl Protection for QueueLock {
    const NAME: &'static str = "queue lock";
    const ALLOWS_REMOVAL: bool = true;
    const REMOVAL_HOLDS_QUEUE_LOCK: bool = true;
    const AFTER_GRACE_PERIOD: bool = false;
    const MAY_DEFER: bool = true;
}

/// Frees a group retired under [`GracePeriod`] once its grace period has ended, and sends a
/// parent whose last reference this was through a grace period of its own.
fn free_after_grace_period(group: RetiredGroup) {
    let mut release_parent = |parent: RetiredGroup| {
        if parent.scheduler_gone() {
            // SAFETY: the scheduler is gone, so no path and no deferred update can run (I4).
            unsafe { parent.free_now() }
        } else {
            // A deferred update pinned after this child's retirement may have read the parent
            // from a queue that was still in it: the parent waits for a grace period of its own.
            retire_after_grace_period(parent);
        }
    };
    // SAFETY: I1d. This runs from the epoch collector after every pin that was active when the
    // group was retired has ended. The group's last reference went after its queues were
    // reparented (the pointer switch is published under the scheduler lock before the reference
    // is dropped), so a pin taken after the retirement reads the new group, never this one.
    unsafe { group.free(&mut release_parent) }
}

fn retire_after_grace_period(group: RetiredGroup) {
    epoch::pin().defer(move || free_after_grace_period(group));
}

impl sealed::Sealed for GracePeriod {
    fn release(group: RetiredGroup) {
        retire_after_grace_period(group);
    }
}

impl Protection for GracePeriod {
    const NAME: &'static str = "epoch grace period";
    const ALLOWS_REMOVAL: bool = true;
    const REMOVAL_HOLDS_QUEUE_LOCK: bool = false;
    const AFTER_GRACE_PERIOD: bool = true;
    const MAY_DEFER: bool = true;

    fn reclaim_step() {
        epoch::flush();
    }

    fn quiesce() {
        // Each flush moves this thread's garbage to the collector, tries to advance the epoch and
        // runs what is due; with no thread pinned a few rounds free everything retired (a freed
        // child's parent needs two more).
        for _ in 0..64 {
            epoch::flush();
        }
    }
}

impl sealed::Sealed for NoRemoval {
    fn release(group: RetiredGroup) {
        // SAFETY: under this protection groups are retired only at teardown (removal and moves are
        // refused), when no path and no deferred update can run (I4).
        unsafe { group.free_now() }
    }
}

impl Protection for NoRemoval {
    const NAME: &'static str = "no removal";
    const ALLOWS_REMOVAL: bool = false;
    const REMOVAL_HOLDS_QUEUE_LOCK: bool = false;
    const AFTER_GRACE_PERIOD: bool = false;
    const MAY_DEFER: bool = true;
}

/// Proof that the holder may apply a deferred batch: the protection's side of the agreement is
/// held. Only a [`crate::DeferredCx`] of the matching protection makes one.
pub trait Witness: sealed::SealedWitness {}

/// The queue lock, held (a [`QueueLock`] witness).
pub struct QueueLockHeld<'a> {
    pub(crate) _guard: LockGuard<'a, ()>,
}

/// An epoch pin (a [`GracePeriod`] witness).
pub struct EpochPin {
    pub(crate) _guard: epoch::Guard,
}

/// The scheduler refuses removal and moves (a [`NoRemoval`] witness).
pub struct GroupsStay<'a> {
    pub(crate) _scheduler: PhantomData<&'a ()>,
}

impl sealed::SealedWitness for QueueLockHeld<'_> {}
impl sealed::SealedWitness for EpochPin {}
impl sealed::SealedWitness for GroupsStay<'_> {}
impl Witness for QueueLockHeld<'_> {}
impl Witness for EpochPin {}
impl Witness for GroupsStay<'_> {}

/// Hands retired groups to a protection's reclamation: the only safe way a variant's
/// `retire_group` can free one (dropping it instead leaks it, which the models report).
pub struct Reclaimer<'a, R: Protection> {
    _protection: ReclaimerMarker<'a, R>,
}

/// Borrows for `'a` (the removal path it is lent to) and names `R` without owning one.
type ReclaimerMarker<'a, R> = PhantomData<(&'a (), fn() -> R)>;

impl<R: Protection> Reclaimer<'_, R> {
    pub(crate) fn new() -> Self {
        Reclaimer { _protection: PhantomData }
    }

    /// Frees `group` as the protection's agreement says (at once, or after a grace period).
    pub fn release(&self, group: RetiredGroup) {
        <R as sealed::Sealed>::release(group);
    }
}

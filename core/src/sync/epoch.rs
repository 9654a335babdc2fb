//! Epoch-based reclamation, through one door: every pin the core takes and every flush it asks
//! for go through here, on crossbeam-epoch's default collector.
//!
//! - Real build: `crossbeam_epoch::pin()` with its cached per-thread participant.
//! - Under a model checker: each modelled thread registers its own participant in the default
//!   collector and [`super::thread::spawn`] releases it when the thread's body returns. Left to
//!   the thread-local destructor (as the real build does), the participant's last unpin is not
//!   ordered before `join` in loom's view, so the joiner may read it as pinned forever and no
//!   grace period could end inside the execution. Releasing it in the body keeps every
//!   reclamation the model asks for within the execution, where a missing pin, a shortened grace
//!   period or a wrong free order is seen.

pub use crossbeam_epoch::Guard;

/// Pins the calling thread.
#[cfg(not(any(loom, shuttle)))]
#[inline]
pub fn pin() -> Guard {
    crossbeam_epoch::pin()
}

/// Moves the calling thread's deferred functions to the collector, tries to advance the epoch,
/// and runs whatever is due. Never blocks.
pub fn flush() {
    pin().flush();
}

/// The calling model thread's participant. Shared out as an `Rc` so that no borrow of the cell is
/// held while pinning: a pin may collect garbage, and a deferred free may pin again (re-entry).
#[cfg(any(loom, shuttle))]
type Participant = std::cell::RefCell<Option<std::rc::Rc<crossbeam_epoch::LocalHandle>>>;

#[cfg(loom)]
loom::thread_local! {
    static PARTICIPANT: Participant = std::cell::RefCell::new(None);
}

#[cfg(shuttle)]
shuttle::thread_local! {
    static PARTICIPANT: Participant = std::cell::RefCell::new(None);
}

/// Pins the calling thread (its own participant, registered on first use).
#[cfg(any(loom, shuttle))]
pub fn pin() -> Guard {
    let participant = PARTICIPANT.with(|p| {
        p.borrow_mut()
            .get_or_insert_with(|| {
                std::rc::Rc::new(crossbeam_epoch::default_collector().register())
            })
            .clone()
    });
    participant.pin()
}

/// Releases the calling thread's participant: its unflushed garbage goes to the collector and it
/// leaves the participant list. Called by the facade's `spawn` at the end of a model thread.
#[cfg(any(loom, shuttle))]
pub(crate) fn release_thread_participant() {
    let participant = PARTICIPANT.with(|p| p.borrow_mut().take());
    drop(participant);
}

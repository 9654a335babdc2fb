//! How a model states an invariant: [`require`]. A leaf of the crate (it names no other module),
//! used by the model bodies (`scenarios`, `workloads`, `locks`) and by the oracles of `history`.

use schedlab_core::sync::violation;

/// Checks an invariant inside a model: a failure is recorded and fails the execution when the
/// model body returns (a panic here would unwind through the checker's objects and abort).
pub fn require(holds: bool, message: impl FnOnce() -> String) {
    if !holds {
        violation(message());
    }
}

//! The one sync facade: every lock, atomic, `Arc`, cell, thread, epoch pin and "CPU slot" the
//! scheduler uses comes from here, so that a single switch turns the whole core into a model that
//! a checker can explore. Nothing else in the workspace mentions `cfg(loom)` or `cfg(shuttle)`.
//!
//! | build | backend | what it is for |
//! | --- | --- | --- |
//! | default | [`real`](self) (`real.rs`): std atomics and threads, the TSC clock, the two lock kinds | every run, bench and test |
//! | `--cfg loom` | `model.rs` on loom | exhaustive exploration of small scenarios within a preemption bound |
//! | `--cfg shuttle` | `model.rs` on shuttle | random and PCT schedules of larger scenarios |
//!
//! Two lock kinds are the object of study (see `../shared/reference/measuring.md`, "Lock kinds
//! change the answer"):
//!
//! | kind | what it is | why |
//! | --- | --- | --- |
//! | [`LockKind::FairSpin`] | a ticket spinlock, FIFO: each acquisition by another thread hands the line over | the kernel's scheduler lock is a queued (FIFO) spinlock |
//! | [`LockKind::ParkingLot`] | `parking_lot::RawMutex`: spins briefly, then parks; unfair on purpose | what a Rust program would reach for |
//!
//! The kind is chosen at run time ([`Lock::new`]); the branch on it is one predictable compare.
//! Under a checker both kinds become the checker's `Mutex`, whose blocking it understands; the
//! raw [`TicketLock`] and the [`Measured`] wrapper are still compiled there, on the checker's
//! atomics, and model-checked on their own (`verify/src/locks.rs`).
//!
//! A lock made with [`Lock::named`] is also *measured* (real build only) while
//! [`measure::set_enabled`] is on: acquisitions, contentions and owner changes counted exactly per
//! thread, waits timed on the contended path only, holds timed one in N ([`measure`]), and
//! *traced* while span hooks are installed ([`measure::set_span_hooks`]) and a `tracing`
//! subscriber records TRACE. The facade is a leaf: it imports nothing of the scheduler. What the
//! classes and paths are called, the spans a lock opens and the reports are the layer above's
//! (`crate::lockstat`), injected through `measure`. Under a checker the class is ignored.
//!
//! [`epoch`] is the one door to crossbeam-epoch: pins and flushes (see there why model threads
//! own their participants).
//!
//! Under a checker freed objects are also *quarantined* rather than returned to the allocator
//! ([`reclaim`]), so that a use after free reads a poisoned liveness word and fails an assertion
//! instead of reading recycled memory: neither checker sees dangling pointers by itself.
//!
//! This file is the switch and nothing else (tokio's `loom/mod.rs`): the backends are `real.rs`
//! and `model.rs`; the lock kinds' names are `kind.rs`, their implementations `lock.rs`; the
//! oracles (liveness word, untracked `Arc` and mutex) `oracle.rs`; `std`'s `UnsafeCell` with
//! loom's API `cell.rs`; the facade's tests `tests.rs`.

#[cfg(all(loom, shuttle))]
compile_error!("the sync facade has one model checker at a time: build with --cfg loom or --cfg shuttle, not both");

#[cfg(not(any(loom, shuttle)))]
#[path = "real.rs"]
mod imp;

#[cfg(any(loom, shuttle))]
#[path = "model.rs"]
mod imp;

pub use imp::*;

// loom checks the accesses of its own cell (`model.rs`); every other build uses std's.
#[cfg(not(loom))]
mod cell;
#[cfg(not(loom))]
pub use cell::UnsafeCell;

pub mod epoch;
pub mod measure;

mod kind;
pub use kind::LockKind;

mod oracle;
pub use oracle::{Liveness, OracleArc, OracleMutex};

// The raw locks and the measured wrapper are compiled in every build, on the facade's atomics:
// under a checker they are what `schedlab-verify`'s lock models explore (`lock.rs`), while the
// scheduler's `Lock` there is the checker's `Mutex` (`model.rs`).
mod lock;
#[cfg(feature = "fault-injection")]
pub use lock::weakened;
#[cfg(not(any(loom, shuttle)))]
pub use lock::{KindQueued, Lock, LockGuard, RawKindLock};
pub use lock::{Measured, MeasuredGuard, RawLockWait, TicketLock};
/// The raw-lock trait every lock kind implements (lock_api's), and its stateless guard, for code
/// above the facade that writes a raw lock of its own (the lock models' negative controls).
pub use lock_api::{GuardNoSend, RawMutex};

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;

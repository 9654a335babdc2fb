//! # schedlab-verify: the variants' lifetime arguments, checked
//!
//! Deferring statistics past the scheduler lock rests on an argument: *the request pins its queue,
//! the queue pins its group, and whatever the variant holds keeps the group from being freed while
//! the deferred update runs*. The kernel wrote that argument as a comment and it was wrong more than
//! once (kernel-bfq.md §5). Here it is checked by loom, on the real scheduler and the real variants
//! (built with `--cfg loom`, the sync facade turns every lock, atomic and `Arc` into loom's).
//!
//! ## What is checked (notes/invariants.md)
//!
//! | invariant | scenario ([`scenarios`]) | variants |
//! | --- | --- | --- |
//! | I1 no group freed under a deferred update | insert vs group removal; dispatch + completion vs group removal | sched-lock, queue-lock, epoch, debug-off |
//! | I2 conservation | concurrent insert and dispatch; once quiescent, every group's `queued` is 0 and io_serviced = dispatched | same |
//! | I3 no leak | I/O, group removal and process exit in two threads; after teardown no group or queue is alive | same |
//! | I4 scheduler outlives its deferred updates | a thread inside a deferred update while another drops the last other handle | same |
//!
//! Every property has a negative control in [`broken`]: a variant written only through the public
//! `StatsPolicy` trait, as a researcher would write one, that loom must reject (the tests expect
//! the panic), paired with its fixed form that passes.
//!
//! ## How "freed" becomes visible
//!
//! loom does not see dangling pointers. Under `cfg(loom)` the facade's `reclaim` runs an object's
//! destructor but keeps its memory (quarantine); the destructor poisons a liveness word that every
//! access through a raw pointer asserts. A use after free is then a deterministic assertion
//! failure ("group used after it was freed"). Live-object counts ([`schedlab_core::Census`]) turn
//! leaks into failures; loom's own checks catch data races on `UnsafeCell`s and leaked `Arc`s.
//!
//! ## Running
//!
//! ```text
//! CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS=2 \
//!   RUSTFLAGS="--cfg loom --cfg crossbeam_loom --cfg crossbeam_sanitize" \
//!   cargo test -p schedlab-verify --release
//! ```
//!
//! Without `--cfg loom` this crate's model tests compile to nothing and the real-thread stress test
//! runs instead. notes/loom-budget.md records each model's time; notes/new-variant.md explains how
//! a new variant gets these checks.

pub mod broken;
pub mod controls;
pub mod harness;
pub mod scenarios;
pub mod workloads;

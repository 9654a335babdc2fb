//! # schedlab-verify: the variants' lifetime arguments, checked
//!
//! Deferring statistics past the scheduler lock rests on an argument: *the request pins its queue,
//! the queue pins its group, and whatever the variant holds keeps the group from being freed while
//! the deferred update runs*. The kernel wrote that argument as a comment and it was wrong more
//! than once (kernel-bfq.md, "Real bugs"). Here it is stated as types where it can be
//! (`schedlab_core::protection`: a deferred batch is applied only with the witness of the variant's
//! protection) and checked by two model checkers where it cannot, on the real scheduler and the
//! real variants, built through the sync facade (`--cfg loom` or `--cfg shuttle` turn every lock,
//! atomic, `Arc`, thread and epoch pin into the checker's).
//!
//! ## What is checked
//!
//! | module | what |
//! | --- | --- |
//! | [`scenarios`] | small model bodies, generic over the variant: I1 (insert, dispatch and completion against removal), I2, I3 (nested removal), I4 (teardown), the hierarchy under a grace period (child, then parent), the idle timer against dispatch and exit (I5), moves with the queue idle and in service, removal while a queue idles, stale handles (I6), merges and priority requests across a removal, reference counts from two contexts, completions in a context of their own (a thread that neither submitted the request nor removes its group) against removal, a move and the submitter's exit, a group created by a spawned thread and published (the moved queue's group pointer) to another thread's lock-free deferred update, two groups' adjacent requests merged after a move (back, front, bio and splice merges) against a dispatcher and a removal. Each ends with reclamation inside the execution, I2 and a strict I3 ([`scenarios::finish`]) |
//! | [`workloads`] | shuttle-sized bodies: three or four threads, tens of requests, churn, moves, merges, priority requests and the timer in one execution |
//! | [`broken`] | negative controls written through the public `StatsPolicy` trait (each needs `unsafe` to be wrong), with their fixed forms |
//! | [`controls`] | the one list of negative controls both checkers run: broken variants, and named core faults (`schedlab_core::fault`) against real variants, each with the reason it must be rejected for |
//! | [`locks`] | the project's own locks (the ticket lock, the measuring wrapper) on loom's atomics: mutual exclusion, publication of a hold's data to the next, `try_lock`, FIFO hand-off, the first attempt's contended answer and the wrapper's exact counts; each ordering weakened, and broken raw locks, as negative controls (`tests/loom_locks.rs`) |
//! | [`history`] | independent oracles: facts recorded by the model threads where they arise (issues, dispatches, moves, creations, removals, reads, each with a vector clock of the model's own happens-before edges), checked against the statistics: I7 from the issuers, across merges, moves with requests in flight and removals, and every statistics read against the operations ordered before it |
//! | [`coverage`] | the coverage map: the core's branch points (`branch!` markers, recorded only under a checker) found by scanning `core/src`, the ones `notes/verify.md` argues unreachable, and the heuristic that keeps markers from being left out; `tests/coverage_map.rs` runs every model and fails on a branch point no model reaches |
//! | [`invariant`] | `require`: an invariant checked inside a model (a failure recorded, the execution failed when the body returns); a leaf, so that `scenarios` and `history` import in one direction only |
//! | [`harness`] | each model in a child process of its own (a panic under a checker aborts; in a child it fails that model alone), a core fault switched on by name, the outcome checked against what was expected |
//!
//! The test files are generated: `tests/loom_models.rs` and `tests/shuttle_models.rs` expand the
//! variant registry (`schedlab_variants::with_registry!`) into one module per variant with every
//! scenario ([`for_each_scenario!`]); `tests/loom_controls.rs` and `tests/shuttle_controls.rs`
//! expand [`for_each_control!`]. A variant file plus its registry line is model-checked with no
//! edit here; no test counts the variants.
//!
//! ## How "freed" and "reclaimed" become visible
//!
//! Neither checker sees dangling pointers. Under a checker the facade's `reclaim` poisons an
//! object's liveness word and keeps its memory (quarantine); every accessor a deferred update can
//! reach asserts the word, so a use after free is a deterministic violation ("group used after it
//! was freed"). A free poisons first, so an update racing the free is caught, not lost. Grace
//! periods end inside the execution: each model thread owns its epoch participant and releases it
//! when its body returns (`schedlab_core::sync::epoch`), and the scenarios flush the collector from
//! racing threads and at the end, so a missing pin, a shortened grace period or a wrong free order
//! frees a group while an update can still reach it. Live-object counts
//! ([`schedlab_core::Census`]) turn leaks into violations; loom's own checks catch data races on
//! facade `UnsafeCell`s and leaked checker `Arc`s.
//!
//! ## Running
//!
//! ```text
//! CARGO_TARGET_DIR=target/loom LOOM_MAX_PREEMPTIONS=2 \
//!   RUSTFLAGS="--cfg loom --cfg crossbeam_loom --cfg crossbeam_sanitize -C debug-assertions=on" \
//!   cargo test -p schedlab-verify --release
//! CARGO_TARGET_DIR=target/shuttle RUSTFLAGS="--cfg shuttle -C debug-assertions=on" \
//!   cargo test -p schedlab-verify --release --test shuttle_models --test shuttle_controls
//! ```
//!
//! Without a checker cfg the model tests compile to nothing and the real-thread stress test runs
//! instead. `notes/verify-budget.md` records each model's time and shuttle's detection rates
//! (`src/bin/shuttle-rates.rs`); `notes/new-variant.md` explains how a new variant gets these
//! checks; `scripts/mutants.sh` measures what the suite catches.

pub mod broken;
pub mod controls;
pub mod coverage;
pub mod harness;
pub mod history;
pub mod invariant;
pub mod locks;
pub mod scenarios;
pub mod workloads;

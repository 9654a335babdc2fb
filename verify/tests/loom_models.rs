//! The loom suite, generated: one module per registered variant (`schedlab_variants::with_registry!`),
//! each with every scenario of `schedlab_verify::scenarios` (`for_each_scenario!`). A new variant
//! file and its registry line get all of them, with no edit here.
//!
//! Run with the README's test command (loom flags, `LOOM_MAX_PREEMPTIONS=2`, its own target dir);
//! each model runs in a child process (`schedlab_verify::harness`).
#![cfg(loom)]

schedlab_variants::with_registry!(schedlab_verify::models_for_every_variant);

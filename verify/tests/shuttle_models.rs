//! The shuttle suite, generated like the loom one (one module per registered variant), with the
//! larger workloads of `schedlab_verify::workloads` beside the small scenarios. Each model runs
//! `Exploration::default()` schedules (PCT, depth 3; `SCHEDLAB_SHUTTLE_ITERATIONS` overrides the
//! count) in its own process.
#![cfg(shuttle)]

schedlab_variants::with_registry!(schedlab_verify::models_for_every_variant);

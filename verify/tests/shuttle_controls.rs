//! Negative controls under shuttle (the same list as loom's, `schedlab_verify::controls`): every
//! broken version must be caught within the schedules shuttle samples, for its expected reason.
//! Detection rates per control: `cargo run -p schedlab-verify --bin shuttle-rates` under
//! `--cfg shuttle` (notes/verify-budget.md).
#![cfg(shuttle)]

schedlab_verify::for_each_control!(schedlab_verify::control_tests);
schedlab_verify::for_each_shuttle_only_control!(schedlab_verify::control_tests);

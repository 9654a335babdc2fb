//! Negative controls under loom (the list is `schedlab_verify::controls`): every broken version
//! must be rejected for its expected reason, every fixed form must pass; each model in its own
//! process.
#![cfg(loom)]

schedlab_verify::for_each_control!(schedlab_verify::control_tests);

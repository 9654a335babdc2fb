//! Negative controls under loom (the list is `schedlab_verify::controls`): every broken version
//! must be rejected for its expected reason, every fixed form must pass; each model in its own
//! process.
#![cfg(loom)]

schedlab_verify::for_each_control!(schedlab_verify::control_tests);

/// The controls whose bug needs crossbeam-epoch's collection order explored (loom only).
mod loom_only {
    schedlab_verify::for_each_loom_only_control!(schedlab_verify::control_tests);
}

/// The three-actor scenarios' controls (issue 45, item 1).
mod three_actors {
    schedlab_verify::for_each_three_actor_control!(schedlab_verify::control_tests);
}

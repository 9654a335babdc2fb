//! Branch points: which special cases of the paths the model checkers execute (issue 35, item 4).
//!
//! `branch!("name")` marks one arm of a branch in a function that touches shared state (the
//! paths, group creation, moves and removal, the flushes). Under a checker (`--cfg loom` or
//! `--cfg shuttle`) it records the name in a process-wide set ([`crate::sync::coverage_point`],
//! read back with [`crate::sync::coverage_take`]); in every other build it compiles to nothing.
//! `schedlab-verify`'s `tests/coverage_map.rs` runs the generated models, collects the set, and
//! fails when a point declared in `core/src` (found by scanning the sources for the macro) is
//! reached by no model and not argued unreachable in `notes/verify.md`; it also scans the
//! instrumented functions for branches without a marker.
//!
//! The arms of fault-injection switches (`fault::active`) are not marked: they are the negative
//! controls' business, not the product's.

/// Marks a branch arm (see the module documentation). The name is a literal, unique in the crate.
macro_rules! branch {
    ($name:literal) => {
        $crate::sync::coverage_point($name)
    };
}

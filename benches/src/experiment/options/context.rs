//! What an options struct's translation gets besides the options.

use crate::error::ExperimentError;
use schedlab_core::sync::AtomicBool;
use std::path::Path;

/// What a translation needs besides the options: the stop flag (loading a large input polls
/// it), the CLI's check that an input was declared before the work, and a place for the flags
/// that have no effect beside the others given (said, not refused: scripts pass them).
pub struct Context<'a> {
    pub stop: &'a AtomicBool,
    pub declared_input: &'a dyn Fn(&Path) -> Result<(), ExperimentError>,
    pub warnings: Vec<String>,
}

impl<'a> Context<'a> {
    pub fn new(
        stop: &'a AtomicBool,
        declared_input: &'a dyn Fn(&Path) -> Result<(), ExperimentError>,
    ) -> Self {
        Context { stop, declared_input, warnings: Vec::new() }
    }

    /// Says that `flag` has no effect, and why.
    pub fn no_effect(&mut self, flag: &str, why: impl std::fmt::Display) {
        self.warnings.push(format!("{flag} has no effect{why}"));
    }
}

//! What the experiments' unit tests share: the check that a configuration is refused as bad input
//! before any work.

use super::observer::{Observer, Recorder};
use crate::error::{ErrorKind, ExperimentError};
use schedlab_core::sync::AtomicBool;

/// Runs an experiment (`run`, given a stop flag and an observer) and checks that it refused its
/// configuration as bad input whose message names `says`, before any step.
pub fn assert_refused<R: std::fmt::Debug>(run: impl FnOnce(&AtomicBool, &mut dyn Observer) -> Result<R, ExperimentError>, says: &str) {
    let mut recorder = Recorder::default();
    let e = run(&AtomicBool::new(false), &mut recorder).expect_err(says);
    assert_eq!(e.kind, ErrorKind::BadInput, "{says}: {e}");
    assert!(e.message.contains(says), "{says}: {e}");
    assert_eq!(recorder.steps, 0, "{says}: no work before the check");
}

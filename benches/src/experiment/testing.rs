//! What the experiments' unit tests share: the checks that a configuration is refused as bad
//! input, in one line, before any work.

use super::observer::{Observer, Recorder};
use crate::error::{ErrorKind, ExperimentError};
use schedlab_core::sync::AtomicBool;

/// A refusal as the shape promises it: bad input, one line, and no step, warning or failure told.
fn check_refused(refused: &ExperimentError, recorder: &Recorder, what: &str) {
    assert_eq!(refused.kind, ErrorKind::BadInput, "{what}: {refused}");
    assert_eq!(refused.message.lines().count(), 1, "{what}: {refused}");
    assert_eq!(
        (recorder.steps, recorder.warnings.len(), recorder.failures.len()),
        (0, 0, 0),
        "{what}: nothing ran"
    );
}

/// Runs an experiment (`run`, given a stop flag and an observer) and checks that it refused its
/// configuration as bad input whose message names `says`, before any step.
pub fn assert_refused<R: std::fmt::Debug>(
    run: impl FnOnce(&AtomicBool, &mut dyn Observer) -> Result<R, ExperimentError>,
    says: &str,
) {
    let mut recorder = Recorder::default();
    let e = run(&AtomicBool::new(false), &mut recorder).expect_err(says);
    assert!(e.message.contains(says), "{says}: {e}");
    check_refused(&e, &recorder, says);
}

/// [`assert_refused`] for each of `cases`: an experiment's `run` on each configuration refuses
/// it as bad input whose message names the text beside it, before any step.
pub fn assert_each_refused<'a, C, R: std::fmt::Debug>(
    cases: impl IntoIterator<Item = (C, &'a str)>,
    run: impl Fn(&C, &AtomicBool, &mut dyn Observer) -> Result<R, ExperimentError>,
) {
    for (cfg, says) in cases {
        assert_refused(|stop, observer| run(&cfg, stop, observer), says);
    }
}

/// Checks that `run` refuses every one of `configs` as bad input, in one line, before its
/// observer hears of any work.
pub fn assert_refused_before_any_work<C, R>(
    configs: &[C],
    mut run: impl FnMut(&C, &mut dyn Observer) -> Result<R, ExperimentError>,
) {
    for (i, cfg) in configs.iter().enumerate() {
        let mut recorder = Recorder::default();
        let Err(refused) = run(cfg, &mut recorder) else {
            panic!("configuration {i} was accepted")
        };
        check_refused(&refused, &recorder, &format!("configuration {i}"));
    }
}

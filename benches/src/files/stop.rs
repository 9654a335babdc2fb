//! The stop contract for work that cannot poll the stop flag itself (a parser, a renderer from
//! another crate, one long computation): it runs on a thread of its own while the caller polls
//! the flag every [`STOP_POLL`], so that a stop is honoured within a tenth of a second; the thread
//! is left to the process's exit (it holds no output: outputs are written by the caller).

use crate::error::ExperimentError;
use crate::files::input::STOP_POLL;
use schedlab_core::sync::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;

/// Why work on a thread of its own gave no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThreadError {
    /// The thread `name` could not be started: the OS's reason.
    CannotStart { name: String, why: String },
    /// The thread `name` ended without an answer (it panicked).
    Failed { name: String },
}

impl std::fmt::Display for ThreadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ThreadError::CannotStart { name, why } => write!(f, "cannot start {name}: {why}"),
            ThreadError::Failed { name } => write!(f, "{name} failed"),
        }
    }
}

impl std::error::Error for ThreadError {}

/// Runs `work` on a thread named `name`; `Ok(None)` when `stop` is set first, `Err` when the
/// thread cannot start or panics.
pub fn until_stopped<T: Send + 'static>(
    name: &str,
    stop: &AtomicBool,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<Option<T>, ThreadError> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .map_err(|e| ThreadError::CannotStart { name: name.into(), why: e.to_string() })?;
    loop {
        match rx.recv_timeout(STOP_POLL) {
            Ok(done) => return Ok(Some(done)),
            Err(RecvTimeoutError::Timeout) if stop.load(Ordering::Relaxed) => return Ok(None),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Err(ThreadError::Failed { name: name.into() })
            }
        }
    }
}

/// Parses an input's JSON (a calibration, a topology) with [`until_stopped`]: a stop during
/// the parse is honoured within a tenth of a second, as bad input is in one line.
pub fn parse_json_until<T: serde::de::DeserializeOwned + Send + 'static>(
    path: &std::path::Path,
    what: &str,
    text: String,
    stop: &AtomicBool,
) -> Result<T, ExperimentError> {
    let shown = path.display().to_string();
    let parse = move || serde_json::from_str::<T>(&text).map_err(|e| e.to_string());
    match until_stopped("json-parse", stop, parse) {
        Ok(Some(Ok(value))) => Ok(value),
        Ok(Some(Err(e))) => {
            let first = e.lines().next().unwrap_or("");
            Err(ExperimentError::bad_input(format!("{shown} is not {what}: {first}")))
        }
        Ok(None) => Err(ExperimentError::stopped(format!("stopped while reading {shown}"))),
        Err(e) => Err(ExperimentError::bad_input(format!("{shown}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_that_ends_gives_its_value_and_a_stop_gives_way() {
        let stop = AtomicBool::new(false);
        assert_eq!(until_stopped("t", &stop, || 7), Ok(Some(7)));
        // The work waits for the stop, so the answer cannot be its value.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        stop.store(true, Ordering::Relaxed);
        assert_eq!(until_stopped("t", &stop, move || rx.recv().is_ok()), Ok(None));
        drop(tx);
        let panicked = until_stopped("t", &AtomicBool::new(false), || -> u8 { panic!("a bug") });
        assert_eq!(panicked, Err(ThreadError::Failed { name: "t".into() }));
        assert_eq!(panicked.unwrap_err().to_string(), "t failed");
    }
}

//! The stop contract for work that cannot poll the stop flag itself (a parser, a renderer from
//! another crate, one long computation): it runs on a thread of its own while the caller polls
//! the flag every [`STOP_POLL`], so that a stop is honoured within a tenth of a second; the thread
//! is left to the process's exit (it holds no output: outputs are written by the caller).

use crate::files::input::STOP_POLL;
use schedlab_core::sync::{AtomicBool, Ordering};
use crate::error::ExperimentError;
use std::sync::mpsc::RecvTimeoutError;

/// Runs `work` on a thread named `name`; `Ok(None)` when `stop` is set first, `Err` when the
/// thread cannot start or panics.
pub fn until_stopped<T: Send + 'static>(name: &str, stop: &AtomicBool, work: impl FnOnce() -> T + Send + 'static) -> Result<Option<T>, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .map_err(|e| format!("cannot start {name}: {e}"))?;
    loop {
        match rx.recv_timeout(STOP_POLL) {
            Ok(done) => return Ok(Some(done)),
            Err(RecvTimeoutError::Timeout) if stop.load(Ordering::Relaxed) => return Ok(None),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Err(format!("{name} failed")),
        }
    }
}

/// Parses an input's JSON (a calibration, a topology) with [`until_stopped`]: a stop during
/// the parse is honoured within a tenth of a second, as bad input is in one line.
pub fn parse_json_until<T: serde::de::DeserializeOwned + Send + 'static>(path: &std::path::Path, what: &str, text: String, stop: &AtomicBool) -> Result<T, ExperimentError> {
    let shown = path.display().to_string();
    match until_stopped("json-parse", stop, move || serde_json::from_str::<T>(&text).map_err(|e| e.to_string())) {
        Ok(Some(Ok(value))) => Ok(value),
        Ok(Some(Err(e))) => Err(ExperimentError::bad_input(format!("{shown} is not {what}: {}", e.lines().next().unwrap_or("")))),
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
        assert!(until_stopped("t", &AtomicBool::new(false), || -> u8 { panic!("a bug") }).is_err());
    }
}

//! One shape for every experiment: a configuration in, a stop flag and an observer passed in, a
//! serialisable report and a typed error out.
//!
//! ```text
//! fn run(cfg: &Config, stop: &AtomicBool, observer: &mut dyn Observer) -> Result<Report, ExperimentError>
//! ```
//!
//! - The **configuration** is checked by the experiment itself before any work; a bad one is an
//!   [`ErrorKind::BadInput`] error, which the CLI turns into one line and exit code 2.
//! - The **stop flag** is polled; when it is set the experiment finishes what it can within about
//!   a second and returns its report marked interrupted (a stop is not an error: what finished is
//!   kept).
//! - The **observer** hears progress (steps done of steps planned) and warnings; the CLI draws a
//!   progress bar and prints the warnings, a test records them.
//! - The **report** is `Serialize`: the CLI prints tables from it and writes it as JSON, with its
//!   provenance inside.
//! - The **error** carries its kind, and the kind its exit code (the README's table), so that the
//!   code does not depend on where a message was caught.
//!
//! `schedlab kernel` (`crate::kernel`) is the first experiment written in this shape; the older
//! ones (`compare`, `sweep`, `predict`, ...) still take a progress callback and return string
//! errors, and move to this shape one by one.

pub use crate::error::{ErrorKind, ExperimentError};

/// What an experiment tells its observer while it runs.
#[derive(Clone, Copy, Debug)]
pub enum Event<'a> {
    /// The work planned, in steps (runs), and a rough estimate of its length.
    Planned { steps: usize, estimated_s: f64 },
    /// A step starts: `done` steps are finished; `label` says what runs now.
    Step { done: usize, label: &'a str },
    /// Something the user should know about the results (printed as a warning).
    Warning(&'a str),
    /// Every planned step is done (or the run was stopped).
    Finished,
}

/// Hears an experiment's events (the CLI: a progress bar and warnings on stderr).
pub trait Observer {
    fn event(&mut self, event: Event<'_>);
}

/// An observer that keeps the warnings and ignores the rest (tests, scripts).
#[derive(Debug, Default)]
pub struct Recorder {
    pub warnings: Vec<String>,
    pub steps: usize,
}

impl Observer for Recorder {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Warning(w) => self.warnings.push(w.to_string()),
            Event::Step { .. } => self.steps += 1,
            Event::Planned { .. } | Event::Finished => {}
        }
    }
}

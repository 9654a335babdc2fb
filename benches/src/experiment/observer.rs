//! What an experiment tells while it runs ([`Event`]), and who hears it ([`Observer`]).

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

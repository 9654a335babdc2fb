//! What an experiment tells while it runs ([`Event`]), and who hears it ([`Observer`]). One
//! observer type serves every experiment: the CLI's draws one progress bar and prints warnings and
//! failures on stderr; [`Recorder`] keeps them for tests and scripts.

/// What an experiment tells its observer while it runs.
#[derive(Clone, Copy, Debug)]
pub enum Event<'a> {
    /// The work planned, in steps (runs, points, rounds), and a rough estimate of its length.
    Planned { steps: usize, estimated_s: f64 },
    /// The plan grew (an experiment that runs until its figures are precise adds steps): `steps`
    /// is the new total, `note` says how far it is ("round 5: widest ±4.2 % (target ±3 %)").
    Progress { steps: usize, note: &'a str },
    /// A step starts: `done` steps are finished; `label` says what runs now.
    Step { done: usize, label: &'a str },
    /// A step finished: `done` steps are finished now; `summary` says what it gave (logged).
    StepDone { done: usize, summary: &'a str },
    /// Something the user should know about the results (printed as a warning).
    Warning(&'a str),
    /// A step failed and the experiment goes on without it (printed as an error; the experiment
    /// reports it again in its report and its error at the end).
    Failure(&'a str),
    /// Every planned step is done (or the run was stopped).
    Finished,
}

/// Hears an experiment's events (the CLI: a progress bar and warnings on stderr).
pub trait Observer {
    fn event(&mut self, event: Event<'_>);
}

/// An observer that keeps the warnings and failures and counts the steps (tests, scripts).
#[derive(Debug, Default)]
pub struct Recorder {
    pub warnings: Vec<String>,
    pub failures: Vec<String>,
    pub steps: usize,
    pub steps_done: usize,
}

impl Observer for Recorder {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Warning(w) => self.warnings.push(w.to_string()),
            Event::Failure(f) => self.failures.push(f.to_string()),
            Event::Step { .. } => self.steps += 1,
            Event::StepDone { .. } => self.steps_done += 1,
            Event::Planned { .. } | Event::Progress { .. } | Event::Finished => {}
        }
    }
}

/// An observer that hears nothing (a caller with nothing to show).
#[derive(Debug, Default)]
pub struct Silent;

impl Observer for Silent {
    fn event(&mut self, _event: Event<'_>) {}
}

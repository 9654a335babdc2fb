//! The typed error of an experiment: its kind, and the kind's exit code (the README's table), so
//! that the code does not depend on where a message was caught. At the bottom of the crate so that
//! every stage can return it; `experiment` re-exports it as part of the experiment shape.

use std::fmt;

/// What went wrong, as the README's exit-code table names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// An argument, an input file or an output path is not what it should be; found before any
    /// work (exit 2).
    BadInput,
    /// The work ran and a check of its results failed (exit 1).
    CheckFailed,
    /// An output could not be written after the work (exit 3).
    OutputFailed,
    /// A run failed (exit 4).
    RunFailed,
    /// A signal stopped the work before there was anything to report (exit 128 + the signal's
    /// number; the CLI knows which signal came, so 130, SIGINT's, is only the default here).
    Stopped,
}

impl ErrorKind {
    /// The process exit code of this kind (README, "Exit codes").
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorKind::CheckFailed => 1,
            ErrorKind::BadInput => 2,
            ErrorKind::OutputFailed => 3,
            ErrorKind::RunFailed => 4,
            ErrorKind::Stopped => 130,
        }
    }

    /// How much this kind outranks others when one command meets several: an output that could
    /// not be written first (the user must know the file is missing), then a stop, a failed
    /// check, a failed run; bad input never meets another (it comes before any work).
    fn rank(self) -> u8 {
        match self {
            ErrorKind::BadInput => 5,
            ErrorKind::OutputFailed => 4,
            ErrorKind::Stopped => 3,
            ErrorKind::CheckFailed => 2,
            ErrorKind::RunFailed => 1,
        }
    }
}

/// An experiment's error: its kind, one line for the user, and whether the user has had that
/// line already ([`ExperimentError::told`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExperimentError {
    pub kind: ErrorKind,
    pub message: String,
    /// The user was told as it happened (an observer or the CLI printed the message then): the
    /// kind is left to give the exit code, and no one prints the message again.
    pub said_as_it_happened: bool,
}

/// A run that failed (exit 4): a tool that did not start, finish or say what was expected, a
/// change to the machine that could not be made. The short name the kernel peer's parsers use.
pub fn failed(message: impl Into<String>) -> ExperimentError {
    ExperimentError::run_failed(message)
}

impl ExperimentError {
    pub fn bad_input(message: impl Into<String>) -> Self {
        ExperimentError::new(ErrorKind::BadInput, message)
    }

    pub fn run_failed(message: impl Into<String>) -> Self {
        ExperimentError::new(ErrorKind::RunFailed, message)
    }

    pub fn check_failed(message: impl Into<String>) -> Self {
        ExperimentError::new(ErrorKind::CheckFailed, message)
    }

    pub fn output_failed(message: impl Into<String>) -> Self {
        ExperimentError::new(ErrorKind::OutputFailed, message)
    }

    pub fn stopped(message: impl Into<String>) -> Self {
        ExperimentError::new(ErrorKind::Stopped, message)
    }

    /// An error of `kind` saying `message`, not yet said to the user.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ExperimentError { kind, message: message.into(), said_as_it_happened: false }
    }

    /// The same error, said to the user as it happened (printed when it was met): its kind
    /// still gives the exit code; [`Failures`] and the CLI do not print it again.
    pub fn told(self) -> Self {
        ExperimentError { said_as_it_happened: true, ..self }
    }

    pub fn exit_code(&self) -> u8 {
        self.kind.exit_code()
    }
}

/// Collects the failures a command meets after its work (an output not written, a check that
/// failed, a run that failed) and ends with one error: the kind that decides the exit code, and
/// every message that was not already told, in order, so that none is lost and none is said
/// twice.
#[derive(Debug, Default)]
pub struct Failures {
    worst: Option<ErrorKind>,
    /// The messages still to say.
    untold: Vec<String>,
    /// The messages said as they happened: the error's when nothing is left to say.
    told: Vec<String>,
}

impl Failures {
    pub fn add(&mut self, error: ExperimentError) {
        self.worst = Some(match self.worst {
            Some(worst) if worst.rank() >= error.kind.rank() => worst,
            _ => error.kind,
        });
        if error.said_as_it_happened {
            self.told.push(error.message);
        } else {
            self.untold.push(error.message);
        }
    }

    /// `Ok` when nothing failed; otherwise the worst kind with the messages still to say, or,
    /// when every one was said as it happened, with those (told: the CLI prints none again).
    pub fn finish(self) -> Result<(), ExperimentError> {
        let Some(kind) = self.worst else { return Ok(()) };
        if self.untold.is_empty() {
            Err(ExperimentError::new(kind, self.told.join("; ")).told())
        } else {
            Err(ExperimentError::new(kind, self.untold.join("; ")))
        }
    }
}

impl fmt::Display for ExperimentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExperimentError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_the_readme_exit_code() {
        let codes: Vec<u8> = [
            ErrorKind::CheckFailed,
            ErrorKind::BadInput,
            ErrorKind::OutputFailed,
            ErrorKind::RunFailed,
        ]
        .iter()
        .map(|k| k.exit_code())
        .collect();
        assert_eq!(codes, [1, 2, 3, 4]);
        assert_eq!(ExperimentError::bad_input("x").exit_code(), 2);
        assert_eq!(ErrorKind::Stopped.exit_code(), 130);
    }

    #[test]
    fn a_failed_output_outranks_a_failed_check_which_outranks_a_failed_run() {
        let mut failures = Failures::default();
        assert_eq!(Failures::default().finish(), Ok(()));
        failures.add(ExperimentError::run_failed("run"));
        failures.add(ExperimentError::check_failed("check"));
        failures.add(ExperimentError::run_failed("run 2"));
        assert_eq!(failures.finish(), Err(ExperimentError::check_failed("run; check; run 2")));
        let mut failures = Failures::default();
        failures.add(ExperimentError::check_failed("check"));
        failures.add(ExperimentError::output_failed("json"));
        assert_eq!(failures.finish().map_err(|e| e.kind), Err(ErrorKind::OutputFailed));
    }

    #[test]
    fn a_told_failure_is_not_said_again_and_an_untold_one_is_not_lost() {
        let mut failures = Failures::default();
        failures.add(ExperimentError::output_failed("cannot write a.svg").told());
        failures.add(ExperimentError::run_failed("run 3 failed"));
        let e = failures.finish().unwrap_err();
        assert_eq!((e.kind, e.message.as_str()), (ErrorKind::OutputFailed, "run 3 failed"));
        assert!(!e.said_as_it_happened, "an untold message must still be said");
        let mut failures = Failures::default();
        failures.add(ExperimentError::output_failed("cannot write a.svg").told());
        failures.add(ExperimentError::run_failed("run 3 failed").told());
        let e = failures.finish().unwrap_err();
        assert!(e.said_as_it_happened, "said as it happened, not to be said again: {e:?}");
        assert_eq!(e.kind, ErrorKind::OutputFailed);
    }
}

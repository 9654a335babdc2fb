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
}

impl ErrorKind {
    /// The process exit code of this kind (README, "Exit codes").
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorKind::CheckFailed => 1,
            ErrorKind::BadInput => 2,
            ErrorKind::OutputFailed => 3,
            ErrorKind::RunFailed => 4,
        }
    }
}

/// An experiment's error: its kind and one line for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExperimentError {
    pub kind: ErrorKind,
    pub message: String,
}

impl ExperimentError {
    pub fn bad_input(message: impl Into<String>) -> Self {
        ExperimentError { kind: ErrorKind::BadInput, message: message.into() }
    }

    pub fn run_failed(message: impl Into<String>) -> Self {
        ExperimentError { kind: ErrorKind::RunFailed, message: message.into() }
    }

    pub fn check_failed(message: impl Into<String>) -> Self {
        ExperimentError { kind: ErrorKind::CheckFailed, message: message.into() }
    }

    pub fn output_failed(message: impl Into<String>) -> Self {
        ExperimentError { kind: ErrorKind::OutputFailed, message: message.into() }
    }

    pub fn exit_code(&self) -> u8 {
        self.kind.exit_code()
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
        let codes: Vec<u8> =
            [ErrorKind::CheckFailed, ErrorKind::BadInput, ErrorKind::OutputFailed, ErrorKind::RunFailed].iter().map(|k| k.exit_code()).collect();
        assert_eq!(codes, [1, 2, 3, 4]);
        assert_eq!(ExperimentError::bad_input("x").exit_code(), 2);
    }
}

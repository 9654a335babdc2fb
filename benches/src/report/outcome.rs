//! What a run came to beside its figures ([`Outcome`]): the stop, the disturbed runs, the
//! failures and the typed warnings, and the judge its figures are judged by.
//!
//! A verdict on measured figures needs an [`Undisturbed`], which only [`Outcome::judge`] makes,
//! on an outcome that names no disturbed run: so no code can build a verdict cell
//! (`table::Judgement::judged`) on disturbed runs; a disturbed outcome's [`Judge`] says
//! "not judged: disturbed" instead. Warnings are typed ([`Warning`]: kind, scope, message) and
//! said once each by [`merged`]. This module depends on no other part of `report`, so that the
//! tables and the page can use it.

use crate::error::{ErrorKind, ExperimentError, Failures};
use serde::Serialize;

/// What a run came to, beside its figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Outcome {
    /// A stop came; the report holds what finished.
    pub interrupted: bool,
    /// Warnings the reader must see (shown in the page's box at the top), each said once by
    /// [`merged`].
    pub warnings: Vec<Warning>,
    /// Runs whose figures do not measure what they claim (other processes, oversubscription).
    pub disturbed: Vec<String>,
    /// End-of-run checks that failed (exit 1).
    pub failed_checks: Vec<String>,
    /// Runs that failed (exit 4), each said once ([`Failure`]).
    pub failed_runs: Vec<Failure>,
    /// Outputs the work itself writes (a CSV, a drawing) that failed (exit 3); as above.
    pub failed_outputs: Vec<Failure>,
}

/// A failed run or output: what happened, and whether the user was told as it happened (an
/// observer printed it then: the terminal has the line above the report, the page lists it
/// among what the run said). The outcome's lines in the text and the page's box say only the
/// failures still to say ([`Failure::to_say`]), so that none is said twice and none is lost;
/// the JSON, which no one printed, names every one (its message, as a string).
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub message: String,
    pub said_as_it_happened: bool,
}

impl Failure {
    /// A failure printed when it happened.
    pub fn told(message: impl Into<String>) -> Failure {
        Failure { message: message.into(), said_as_it_happened: true }
    }

    /// A failure no one has said yet: the report says it.
    pub fn untold(message: impl Into<String>) -> Failure {
        Failure { message: message.into(), said_as_it_happened: false }
    }

    /// Its message, if the report must say it (it was not said as it happened).
    pub fn to_say(&self) -> Option<&str> {
        (!self.said_as_it_happened).then_some(self.message.as_str())
    }
}

impl Serialize for Failure {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.message)
    }
}

impl Outcome {
    /// The judge of this outcome's figures: one that gives verdicts when no run was disturbed,
    /// one that says "not judged: disturbed" otherwise.
    pub fn judge(&self) -> Judge {
        Judge { undisturbed: self.disturbed.is_empty().then_some(Undisturbed(())) }
    }

    /// The failures this outcome makes, for the exit code (a stop is the CLI's: it knows the
    /// signal).
    pub fn failures(&self) -> Failures {
        let mut failures = Failures::default();
        for message in &self.failed_checks {
            failures.add(ExperimentError::check_failed(message.clone()));
        }
        for (kind, failed) in [
            (ErrorKind::RunFailed, &self.failed_runs),
            (ErrorKind::OutputFailed, &self.failed_outputs),
        ] {
            for f in failed {
                let error = ExperimentError::new(kind, f.message.clone());
                failures.add(if f.said_as_it_happened { error.told() } else { error });
            }
        }
        failures
    }

    /// The failures the report must say itself, in order: the failed checks, then the runs and
    /// outputs that were not said as they happened.
    pub fn failures_to_say(&self) -> Vec<String> {
        let unsaid =
            self.failed_runs.iter().chain(&self.failed_outputs).filter_map(Failure::to_say);
        self.failed_checks.iter().map(String::as_str).chain(unsaid).map(str::to_string).collect()
    }
}

/// Proof that the runs behind a report's figures were undisturbed: made only by
/// [`Outcome::judge`] (its field is private to this module), and required by
/// `table::Judgement::judged`, so that no verdict cell can be built on disturbed runs.
#[derive(Clone, Copy, Debug)]
pub struct Undisturbed(());

/// What a report's tables build their verdict cells with (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub struct Judge {
    undisturbed: Option<Undisturbed>,
}

impl Judge {
    /// A judge of disturbed runs: every verdict it is asked for reads "not judged: disturbed".
    pub fn disturbed() -> Judge {
        Judge { undisturbed: None }
    }

    /// Whether it gives verdicts (the runs were undisturbed).
    pub fn judges(&self) -> bool {
        self.undisturbed.is_some()
    }

    /// The proof it holds, if the runs were undisturbed (what `table::Judgement::judged` needs).
    pub fn proof(&self) -> Option<Undisturbed> {
        self.undisturbed
    }

    /// A judge of undisturbed runs, for the tests that compare a rendering with and without.
    #[cfg(test)]
    pub(crate) fn undisturbed_for_tests() -> Judge {
        Judge { undisturbed: Some(Undisturbed(())) }
    }
}

/// What a verdict cell on disturbed runs shows, everywhere.
pub const NOT_JUDGED_DISTURBED: &str = "not judged: disturbed";

/// What a warning is about: what a reader sorts them by, and half of what makes two the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WarningKind {
    /// Other processes (or a job-control stop) shared the machine during runs.
    DisturbedByOtherLoad,
    /// The hypervisor took CPU time from the runs (steal).
    Steal,
    /// The fair lock ran with more runnable threads than CPUs: its figures measure preemption.
    Collapse,
    /// The machine moved the experiment's CPUs during the work.
    PlacementMoved,
    /// A noise floor says the machine differs from itself beyond chance.
    Unreliable,
    /// The stopping rule ended before the precision asked for.
    PrecisionNotReached,
    /// A figure regressed against a baseline.
    Regression,
    /// The recorder (an attached program, lock statistics) cost the measured figures.
    RecorderCost,
    /// A run was not CPU-bound where the model assumes it is.
    NotCpuBound,
    /// The calibration behind a model lacks an input or doubts one.
    Calibration,
    /// The clean-up of an earlier run.
    CleanUp,
    /// Anything else the experiment said.
    Other,
}

/// Where a warning holds: the whole run, or the named points or rows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "scope", content = "names", rename_all = "kebab-case")]
pub enum Scope {
    Run,
    Points(Vec<String>),
    Rows(Vec<String>),
}

impl Scope {
    fn names(&self) -> &[String] {
        match self {
            Scope::Run => &[],
            Scope::Points(names) | Scope::Rows(names) => names,
        }
    }

    /// The same kind of scope (run, points, rows): what may be joined.
    fn same_level(&self, other: &Scope) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

/// A warning the reader must see before any figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Warning {
    pub kind: WarningKind,
    pub scope: Scope,
    /// What happened and what it does to the figures, without the rows it touches (the line
    /// names them) and without "warning: " (the renderer's).
    pub message: String,
}

impl Warning {
    /// A warning on the whole run.
    pub fn run(kind: WarningKind, message: impl Into<String>) -> Warning {
        Warning { kind, scope: Scope::Run, message: message.into() }
    }

    /// A warning on the named rows.
    pub fn rows(kind: WarningKind, rows: Vec<String>, message: impl Into<String>) -> Warning {
        Warning { kind, scope: Scope::Rows(rows), message: message.into() }
    }

    /// A warning on the named points.
    pub fn points(kind: WarningKind, points: Vec<String>, message: impl Into<String>) -> Warning {
        Warning { kind, scope: Scope::Points(points), message: message.into() }
    }

    /// Its line: the rows or points it touches, once, then the message.
    pub fn line(&self) -> String {
        match self.scope.names() {
            [] => self.message.clone(),
            names => format!("{}: {}", names.join(", "), self.message),
        }
    }

    /// The lines it stands for as the experiment may have printed them as it went (one per
    /// row or point, each before the message), so that the page says none of them again.
    pub fn said_as(&self) -> Vec<String> {
        let mut lines = vec![self.line(), self.message.clone()];
        lines.extend(self.scope.names().iter().map(|n| format!("{n}: {}", self.message)));
        lines
    }
}

/// The warnings said once each: one warning per kind and scope (the messages of two with the
/// same kind and scope joined, a message said twice kept once), and one message of a kind that
/// touches several rows or points said once, naming them all.
pub fn merged(warnings: &[Warning]) -> Vec<Warning> {
    let mut by_scope: Vec<Warning> = Vec::new();
    for w in warnings {
        match by_scope.iter_mut().find(|seen| seen.kind == w.kind && seen.scope == w.scope) {
            Some(seen) if seen.message.contains(&w.message) => {}
            Some(seen) => seen.message = format!("{}; {}", seen.message, w.message),
            None => by_scope.push(w.clone()),
        }
    }
    let mut out: Vec<Warning> = Vec::new();
    for w in by_scope {
        let same = out.iter().position(|seen| {
            seen.kind == w.kind && seen.message == w.message && seen.scope.same_level(&w.scope)
        });
        match same {
            Some(at) => {
                if let Scope::Points(all) | Scope::Rows(all) = &mut out[at].scope {
                    for name in w.scope.names() {
                        if !all.contains(name) {
                            all.push(name.clone());
                        }
                    }
                }
            }
            None => out.push(w),
        }
    }
    out
}

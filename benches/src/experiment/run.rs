//! `schedlab run` as an experiment in the house shape (`crate::experiment`): one variant, one
//! configuration, one run of [`crate::driver::workload`].
//!
//! The configuration is checked before any work (bad input); a run that cannot be made is a
//! failed run. A stop ends the run where it is, and the result says so (its figures cover the
//! part that ran). The fair lock's warnings, before the run (more jobs than CPUs) and after it
//! (the jobs competed with other processes), go to the observer. One run is one step, too short a
//! plan for a progress bar: the observer hears no plan, only the warnings and the end.
//!
//! What the experiment gives is the run and where it ran ([`RunRecord`]); the CLI adds the trace
//! it wrote (`run --trace`, a subscriber of its own) and reports both as
//! `crate::report::run::RunReport`.

use super::observer::{Event, Observer};
use crate::driver::workload::{self, run_named, RunResult, WorkloadConfig};
use crate::error::ExperimentError;
use crate::files::provenance::Provenance;
use schedlab_core::sync::AtomicBool;

/// The experiment's configuration: the variant (or an entry such as `queue-lock+lists`, or the
/// reference row `none`) and the workload it runs.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub variant: String,
    pub workload: WorkloadConfig,
}

/// What one run gave, and where it ran.
#[derive(Clone, Debug)]
pub struct RunRecord {
    pub provenance: Provenance,
    pub result: RunResult,
    pub config: WorkloadConfig,
}

/// Runs the experiment (see the module documentation).
pub fn run(
    cfg: &RunConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<RunRecord, ExperimentError> {
    cfg.workload.validate(&cfg.variant)?;
    let w = &cfg.workload;
    if let Some(warning) = workload::warning_before_run(w.lock, w.threads) {
        observer.event(Event::Warning(&warning));
    }
    let provenance = Provenance::collect();
    let result = run_named(&cfg.variant, w, stop);
    observer.event(Event::Finished);
    let result = result?;
    if let Some(warning) = workload::fair_lock_warning_after(&result) {
        observer.event(Event::Warning(&warning));
    }
    Ok(RunRecord { provenance, result, config: cfg.workload.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::observer::Recorder;

    #[test]
    fn an_unknown_variant_is_refused_before_any_work() {
        let workload = WorkloadConfig::default();
        let cfg = RunConfig { variant: "no-such-variant".into(), workload };
        let mut recorder = Recorder::default();
        let refused = run(&cfg, &AtomicBool::new(false), &mut recorder).map(drop);
        assert!(refused.is_err(), "an unknown variant ran");
        assert_eq!(recorder.steps, 0);
    }
}

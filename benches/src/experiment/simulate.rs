//! `schedlab simulate` as an experiment in the house shape (`crate::experiment`): fio-like jobs
//! against the scheduler and a device model in virtual time ([`crate::policy_sim`]), one
//! simulation, one step.
//!
//! The configuration is checked before any work (bad input); a simulation that fails while it
//! runs (it passes the request bound, a group cannot be made) is a failed run. A stop ends the
//! virtual time where it is, and the report says so (its rates cover the time reached). Same
//! configuration and seed, same report (the provenance aside).

use super::observer::{Event, Observer};
use crate::error::ExperimentError;
use crate::files::provenance::Provenance;
use crate::policy_sim::{simulate_named_until, SimConfig, SimResult};
use schedlab_core::sync::AtomicBool;
use serde::Serialize;
use std::time::Instant;

/// The experiment's configuration: the simulation's parameters and the stats variant it runs.
#[derive(Clone, Debug)]
pub struct SimulateConfig {
    pub sim: SimConfig,
    pub variant: String,
}

/// The provenance of a simulation: where and how it ran, and how long it took in real time.
#[derive(Clone, Debug, Serialize)]
pub struct SimProvenance {
    #[serde(flatten)]
    pub base: Provenance,
    /// Real seconds the simulation took (the only figure that depends on the machine).
    pub wall_s: f64,
}

/// What `schedlab simulate` found (its JSON: the provenance, the result's fields, the
/// configuration).
#[derive(Clone, Debug, Serialize)]
pub struct SimulateReport {
    pub provenance: SimProvenance,
    #[serde(flatten)]
    pub result: SimResult,
    pub config: SimConfig,
}

/// Runs the experiment (see the module documentation).
pub fn run(
    cfg: &SimulateConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<SimulateReport, ExperimentError> {
    cfg.sim.validate(&cfg.variant)?;
    let label = format!("simulating {} on {}", cfg.variant, cfg.sim.device.name());
    observer.event(Event::Step { done: 0, label: &label });
    let started = Instant::now();
    let result = simulate_named_until(&cfg.variant, &cfg.sim, Some(stop))?;
    let wall_s = started.elapsed().as_secs_f64();
    observer.event(Event::StepDone {
        done: 1,
        summary: &format!("{label}: {:.0} IOPS in {wall_s:.2} real s", result.iops),
    });
    observer.event(Event::Finished);
    Ok(SimulateReport {
        provenance: SimProvenance { base: Provenance::collect(), wall_s },
        result,
        config: cfg.sim.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::observer::Recorder;
    use crate::experiment::testing::assert_each_refused;
    use crate::policy_sim::DeviceModel;

    fn short() -> SimulateConfig {
        SimulateConfig {
            sim: SimConfig { runtime_ns: 10_000_000, jobs: 2, ..SimConfig::default() },
            variant: "no-stats".into(),
        }
    }

    #[test]
    fn a_bad_configuration_is_refused_before_any_work() {
        let cases = [
            (SimulateConfig { variant: "nonsense".into(), ..short() }, "unknown variant"),
            (SimulateConfig { sim: SimConfig { jobs: 0, ..short().sim }, ..short() }, "--jobs"),
            (
                SimulateConfig { sim: SimConfig { weights: vec![], ..short().sim }, ..short() },
                "weight",
            ),
            (
                SimulateConfig {
                    sim: SimConfig { device: DeviceModel::Null, think_ns: 0, ..short().sim },
                    ..short()
                },
                "--think",
            ),
        ];
        assert_each_refused(cases, run);
    }

    #[test]
    fn a_simulation_reports_its_configuration_and_is_consistent() {
        let mut recorder = Recorder::default();
        let report = run(&short(), &AtomicBool::new(false), &mut recorder).expect("simulated");
        assert!(report.result.consistent && !report.result.interrupted);
        assert_eq!(report.config.jobs, 2);
        assert_eq!((recorder.steps, recorder.steps_done), (1, 1));
    }
}

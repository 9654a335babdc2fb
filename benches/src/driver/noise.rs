//! Re-runs of a run that other processes disturbed: the machine is shared, and a run during which
//! they used the CPUs measures them rather than the variant.

use crate::driver::workload::{RunResult, WorkloadConfig};
use crate::error::ExperimentError;
use schedlab_core::sync::AtomicBool;
use serde::Serialize;
use std::time::Duration;

/// What to do with a run during which other processes used the CPUs (the machine is shared:
/// with as many jobs as CPUs, a third runnable thread preempts lock holders and the run measures
/// that instead of the variant).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct NoisePolicy {
    /// A run is noisy when other processes used more than this many CPUs' worth of time during
    /// its measured window (`RunResult::other_cpus`).
    pub max_other_cpus: f64,
    /// Re-runs of a noisy run, after a pause that doubles each time (1 s, 2 s, 4 s ...); the last
    /// one is kept, noisy or not, and counted. A comparison or sweep re-runs at most half as many
    /// runs as it makes.
    pub retries: u32,
}

impl Default for NoisePolicy {
    fn default() -> Self {
        NoisePolicy { max_other_cpus: 0.3, retries: 3 }
    }
}

/// How a measured run went with respect to other processes.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct NoiseCount {
    /// Runs thrown away and re-run because they were noisy.
    pub rerun: u32,
    /// Runs kept although noisy (retries exhausted).
    pub kept_noisy: u32,
}

/// How a comparison makes one run: [`run_named`](crate::driver::workload::run_named), or a
/// stand-in in tests (to make a run fail).
pub type Runner<'a> =
    &'a dyn Fn(&str, &WorkloadConfig, &AtomicBool) -> Result<RunResult, ExperimentError>;

/// Runs `variant`, made by `runner` (a [`Runner`]), under `policy`: re-runs it while it is noisy,
/// up to `policy.retries` times and while `budget` (re-runs left for the whole comparison or
/// sweep, so that a busy machine cannot stretch it without bound) lasts.
pub fn run_clean(
    runner: Runner<'_>,
    variant: &str,
    cfg: &WorkloadConfig,
    interrupt: &AtomicBool,
    policy: NoisePolicy,
    noise: &mut NoiseCount,
    budget: &mut u32,
) -> Result<RunResult, ExperimentError> {
    let mut pause = Duration::from_secs(1);
    let mut attempt = 0;
    loop {
        let r = runner(variant, cfg, interrupt)?;
        // A run stopped by job control (SIGTSTP, SIGSTOP: `driver::stopped`) measured the pause:
        // re-run like a run other processes disturbed.
        let busy = r.other_cpus.is_some_and(|o| o > policy.max_other_cpus);
        let noisy = busy || r.stopped_s.is_some();
        if !noisy || r.interrupted {
            return Ok(r);
        }
        if attempt >= policy.retries || *budget == 0 {
            noise.kept_noisy += 1;
            return Ok(r);
        }
        attempt += 1;
        *budget -= 1;
        noise.rerun += 1;
        let until = std::time::Instant::now() + pause;
        while std::time::Instant::now() < until {
            if interrupt.load(schedlab_core::sync::Ordering::Relaxed) {
                return Ok(r);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        pause *= 2;
    }
}

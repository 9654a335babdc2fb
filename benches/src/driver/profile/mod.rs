//! On-CPU profiles of the workload: pprof-rs samples folded into stacks, flamegraphs and
//! differential flamegraphs (inferno, through pprof), where the time goes as a table, and a
//! criterion profiler.
//!
//! pprof-rs installs the `SIGPROF` handler that records the interrupted thread's stack, and keeps
//! the samples, the report and the flamegraph. Its own timer (`ITIMER_PROF`, one per *process*)
//! lost about a third of the samples with two busy threads (both CPUs' ticks find the timer
//! expired together, and a process-wide signal pending once is not queued twice). So
//! [`Sampling`] turns that timer off and gives every thread its own: a POSIX timer on the
//! thread's CPU-time clock (`timer_create` on its `CLOCK_THREAD_CPUTIME_ID`-style clock, with
//! `SIGEV_THREAD_ID` delivery), which sends `SIGPROF` to that thread after every 1/frequency
//! seconds of *its* CPU time ([`ThreadTimers`]; a watcher arms threads as they appear). The samples
//! are on-CPU time: a spinning waiter shows up, a thread parked in a futex or sleeping does not
//! (notes/flamegraphs.md gives the `perf` command for off-CPU time).
//!
//! Only one profiler can run in a process (the timer and the signal handler are process-wide):
//! [`Sampling::start`] takes a process-wide mutex, so callers on several threads (tests) queue up.
//! Everything else the process does while it samples is in the profile too.
//!
//! Samples whose interrupted instruction lies in libc, libgcc, libpthread or the vDSO are dropped
//! (pprof's blocklist: unwinding from inside them can deadlock). [`Folded::unsampled_share`] says
//! how much CPU time that and timer coalescing left out.

pub mod criterion;
pub mod flamegraph;
pub mod folded;
pub mod sampling;
pub mod shares;

pub use self::criterion::*;
pub use self::flamegraph::*;
pub use self::folded::*;
pub use self::sampling::*;
pub use self::shares::*;

use crate::driver::workload::{run_named, RunResult, WorkloadConfig};
use crate::error::ExperimentError;
use schedlab_core::sync::AtomicBool;

/// A variant's run and its profile.
#[derive(Debug)]
pub struct VariantProfile {
    pub run: RunResult,
    pub folded: Folded,
    pub shares: TimeShares,
}

/// Runs the workload against the variant called `name` under the profiler.
pub fn profile_named(
    name: &str,
    cfg: &WorkloadConfig,
    interrupt: &AtomicBool,
    frequency: i32,
) -> Result<VariantProfile, ExperimentError> {
    cfg.validate(name)?;
    let sampling = Sampling::start(frequency)?;
    let run = run_named(name, cfg, interrupt);
    let folded = sampling.finish()?;
    let run = run?;
    let shares = TimeShares::from_folded(&folded);
    Ok(VariantProfile { run, folded, shares })
}

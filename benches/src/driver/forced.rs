//! Failures forced after the work, for the tests of the exit-code contract (issue 26, item 5):
//! with `SCHEDLAB_FAIL_AFTER_WORK=run` every run (a workload run, a simulation) fails once its
//! work is done, as a run whose driver reports an error; with `=check` every run ends with its
//! end-of-run checks failed. Each command must then still print what it measured and exit with
//! the code of the README's table (4 and 1). Unset, nothing changes; any other value is ignored.

/// The variable that forces a failure.
pub const ENV: &str = "SCHEDLAB_FAIL_AFTER_WORK";

/// Which failure is forced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterWork {
    /// The run fails (its driver's error): exit 4.
    Run,
    /// The run's end-of-run checks fail: exit 1.
    Check,
}

/// The failure forced on this process, if any (read at each call: a test sets it per process).
pub fn forced() -> Option<AfterWork> {
    match std::env::var(ENV).ok().as_deref() {
        Some("run") => Some(AfterWork::Run),
        Some("check") => Some(AfterWork::Check),
        _ => None,
    }
}

/// The error of a run failed by force.
pub fn run_error() -> String {
    format!("the run failed after its work (forced by {ENV}=run)")
}

//! SIGINT, SIGTERM and SIGHUP: every subcommand stops within about a second, keeps what it
//! finished (its tables, JSON, CSV, SVG and trace, marked interrupted) and exits with
//! 128 + the signal's number:
//!
//! | signal | exit code |
//! | --- | --- |
//! | SIGINT (Ctrl-C) | 130 |
//! | SIGTERM | 143 |
//! | SIGHUP (terminal closed) | 129 |
//!
//! A second stop ends the process at once with its own code, writing nothing more. A stop is one
//! event until the tool has had a chance to act on it: a signal from the same sender as the first
//! (`timeout` and process supervisors signal the child and then its whole process group,
//! microseconds apart), or one within [`ONE_STOP_WINDOW`] of it, is the same stop
//! ([`is_second_stop`]); a deliberate second Ctrl-C, later and from the terminal, still ends the
//! process at once.
//!
//! The handlers are signal-hook's: a watcher thread receives the signals (no code of ours runs
//! in signal context), records the first, and sets [`INTERRUPT`], which every driver polls.

use schedlab_core::sync::{AtomicBool, Ordering};
use signal_hook::consts::{SIGCONT, SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::exfiltrator::WithOrigin;
use signal_hook::iterator::SignalsInfo;
use std::sync::atomic::AtomicI32;
use std::time::{Duration, Instant};

static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// Set by the first SIGINT, SIGTERM or SIGHUP; the stop flag every experiment polls.
pub static INTERRUPT: AtomicBool = AtomicBool::new(false);

/// Signals this close to the first are the same stop, whoever sent them: long enough for two
/// senders reacting to one event, far shorter than a person pressing Ctrl-C again.
pub const ONE_STOP_WINDOW: Duration = Duration::from_millis(300);

/// A stop request as received: when, and which process sent it (none from the terminal: the
/// kernel sends Ctrl-C's SIGINT and a hang-up's SIGHUP).
#[derive(Clone, Copy, Debug)]
pub struct Stop {
    pub at: Instant,
    pub sender: Option<i32>,
}

/// Whether `next`, arriving after `first`, asks for a second stop (exit at once) rather than
/// repeating the first: it must come from another sender (or from the terminal) and later than
/// [`ONE_STOP_WINDOW`] after the first.
pub fn is_second_stop(first: Stop, next: Stop) -> bool {
    let same_sender = first.sender.is_some() && first.sender == next.sender;
    !same_sender && next.at.saturating_duration_since(first.at) >= ONE_STOP_WINDOW
}

/// The exit code of a process stopped by `signal`.
pub fn exit_code(signal: i32) -> u8 {
    (128 + signal).clamp(0, 255) as u8
}

pub fn name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// Ignores SIGXFSZ (issue 43): a write past the shell's file-size limit (`ulimit -f`) would
/// otherwise kill the process with nothing said (exit 153), its temporary and lock files left
/// behind. Ignored, the write fails with EFBIG instead, which every output reports as it reports
/// a full disk (one line, exit 3, temporary and lock files removed).
pub fn ignore_file_size_signal() {
    // SAFETY: setting a signal's disposition to SIG_IGN installs no handler code; it is done
    // before any thread of ours starts.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// Why the stops cannot be watched: the system refused signal-hook's registration, or the
/// watcher thread. Either way no signal would reach the experiments, so nothing is started.
#[derive(Debug)]
pub enum InstallError {
    Handlers(std::io::Error),
    Watcher(std::io::Error),
}

impl std::fmt::Display for InstallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InstallError::Handlers(e) => write!(f, "cannot install the signal handlers: {e}"),
            InstallError::Watcher(e) => write!(f, "cannot start the signal watcher: {e}"),
        }
    }
}

impl std::error::Error for InstallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InstallError::Handlers(e) | InstallError::Watcher(e) => Some(e),
        }
    }
}

/// Installs the handlers and starts the watcher thread.
pub fn install() -> Result<(), InstallError> {
    // SIGCONT is watched, not a stop: it ends a job-control stop, which makes the run in progress
    // a disturbed one (`schedlab_benches::driver::stopped`).
    let mut signals = SignalsInfo::<WithOrigin>::new([SIGINT, SIGTERM, SIGHUP, SIGCONT])
        .map_err(InstallError::Handlers)?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let mut first: Option<Stop> = None;
            for origin in signals.forever() {
                let signal = origin.signal;
                if signal == SIGCONT {
                    schedlab_benches::driver::stopped::continued();
                    continue;
                }
                let stop = Stop { at: Instant::now(), sender: origin.process.map(|p| p.pid) };
                if let Some(first) = first {
                    if !is_second_stop(first, stop) {
                        tracing::debug!(
                            "{}: the same stop again (sender {:?})",
                            name(signal),
                            stop.sender
                        );
                        continue;
                    }
                    crate::out::error(format_args!(
                        "{}: second signal, stopping at once (sender {:?}, first {:?})",
                        name(signal),
                        stop.sender,
                        first.sender
                    ));
                    schedlab_benches::files::output::remove_temporary_files();
                    // What `schedlab kernel` changed on the machine (nothing for the others).
                    schedlab_benches::experiment::kernel::system::undo_own_ledger();
                    std::process::exit(exit_code(signal).into());
                }
                first = Some(stop);
                RECEIVED.store(signal, Ordering::SeqCst);
                INTERRUPT.store(true, Ordering::SeqCst);
                crate::out::warning(format_args!(
                    "{}: stopping; what finished is kept (a second signal stops at once)",
                    name(signal)
                ));
            }
        })
        .map(drop)
        .map_err(InstallError::Watcher)
}

/// The first signal received, if any.
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(base: Instant, ms: u64, sender: Option<i32>) -> Stop {
        Stop { at: base + Duration::from_millis(ms), sender }
    }

    #[test]
    fn a_supervisor_signalling_child_then_group_is_one_stop() {
        let t = Instant::now();
        // `timeout`: the child, then the process group, from one sender.
        assert!(!is_second_stop(at(t, 0, Some(42)), at(t, 0, Some(42))));
        // The same sender later (a supervisor repeating itself) is still the same stop.
        assert!(!is_second_stop(at(t, 0, Some(42)), at(t, 5_000, Some(42))));
        // Two senders reacting to one event within the window: one stop.
        assert!(!is_second_stop(at(t, 0, Some(42)), at(t, 10, Some(43))));
    }

    #[test]
    fn a_deliberate_second_ctrl_c_is_a_second_stop() {
        let t = Instant::now();
        // Ctrl-C twice from the terminal (the kernel sends it: no sender), a second apart.
        assert!(is_second_stop(at(t, 0, None), at(t, 1_000, None)));
        // Another process's signal after the window.
        assert!(is_second_stop(at(t, 0, Some(42)), at(t, 400, Some(7))));
        // A key bounce within the window is not.
        assert!(!is_second_stop(at(t, 0, None), at(t, 50, None)));
    }
}

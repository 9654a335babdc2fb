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
//! A second signal ends the process at once with its own code, writing nothing more.
//!
//! The handlers are signal-hook's: a watcher thread receives the signals (no code of ours runs
//! in signal context), records the first, and sets [`crate::INTERRUPT`], which every driver polls.

use schedlab_core::sync::Ordering;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::sync::atomic::AtomicI32;

static RECEIVED: AtomicI32 = AtomicI32::new(0);

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

/// Installs the handlers and starts the watcher thread.
pub fn install() -> Result<(), String> {
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .map_err(|e| format!("cannot install the signal handlers: {e}"))?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if RECEIVED.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst).is_err() {
                    tracing::error!("{}: second signal, stopping at once", name(signal));
                    schedlab_benches::output::remove_temporary_files();
                    // What `schedlab kernel` changed on the machine (nothing for the others).
                    schedlab_benches::kernel::system::undo_own_ledger();
                    std::process::exit(exit_code(signal).into());
                }
                crate::INTERRUPT.store(true, Ordering::SeqCst);
                tracing::warn!("{}: stopping; what finished is kept (a second signal stops at once)", name(signal));
            }
        })
        .map(drop)
        .map_err(|e| format!("cannot start the signal watcher: {e}"))
}

/// The first signal received, if any.
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

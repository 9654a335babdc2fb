//! Standard output that cannot panic: `println!` panics when stdout is full (`> /dev/full`) or
//! gone; [`outln!`] and [`out!`] record the first error instead, stop writing, and let `main`
//! report it as one line with exit code 3. A closed pipe (`schedlab ... | head`) only stops the
//! printing: the work goes on and its files are still written.

use std::io::Write;
use std::sync::Mutex;

static ERROR: Mutex<Option<String>> = Mutex::new(None);
static CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn keep(e: std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
        return;
    }
    if let Ok(mut slot) = ERROR.lock() {
        slot.get_or_insert_with(|| e.to_string());
    }
    CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Writes to stdout unless an earlier write failed.
pub fn write(args: std::fmt::Arguments<'_>) {
    if CLOSED.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args) {
        keep(e);
    }
}

/// Flushes stdout; the first error of the whole run, if any (a closed pipe is not one).
pub fn finish() -> Option<String> {
    if !CLOSED.load(std::sync::atomic::Ordering::Relaxed) {
        if let Err(e) = std::io::stdout().lock().flush() {
            keep(e);
        }
    }
    ERROR.lock().ok().and_then(|e| e.clone())
}

/// `print!` that never panics (see the module documentation).
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write(format_args!($($arg)*)) };
}

/// `println!` that never panics (see the module documentation).
macro_rules! outln {
    () => { $crate::out::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::write(format_args!("{}\n", format_args!($($arg)*))) };
}

/// A progress or status line on stderr (never fails: a closed stderr only loses the line).
pub fn progress(args: std::fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// Says why something failed: `schedlab: MESSAGE` on stderr, whatever the log filter
/// (`RUST_LOG=off`, or one that names only a dependency): a reason is not a log event. Kept for
/// `--report`'s warnings section, and logged at debug for a `-v` timeline.
pub fn error(message: impl std::fmt::Display) {
    say("", &message.to_string());
}

/// A warning the user must see (a flag without effect, a stop asked for): as [`error`], with
/// `warning: ` before it.
pub fn warning(message: impl std::fmt::Display) {
    say("warning: ", &message.to_string());
}

thread_local! {
    /// Warnings said by this thread: lets the generated test of the flags (`flag_props.rs`) see
    /// that an option without effect was said to be so.
    static WARNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many warnings this thread has said.
#[cfg(test)]
pub fn warned() -> usize {
    WARNED.with(|w| w.get())
}

fn say(level: &str, message: &str) {
    if !level.is_empty() {
        WARNED.with(|w| w.set(w.get() + 1));
    }
    let _ = writeln!(std::io::stderr().lock(), "schedlab: {level}{message}");
    crate::report_out::keep(format!("{}: {message}", if level.is_empty() { "error" } else { "warning" }));
    tracing::debug!(target: "schedlab::said", "{level}{message}");
}

/// Writes `value` as pretty JSON and a newline to `file`; true when written. A failure is logged
/// once here and added to `failures` as an output failure (its message already printed).
pub fn json(file: &schedlab_benches::files::output::OutputFile, value: &impl serde::Serialize, failures: &mut schedlab_benches::experiment::Failures) -> bool {
    let written = match serde_json::to_string_pretty(value) {
        Ok(text) => crate::write_output(file, (text + "\n").as_bytes()),
        Err(e) => {
            error(format_args!("cannot serialise {}: {e}", file.path().display()));
            false
        }
    };
    if !written {
        failures.add(crate::ExperimentError::output_failed(String::new()));
    }
    written
}

/// Writes a drawn chart to `file` and says `wrote PATH`; a chart that could not be drawn or
/// written is an output failure added to `failures` (the reason logged or in its message).
pub fn svg(file: &schedlab_benches::files::output::OutputFile, drawn: Result<String, String>, failures: &mut schedlab_benches::experiment::Failures) {
    match drawn {
        Ok(text) if crate::write_output(file, text.as_bytes()) => outln!("wrote {}", file.path().display()),
        Ok(_) => failures.add(crate::ExperimentError::output_failed(String::new())),
        // Stopped before anything was measured: nothing to draw is the stop's doing, said, and
        // the stop's exit code stands (not an output failure's).
        Err(e) if crate::signals::received().is_some() => warning(format_args!("{} not written: {e}", file.path().display())),
        Err(e) => failures.add(crate::ExperimentError::output_failed(e)),
    }
}

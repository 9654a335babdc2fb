//! Standard output that cannot panic: `println!` panics when stdout is full (`> /dev/full`) or
//! gone; [`outln!`] and [`out!`] record the first error instead, stop writing, and let `main`
//! report it as one line with exit code 3. A closed pipe (`schedlab ... | head`) only stops the
//! printing: the work goes on and its files are still written.
//!
//! The bottom of the CLI's stages (`main.rs`): it imports nothing of the CLI. Every warning and
//! error said here or logged (`logging.rs`) is also kept ([`keep`], [`kept`]) for `--report`'s
//! warnings section (`report_out.rs`).

use std::io::Write;
use std::sync::Mutex;

static ERROR: Mutex<Option<String>> = Mutex::new(None);

/// Every warning and error said or logged so far, as printed (`message key=value ...`), in order.
static KEPT: Mutex<Vec<String>> = Mutex::new(Vec::new());
static CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn keep_error(e: std::io::Error) {
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
        keep_error(e);
    }
}

/// Flushes stdout; the first error of the whole run, if any (a closed pipe is not one).
pub fn finish() -> Option<String> {
    if !CLOSED.load(std::sync::atomic::Ordering::Relaxed) {
        if let Err(e) = std::io::stdout().lock().flush() {
            keep_error(e);
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
    keep(format!("{}: {message}", if level.is_empty() { "error" } else { "warning" }));
    tracing::debug!(target: "schedlab::said", "{level}{message}");
}

/// Keeps a warning or an error line for the report.
pub fn keep(line: String) {
    if let Ok(mut kept) = KEPT.lock() {
        kept.push(line);
    }
}

/// The warnings and errors said or logged so far.
pub fn kept() -> Vec<String> {
    KEPT.lock().map(|k| k.clone()).unwrap_or_default()
}

/// One line for a panic (the default hook prints several, with a backtrace hint). A panic is a
/// bug: the driver turns one in a job thread into a failed run.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line()));
        let at = at.unwrap_or_default();
        let thread = std::thread::current().name().map(|n| format!(" in thread {n}"));
        let thread = thread.unwrap_or_default();
        let first = msg.lines().next().unwrap_or("");
        let _ = writeln!(std::io::stderr(), "schedlab: internal error{thread}: {first}{at}");
    }));
}

/// Whether the command was started with its standard output closed (`>&-`). Rust's runtime
/// reopens a closed standard descriptor on `/dev/null` before `main` (read and write, so that no
/// file the command opens takes its number), which hides the closing; a shell's `>/dev/null`
/// opens it write-only. So a standard output that is `/dev/null` opened for reading and writing
/// was closed (or given as `1<>/dev/null`, which prints nothing either).
pub fn stdout_was_closed() -> bool {
    use std::os::unix::fs::FileTypeExt;
    // SAFETY: F_GETFL reads a descriptor's flags; no memory is involved.
    let flags = unsafe { libc::fcntl(1, libc::F_GETFL) };
    let is_dev_null = |m: std::fs::Metadata, null: std::fs::Metadata| {
        use std::os::unix::fs::MetadataExt;
        m.file_type().is_char_device() && m.rdev() == null.rdev()
    };
    let same = match (std::fs::metadata("/proc/self/fd/1"), std::fs::metadata("/dev/null")) {
        (Ok(m), Ok(null)) => is_dev_null(m, null),
        _ => false,
    };
    flags != -1 && flags & libc::O_ACCMODE == libc::O_RDWR && same
}

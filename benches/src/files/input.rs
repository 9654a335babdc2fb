//! Input files that cannot hang the tool or exhaust its memory.
//!
//! Every file a command reads (a trace, a calibration, a topology, a folded-stacks file, a sweep's
//! CSV to resume) goes through [`read_input`]:
//! - a regular file larger than the input's cap is refused before it is read, with one line naming
//!   the size and the cap; anything else readable (a FIFO, `/dev/stdin`, a character device) is read
//!   up to the cap and refused past it, so `/dev/zero` is an error, not an endless read;
//! - a directory is refused;
//! - the read runs on its own thread while the caller polls the stop flag every
//!   [`STOP_POLL`]: a FIFO whose writer never comes, or a terminal nobody types into, gives way
//!   to SIGINT within a fraction of a second (the blocked thread is left to the process's exit);
//! - the bytes must be UTF-8 (every input here is text).
//!
//! Errors are [`ExperimentError`]s: bad input (exit 2, before any work), or stopped.

use crate::error::ExperimentError;
use schedlab_core::sync::{AtomicBool, Ordering};
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// How often a read in progress looks at the stop flag.
pub const STOP_POLL: Duration = Duration::from_millis(100);

/// Caps, by kind of input: far above anything the tool writes, far below what would exhaust the
/// memory a parse of it needs.
pub mod caps {
    /// A trace of `run --trace` (a long window of every span is tens of MiB).
    pub const TRACE: u64 = 512 << 20;
    /// Folded stacks (one line per distinct stack).
    pub const FOLDED: u64 = 256 << 20;
    /// A calibration or topology JSON file.
    pub const MODEL_JSON: u64 = 16 << 20;
    /// A sweep's CSV (one line per point).
    pub const CSV: u64 = 64 << 20;
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// Reads the whole of `path` as text, at most `cap` bytes, giving way to `stop` (see the module
/// documentation). `what` names the input in messages ("trace", "calibration").
pub fn read_input(
    path: &Path,
    what: &str,
    cap: u64,
    stop: &AtomicBool,
) -> Result<String, ExperimentError> {
    let shown = path.display().to_string();
    let bad = |detail: String| {
        ExperimentError::bad_input(format!("cannot read {what} {shown}: {detail}"))
    };
    let meta = std::fs::metadata(path).map_err(|e| bad(e.to_string()))?;
    if meta.is_dir() {
        return Err(bad("it is a directory".into()));
    }
    if meta.is_file() && meta.len() > cap {
        return Err(bad(format!(
            "it is {}, more than the {} a {what} may be",
            mib(meta.len()),
            mib(cap)
        )));
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let owned = path.to_path_buf();
    std::thread::Builder::new()
        .name("input".into())
        .spawn(move || {
            let read = std::fs::File::open(&owned).and_then(|file| {
                let mut bytes = Vec::new();
                file.take(cap + 1).read_to_end(&mut bytes).map(|_| bytes)
            });
            let _ = tx.send(read);
        })
        .map_err(|e| bad(format!("cannot start the reader: {e}")))?;
    let bytes = loop {
        match rx.recv_timeout(STOP_POLL) {
            Ok(read) => break read.map_err(|e| bad(e.to_string()))?,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if stop.load(Ordering::Relaxed) {
                    return Err(ExperimentError::stopped(format!(
                        "stopped while reading {what} {shown}"
                    )));
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(bad("the reader failed".into()))
            }
        }
    };
    if bytes.len() as u64 > cap {
        return Err(bad(format!("it holds more than the {} a {what} may be", mib(cap))));
    }
    String::from_utf8(bytes)
        .map_err(|e| bad(format!("it is not UTF-8 text (byte {})", e.utf8_error().valid_up_to())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_over_its_cap_is_refused_and_one_under_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        std::fs::write(&path, "0123456789").unwrap();
        let stop = AtomicBool::new(false);
        assert_eq!(read_input(&path, "trace", 10, &stop).unwrap(), "0123456789");
        let e = read_input(&path, "trace", 9, &stop).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.message.contains("more than"), "{e}");
        let e = read_input(dir.path(), "trace", 9, &stop).unwrap_err();
        assert!(e.message.contains("directory"), "{e}");
        std::fs::write(&path, [0xffu8, 0xfe]).unwrap();
        assert!(read_input(&path, "trace", 10, &stop).unwrap_err().message.contains("UTF-8"));
    }

    #[test]
    fn an_endless_device_is_read_up_to_the_cap_only() {
        let stop = AtomicBool::new(false);
        let e = read_input(Path::new("/dev/zero"), "trace", 1 << 16, &stop).unwrap_err();
        assert!(e.message.contains("more than"), "{e}");
    }

    #[test]
    fn a_fifo_without_a_writer_gives_way_to_the_stop_flag() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path for the whole call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // The flag is already set: whenever the read is seen to wait, it gives way.
        let stop = AtomicBool::new(true);
        let e = read_input(&fifo, "trace", 1 << 16, &stop).unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::Stopped, "{e}");
        // Unblock the reader thread left behind if it is waiting (open for writing, then close:
        // EOF); without a reader waiting the open fails at once instead of blocking the test.
        use std::os::unix::fs::OpenOptionsExt;
        drop(std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(&fifo));
    }
}

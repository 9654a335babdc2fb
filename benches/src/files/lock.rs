//! Advisory locks on outputs: two processes must not write one file at once (two `sweep
//! --resume` on one CSV would each rewrite it from their own rows, and each report points as
//! written that the other's rename then drops).
//!
//! An output replaced by rename changes inode at every write, so the lock cannot be on the file
//! itself: it is on a lock file beside it, `.NAME.schedlab-lock`, taken with fs4's `flock`
//! before any work and held until the process ends. A second process finds it held and refuses
//! (one line naming the holder's pid, exit 2) instead of racing. The lock file is removed by
//! its holder while still locked; a process that locked a file which was removed meanwhile sees
//! that the path no longer names it and tries again, so two processes never both hold "the" lock.
//! A holder killed by SIGKILL leaves the file behind, unlocked: the next process takes it.

use fs4::{FileExt, TryLockError};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The locks this process holds, released (their files removed) by [`release_all`].
static HELD: Mutex<Vec<Held>> = Mutex::new(Vec::new());

struct Held {
    path: PathBuf,
    /// Open and locked until dropped.
    _file: File,
}

/// The lock file's name for an output named `name`: within the 255 bytes a name may have (a
/// long name is shortened and a hash of the whole added, so that two long names stay apart).
fn lock_name(name: &std::ffi::OsStr) -> std::ffi::OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let bytes = name.as_bytes();
    let mut out = b".".to_vec();
    if bytes.len() > 200 {
        // FNV-1a: stable across runs and versions (a process-seeded hasher would not be).
        let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        out.extend_from_slice(&bytes[..180]);
        out.extend_from_slice(format!("-{hash:016x}").as_bytes());
    } else {
        out.extend_from_slice(bytes);
    }
    out.extend_from_slice(b".schedlab-lock");
    std::ffi::OsString::from_vec(out)
}

/// Takes the lock of the output `target` (a file, or a directory the command writes into) for
/// the rest of the process; `shown` names it in messages. Nothing is locked when `target`'s
/// directory does not exist yet (a directory made by the command itself).
pub fn lock_output(target: &Path, shown: &Path) -> Result<(), String> {
    let (Some(name), dir) = (target.file_name(), target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))) else {
        return Ok(());
    };
    if !dir.is_dir() {
        return Ok(());
    }
    let path = dir.join(lock_name(name));
    let mut held = HELD.lock().map_err(|_| "internal: the output locks were poisoned".to_string())?;
    if held.iter().any(|h| h.path == path) {
        return Ok(());
    }
    for _ in 0..100 {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| format!("cannot write {}: cannot make its lock file {}: {e}", shown.display(), path.display()))?;
        match FileExt::try_lock(&file) {
            Ok(()) => {}
            Err(TryLockError::Error(e)) => return Err(format!("cannot write {}: cannot lock {}: {e}", shown.display(), path.display())),
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let by = if holder.is_empty() { "another process".to_string() } else { format!("process {holder}") };
                return Err(format!("cannot write {}: {by} is writing it now (its lock {} is held); wait for it to finish", shown.display(), path.display()));
            }
        }
        // The path must still name the file locked: its holder may have removed it just before
        // letting go, and another process made a new one.
        let same = match (file.metadata(), std::fs::metadata(&path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        };
        if same {
            let _ = file.set_len(0).and_then(|()| write!(file, "{}", std::process::id()));
            held.push(Held { path, _file: file });
            return Ok(());
        }
    }
    Err(format!("cannot write {}: its lock file {} keeps being replaced", shown.display(), path.display()))
}

/// Releases every lock this process holds: each lock file is removed while still locked, then
/// closed (see the module documentation).
pub fn release_all() {
    if let Ok(mut held) = HELD.lock() {
        for h in held.drain(..) {
            let _ = std::fs::remove_file(&h.path);
            drop(h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_get_lock_files_within_the_name_limit() {
        let long = "x".repeat(255);
        let name = lock_name(std::ffi::OsStr::new(&long));
        assert!(name.len() <= 255, "{}", name.len());
        assert_ne!(name, lock_name(std::ffi::OsStr::new(&"x".repeat(254))));
        assert_eq!(lock_name(std::ffi::OsStr::new("s.csv")), ".s.csv.schedlab-lock");
    }

    #[test]
    fn a_held_lock_is_refused_to_another_holder_and_freed_by_release() {
        // Another open file description stands for another process (flock locks are per
        // description).
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("s.csv");
        let lock = dir.path().join(".s.csv.schedlab-lock");
        let other = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&lock).unwrap();
        FileExt::try_lock(&other).unwrap();
        std::fs::write(&lock, "4242").unwrap();
        let e = lock_output(&target, &target).unwrap_err();
        assert!(e.contains("process 4242") && e.contains("s.csv"), "{e}");
        FileExt::unlock(&other).unwrap();
        drop(other);
        lock_output(&target, &target).unwrap();
        assert!(lock.exists());
        release_all();
        assert!(!lock.exists(), "the lock file goes with the lock");
    }
}

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
//!
//! The lock file's name is known in advance, often in a directory others may write to (`/tmp`),
//! and the tool often runs as root: a name planted there must never be followed (issue 43). The
//! file is made with `O_CREAT|O_EXCL|O_NOFOLLOW`, or, when one is there already, opened with
//! `O_NOFOLLOW|O_NONBLOCK` and taken only when it is a regular file of this user with one link
//! (a lock file a dead run of ours left); a symbolic link, a FIFO or any other kind of file, a
//! file of another user or a hard link is refused before the work, one line naming it and its
//! owner ([`planted`]).

use crate::error::ExperimentError;
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
        let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
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
pub fn lock_output(target: &Path, shown: &Path) -> Result<(), ExperimentError> {
    let (Some(name), dir) = (
        target.file_name(),
        target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")),
    ) else {
        return Ok(());
    };
    if !dir.is_dir() {
        return Ok(());
    }
    let path = dir.join(lock_name(name));
    let poisoned = |_| ExperimentError::bad_input("internal: the output locks were poisoned");
    let mut held = HELD.lock().map_err(poisoned)?;
    if held.iter().any(|h| h.path == path) {
        return Ok(());
    }
    for _ in 0..100 {
        let mut file = open_lock_file(&path, shown)?;
        match FileExt::try_lock(&file) {
            Ok(()) => {}
            Err(TryLockError::Error(e)) => {
                let (shown, path) = (shown.display(), path.display());
                let refused = format!("cannot write {shown}: cannot lock {path}: {e}");
                return Err(ExperimentError::bad_input(refused));
            }
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let by = if holder.is_empty() {
                    "another process".to_string()
                } else {
                    format!("process {holder}")
                };
                let (shown, path) = (shown.display(), path.display());
                let busy = format!("{by} is writing it now (its lock {path} is held)");
                let refused = format!("cannot write {shown}: {busy}; wait for it to finish");
                return Err(ExperimentError::bad_input(refused));
            }
        }
        // The path must still name the file locked: its holder may have removed it just before
        // letting go, and another process made a new one (looked at, never followed).
        let same = match (file.metadata(), std::fs::symlink_metadata(&path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        };
        if same {
            let _ = file.set_len(0).and_then(|()| write!(file, "{}", std::process::id()));
            held.push(Held { path, _file: file });
            return Ok(());
        }
    }
    let (shown, path) = (shown.display(), path.display());
    let refused = format!("cannot write {shown}: its lock file {path} keeps being replaced");
    Err(ExperimentError::bad_input(refused))
}

/// The name of the user `uid` (from the user database), else `uid N`.
pub fn user_name(uid: u32) -> String {
    let mut record = std::mem::MaybeUninit::<libc::passwd>::uninit();
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    let mut buffer = vec![0 as libc::c_char; 4096];
    // SAFETY: every pointer is valid for the call: `record` and `found` are ours, `buffer` is
    // `buffer.len()` bytes long; getpwuid_r writes only into them.
    let rc = unsafe {
        libc::getpwuid_r(uid, record.as_mut_ptr(), buffer.as_mut_ptr(), buffer.len(), &mut found)
    };
    if rc != 0 || found.is_null() {
        return format!("uid {uid}");
    }
    // SAFETY: getpwuid_r succeeded and set `found` to `record`, whose `pw_name` points into
    // `buffer` (alive here) at a NUL-terminated string.
    let name = unsafe { std::ffi::CStr::from_ptr((*found).pw_name) };
    format!("{} (uid {uid})", name.to_string_lossy())
}

/// Why an existing file at a lock file's name is not one this process may take, if it is not:
/// anything but a regular file of this (effective) user with one link. `None`: it may be taken.
pub fn planted(metadata: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    let t = metadata.file_type();
    let kind = if t.is_symlink() {
        "a symbolic link"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if !t.is_file() {
        "not a regular file"
    } else {
        ""
    };
    let owner = user_name(metadata.uid());
    if !kind.is_empty() {
        return Some(format!("it is {kind} owned by {owner}, never followed"));
    }
    // SAFETY: geteuid reads the process's credentials; no memory is involved.
    let me = unsafe { libc::geteuid() };
    if metadata.uid() != me {
        return Some(format!("it is a file owned by {owner}, not by this user"));
    }
    if metadata.nlink() != 1 {
        let links = metadata.nlink();
        return Some(format!("it is a file owned by {owner} with {links} names (a hard link)"));
    }
    None
}

/// Opens the lock file at `path` without ever following a link or waiting on a FIFO: made new
/// (`O_EXCL`), or an existing one that [`planted`] accepts; anything else is refused.
fn open_lock_file(path: &Path, shown: &Path) -> Result<File, ExperimentError> {
    use std::os::unix::fs::OpenOptionsExt;
    let cannot = |why: String| {
        let (shown, path) = (shown.display(), path.display());
        ExperimentError::bad_input(format!("cannot write {shown}: its lock file {path} {why}"))
    };
    let new = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let file = match new {
        Ok(file) => return Ok(file),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            // Refused on what lies there before it is opened (a link is never opened)...
            let there = std::fs::symlink_metadata(path)
                .map_err(|e| cannot(format!("cannot be read: {e}")))?;
            if let Some(why) = planted(&there) {
                return Err(cannot(format!("is refused: {why}")));
            }
            OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                .open(path)
                .map_err(|e| cannot(format!("cannot be opened: {e}")))?
        }
        Err(e) => return Err(cannot(format!("cannot be made: {e}"))),
    };
    // ... and on what was opened (it may have been swapped in between).
    let opened = file.metadata().map_err(|e| cannot(format!("cannot be read: {e}")))?;
    match planted(&opened) {
        Some(why) => Err(cannot(format!("is refused: {why}"))),
        None => Ok(file),
    }
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

    /// The tests share the process's list of held locks ([`release_all`] empties it): one at a
    /// time.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

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
        let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        // Another open file description stands for another process (flock locks are per
        // description).
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("s.csv");
        let lock = dir.path().join(".s.csv.schedlab-lock");
        let other = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock)
            .unwrap();
        FileExt::try_lock(&other).unwrap();
        std::fs::write(&lock, "4242").unwrap();
        let e = lock_output(&target, &target).unwrap_err().message;
        assert!(e.contains("process 4242") && e.contains("s.csv"), "{e}");
        FileExt::unlock(&other).unwrap();
        drop(other);
        lock_output(&target, &target).unwrap();
        assert!(lock.exists());
        release_all();
        assert!(!lock.exists(), "the lock file goes with the lock");
    }

    /// Issue 43: a name planted at the lock file's place (a link to a file of someone else, a
    /// FIFO, a file of another user, a hard link) is refused, named with its owner, and the
    /// file it leads to is left as it was; a lock file of ours left by a dead run is taken.
    #[test]
    fn a_planted_lock_name_is_refused_and_never_followed() {
        use std::os::unix::fs::MetadataExt;
        let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.json");
        let lock = dir.path().join(".out.json.schedlab-lock");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let check = |what: &str, wanted: &str| {
            let e = lock_output(&target, &target).unwrap_err().message;
            assert!(e.contains(&lock.display().to_string()) && e.contains(wanted), "{what}: {e}");
            assert!(e.contains("owned by"), "{what}: the owner is said: {e}");
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious", "{what}");
            std::fs::remove_file(&lock).unwrap();
        };
        std::os::unix::fs::symlink(&victim, &lock).unwrap();
        check("a symlink", "symbolic link");
        std::os::unix::fs::symlink(dir.path().join("missing"), &lock).unwrap();
        let e = lock_output(&target, &target).unwrap_err().message;
        assert!(e.contains("symbolic link"), "{e}");
        assert!(!dir.path().join("missing").exists(), "a dangling link is not followed either");
        std::fs::remove_file(&lock).unwrap();
        let c = std::ffi::CString::new(lock.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path for the whole call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
        check("a FIFO", "a FIFO");
        std::fs::hard_link(&victim, &lock).unwrap();
        check("a hard link", "hard link");
        // SAFETY: geteuid reads the process's credentials.
        if unsafe { libc::geteuid() } == 0 {
            std::fs::write(&lock, "").unwrap();
            std::os::unix::fs::chown(&lock, Some(65534), Some(65534)).unwrap();
            check("another user's file", "not by this user");
        } else {
            println!("not root: another user's file cannot be made here");
        }
        // A lock file of ours that a dead run left (unlocked, a stale pid inside) is taken.
        std::fs::write(&lock, "999999").unwrap();
        lock_output(&target, &target).unwrap();
        let pid = std::fs::read_to_string(&lock).unwrap();
        assert_eq!(pid, std::process::id().to_string());
        assert_eq!(std::fs::metadata(&lock).unwrap().nlink(), 1);
        release_all();
        assert!(!lock.exists());
    }
}

//! What `schedlab kernel` changes on the machine, and how every change is put back.
//!
//! Every change is written to a ledger (`/run/schedlab-kernel/<pid>-<start time>.json`, in a
//! directory only root may enter) *before* it is made, and the identity of what was made (device
//! and inode of a file, directory or cgroup; the loop device's number and its backing file's
//! identity; a process's pid and start time) as soon as it exists. Whatever stops the process,
//! the next run (or `schedlab kernel --cleanup`) finds the ledger of a dead run and puts back
//! what it recorded *and still matches*; nothing is removed, detached or signalled by its name:
//!
//! - a private directory in the tmpfs (`/dev/shm/schedlab-kernel-<pid>-<random>`, mode 0700):
//!   made by `mkdir`, which never follows a link and fails on any existing name; removed
//!   (`rmdir`) only while its inode is the one made;
//! - a sparse backing file in it: made `O_CREAT | O_EXCL | O_NOFOLLOW`; unlinked only while its
//!   inode is the one made;
//! - a loop device over it: `losetup -f`, then checked to be over the run's file; detached with
//!   `LOOP_CLR_FD` on a descriptor whose backing inode was checked to be the run's, then a bounded
//!   wait until the kernel has unbound it;
//! - a device's scheduler and its iosched knobs: the queue of the device number
//!   (`/sys/dev/block/MAJ:MIN/queue`), under an exclusive lock per `--device`; put back by writing
//!   the old values (a loop device's only while it is still the run's);
//! - cgroups `schedlab-kernel-<pid>/…` (blkio v1 or io v2, and v1's cpuacct): `mkdir`, an existing
//!   name refused; removed only while its inode is the one made and it holds no process this
//!   tool did not start;
//! - fio and its job processes: (pid, start time) recorded; SIGKILL only to a recorded (pid,
//!   start time) that still matches.
//!
//! The full inventory, with every other file the tool writes, is [`INVENTORY`] (and
//! `notes/reliability.md`, checked against it).
//!
//! One thing is left as it is found after a run: where tracefs was not mounted, the preflight
//! mounts it at `/sys/kernel/tracing` (bpftrace needs the lock tracepoints there). It holds no
//! state of the run and changes nothing of the block layer, so it is not unmounted.
//!
//! fio, bpftrace and perf are started with `PR_SET_PDEATHSIG`, so that they end with the process
//! that started them; fio's job processes (which call `setsid()`) are recorded in the ledger.

use crate::error::failed;
use crate::error::ExperimentError;
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A set-up error: a refusal (bad input, exit 2) as it is; a failure said as the set-up's.
pub(crate) fn setup_failed(e: ExperimentError) -> ExperimentError {
    match e.kind {
        crate::error::ErrorKind::BadInput => e,
        _ => failed(format!("set-up failed: {e}")),
    }
}

/// Where ledgers and device locks live: root's own directory (mode 0700).
pub const STATE_DIR: &str = "/run/schedlab-kernel";
/// Every name this tool gives (directories, cgroups) starts with this, followed by the owner's pid.
pub const PREFIX: &str = "schedlab-kernel-";
/// The tmpfs that holds the private directory of backing files.
pub const TMPFS_DIR: &str = "/dev/shm";

/// A refusal before the work (exit 2): what is there is not this run's to touch (another run's
/// device, someone's cgroup or directory), said with its owner.
fn refused(message: impl Into<String>) -> ExperimentError {
    ExperimentError::bad_input(message)
}

/// What an object of the inventory is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Directory,
    File,
    Lock,
    LoopDevice,
    Scheduler,
    Cgroup,
    Process,
    Mount,
}

impl Class {
    pub const ALL: [Class; 8] = [
        Class::Directory,
        Class::File,
        Class::Lock,
        Class::LoopDevice,
        Class::Scheduler,
        Class::Cgroup,
        Class::Process,
        Class::Mount,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::Directory => "directory",
            Class::File => "file",
            Class::Lock => "lock",
            Class::LoopDevice => "loop device",
            Class::Scheduler => "scheduler setting",
            Class::Cgroup => "cgroup",
            Class::Process => "process",
            Class::Mount => "mount",
        }
    }
}

/// One thing the tool creates, opens for writing, changes, removes or signals with privilege.
#[derive(Clone, Copy, Debug)]
pub struct Privileged {
    /// What it is and where (the first column of the notes' table, word for word).
    pub what: &'static str,
    pub class: Class,
    /// What the tool does to it.
    pub does: &'static str,
    /// What makes it safe, with the function that does it.
    pub safe_by: &'static str,
    /// The tests that fail without that mechanism (`file::test_name`).
    pub tests: &'static [&'static str],
}

/// Everything `schedlab kernel` (as root) does with privilege. `notes/reliability.md`'s section
/// "What the tool does with privilege" lists the same rows (checked by a test), and every row
/// names tests that exist and run (checked by a test, per class).
pub const INVENTORY: &[Privileged] = &[
    Privileged {
        what: "the run directory /run/schedlab-kernel",
        class: Class::Directory,
        does: "made (mode 0700), or tightened to 0700",
        safe_by: "`private_dir`: made by mkdir, never followed; an existing one must be a \
            directory owned by root and not writable by others, else refused (exit 2, its owner \
            said)",
        tests: &["system.rs::a_state_dir_that_is_a_link_or_anothers_is_refused_naming_its_owner"],
    },
    Privileged {
        what: "a run's ledger <pid>-<start>.json and its .tmp",
        class: Class::File,
        does: "written, renamed into place, removed",
        safe_by: "inside the run directory only root may enter; the .tmp opened O_NOFOLLOW; a \
            ledger is read back and acted on only when its run is dead (`run_alive`: pid and \
            start time)",
        tests: &[
            "system.rs::a_run_is_alive_only_with_its_pid_and_its_start_time",
            "system.rs::cleanup_acts_only_on_the_ledgers_of_dead_runs",
        ],
    },
    Privileged {
        what: "a lock per --device, device-MAJ:MIN.lock in the run directory",
        class: Class::Lock,
        does: "made, flock(LOCK_EX) held for the run, left in place",
        safe_by: "`lock_device`: opened O_NOFOLLOW inside the run directory; a second run on the \
            device is refused (exit 2, one line)",
        tests: &["cli_kernel.rs::a_second_run_on_a_locked_device_is_refused_in_one_line"],
    },
    Privileged {
        what: "the private directory /dev/shm/schedlab-kernel-<pid>-<random>",
        class: Class::Directory,
        does: "made (mode 0700), removed",
        safe_by: "`make_private_dir`: mkdir of a fresh random name (an existing name is never \
            used), recorded with its inode; removed only while its inode is the one made",
        tests: &[
            "system.rs::a_recorded_directory_replaced_by_another_is_left",
            "cli_kernel.rs::links_and_fifos_planted_at_the_old_backing_name_are_never_followed",
        ],
    },
    Privileged {
        what: "the backing file backing.img in the private directory",
        class: Class::File,
        does: "made, sized, removed",
        safe_by: "`make_loop_device`: O_CREAT|O_EXCL|O_NOFOLLOW inside the 0700 directory; \
            removed only while its inode is the one made",
        tests: &[
            "system.rs::a_recorded_file_replaced_by_another_or_by_a_link_is_left",
            "cli_kernel.rs::links_and_fifos_planted_at_the_old_backing_name_are_never_followed",
        ],
    },
    Privileged {
        what: "a loop device over the backing file",
        class: Class::LoopDevice,
        does: "attached (losetup -f), its scheduler switched, detached",
        safe_by: "`detach_loops_over`: LOOP_CLR_FD only on a descriptor whose LOOP_GET_STATUS64 \
            shows the recorded backing (device, inode); holders are never signalled",
        tests: &[
            "system.rs::a_detach_returns_only_once_the_last_holder_let_the_device_go",
            "system.rs::a_detach_never_signals_a_holder_it_did_not_record",
            "cli_kernel.rs::cleanup_leaves_decoys_named_like_its_own",
        ],
    },
    Privileged {
        what: "a device's scheduler and iosched knobs",
        class: Class::Scheduler,
        does: "switched (none, mq-deadline, bfq), knobs set, put back",
        safe_by: "`BlockDevice::open`: --device resolved by st_rdev to /sys/dev/block/MAJ:MIN; \
            not a whole block device with a scheduler, or size 0, is refused (exit 2); \
            `lock_device` keeps a second run off it; a dead run's setting is put back before the \
            next records its own",
        tests: &[
            "system.rs::a_device_is_judged_by_what_it_is_not_by_its_name",
            "system.rs::the_setting_put_back_is_the_one_seen_before_the_first_run",
            "cli_kernel.rs::a_file_named_after_a_device_is_refused_before_the_work",
        ],
    },
    Privileged {
        what: "cgroups schedlab-kernel-<pid> and their groups g<i>",
        class: Class::Cgroup,
        does: "made, weights written, processes joined, removed",
        safe_by: "`make_cgroups`: mkdir, an existing name refused (exit 2, its owner said); \
            recorded with its inode; `remove_cgroup` removes it only while its inode matches and \
            it holds no process this tool did not start (else left and reported)",
        tests: &[
            "system.rs::a_cgroup_holding_a_process_it_did_not_start_is_left_and_reported",
            "cli_kernel.rs::a_cgroup_planted_at_the_runs_name_is_refused_naming_its_owner",
            "cli_kernel.rs::cleanup_leaves_decoys_named_like_its_own",
        ],
    },
    Privileged {
        what: "fio and its job processes",
        class: Class::Process,
        does: "started, killed on a stop or at clean-up",
        safe_by: "`kill_tree` signals only this process's own child and what runs under it; a \
            dead run's are signalled only by a recorded (pid, start time) that still matches \
            (`Change::Process`)",
        tests: &[
            "system.rs::a_recorded_process_is_signalled_only_while_its_start_time_matches",
            "cli_kernel.rs::cleanup_leaves_decoys_named_like_its_own",
        ],
    },
    Privileged {
        what: "bpftrace and perf record",
        class: Class::Process,
        does: "started, SIGINT to end, SIGKILL on a stop",
        safe_by: "own children only, by pid (`wait_bounded`, `kill_tree`), with PR_SET_PDEATHSIG \
            (`ChildSetup`)",
        tests: &[
            "cli_kernel.rs::sigint_in_the_middle_keeps_what_finished_and_puts_everything_back",
        ],
    },
    Privileged {
        what: "perf's record file in a temporary directory",
        class: Class::File,
        does: "made, read, removed",
        safe_by: "tempfile::tempdir (mkdtemp, mode 0700) under TMPDIR",
        tests: &[
            "cli_kernel.rs::a_short_run_prints_both_halves_writes_the_json_and_leaves_nothing",
        ],
    },
    Privileged {
        what: "tracefs at /sys/kernel/tracing",
        class: Class::Mount,
        does: "mounted where it was not, left mounted",
        safe_by: "`preflight`: only where the tracepoint is missing; holds no state of the run",
        tests: &[
            "cli_kernel.rs::a_short_run_prints_both_halves_writes_the_json_and_leaves_nothing",
        ],
    },
    Privileged {
        what: "outputs (--json, --svg, --report, flamegraphs, --inject-raw) and their temporaries",
        class: Class::File,
        does: "written to a temporary beside the output, renamed into place",
        safe_by: "`files::output::OutputFile`: the temporary made by tempfile (O_EXCL, random \
            name), the path declared and checked before the work (`paths.rs`)",
        tests: &[
            "path_props.rs::every_path_option_of_every_subcommand_is_declared_before_any_work",
            "cli_faults.rs::an_existing_file_is_replaced_whole_and_no_temporary_file_stays",
            "output.rs::a_replaced_file_keeps_its_owner",
        ],
    },
    Privileged {
        what: "the lock file .<name>.schedlab-lock beside each output",
        class: Class::Lock,
        does: "made, flock held while the output is written, removed",
        safe_by: "`files::lock::open_lock_file` (issue 43's part B): O_CREAT|O_EXCL|O_NOFOLLOW; \
            a planted link, FIFO, hard link or another user's file refused before the work",
        tests: &[
            "lock.rs::a_planted_lock_name_is_refused_and_never_followed",
            "lock.rs::a_held_lock_is_refused_to_another_holder_and_freed_by_release",
        ],
    },
];

/// A file's identity: its file system's device number and its inode number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
}

impl FileId {
    pub fn of(meta: &std::fs::Metadata) -> FileId {
        FileId { dev: meta.dev(), ino: meta.ino() }
    }

    /// What is at `path` now, a final link not followed (`None`: nothing there).
    fn at(path: &Path) -> Result<Option<(FileId, std::fs::Metadata)>, ExperimentError> {
        match std::fs::symlink_metadata(path) {
            Ok(m) => Ok(Some((FileId::of(&m), m))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(failed(format!("cannot stat {}: {e}", path.display()))),
        }
    }
}

/// A block device's number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DevNum {
    pub major: u32,
    pub minor: u32,
}

impl DevNum {
    pub fn of_rdev(rdev: u64) -> DevNum {
        DevNum { major: libc::major(rdev), minor: libc::minor(rdev) }
    }

    /// `/sys/dev/block/MAJ:MIN`: the device itself, whatever its name.
    pub fn sys_dir(self) -> PathBuf {
        PathBuf::from(format!("/sys/dev/block/{self}"))
    }

    pub fn queue(self) -> PathBuf {
        self.sys_dir().join("queue")
    }
}

impl std::fmt::Display for DevNum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

/// A process as this tool knows it: its pid and its start time (`/proc/<pid>/stat` field 22,
/// which tells it from a later process given the same pid).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunId {
    pub pid: u32,
    pub start_time: u64,
}

impl RunId {
    /// This process.
    pub fn own() -> RunId {
        let pid = std::process::id();
        RunId { pid, start_time: proc_stat(pid).map_or(0, |(_, _, start)| start) }
    }

    /// A live process, as it is now.
    pub fn of(pid: u32) -> Option<RunId> {
        proc_stat(pid)
            .filter(|s| s.1 != 'Z' && s.1 != 'X')
            .map(|(_, _, start_time)| RunId { pid, start_time })
    }
}

/// Whether the process a ledger names still runs: its pid is alive with the same start time.
pub fn run_alive(run: RunId) -> bool {
    RunId::of(run.pid) == Some(run)
}

/// One change, recorded before it is made (its identity, where it has one, once it exists).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Change {
    /// A directory of this run's in a shared place (mode 0700).
    PrivateDir {
        path: PathBuf,
        id: Option<FileId>,
    },
    BackingFile {
        path: PathBuf,
        id: Option<FileId>,
    },
    /// Every loop device whose backing file is `backing` (the file at `backing_path`); its
    /// number once `losetup` has said it.
    LoopDevice {
        backing: FileId,
        backing_path: PathBuf,
        device: Option<DevNum>,
    },
    /// A queue's scheduler and its knobs as they were: the scheduler is written back first (a
    /// switch resets the knobs), then each knob. `loop_backing`: the device is a loop device of
    /// this run's over that file, put back only while it still is.
    QueueState {
        device: DevNum,
        loop_backing: Option<FileId>,
        scheduler: String,
        knobs: Vec<(String, String)>,
    },
    Cgroup {
        path: PathBuf,
        id: Option<FileId>,
    },
    /// A process this run started (fio or one of its jobs).
    Process {
        process: RunId,
    },
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Change::PrivateDir { path, .. } => write!(f, "directory {}", path.display()),
            Change::BackingFile { path, .. } => write!(f, "backing file {}", path.display()),
            Change::LoopDevice { backing_path, device, .. } => match device {
                Some(d) => write!(f, "loop device {d} over {}", backing_path.display()),
                None => write!(f, "loop devices over {}", backing_path.display()),
            },
            Change::QueueState { device, scheduler, knobs, .. } => {
                write!(f, "{device}: scheduler {scheduler} and {} knob(s)", knobs.len())
            }
            Change::Cgroup { path, .. } => write!(f, "cgroup {}", path.display()),
            Change::Process { process } => {
                write!(f, "process {} (start time {})", process.pid, process.start_time)
            }
        }
    }
}

/// A ledger as it is stored: whose it is and what it recorded, oldest first.
#[derive(Debug, Serialize, Deserialize)]
struct LedgerFile {
    run: RunId,
    changes: Vec<Change>,
}

/// The ledger of this process's changes.
#[derive(Debug)]
pub struct Ledger {
    path: PathBuf,
    run: RunId,
    changes: Vec<Change>,
}

/// Makes `dir` (mode 0700) or checks the one there: a directory (not a link) owned by `uid` and
/// writable by no one else, tightened to 0700. Anything else is refused with its owner said.
pub fn private_dir(dir: &Path, uid: u32) -> Result<(), ExperimentError> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(failed(format!("cannot create {}: {e}", dir.display()))),
    }
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| failed(format!("cannot stat {}: {e}", dir.display())))?;
    let kind = if meta.file_type().is_symlink() { "a symbolic link" } else { "not a directory" };
    if !meta.is_dir() {
        return Err(refused(format!(
            "{} is {kind} (owner uid {}): it must be a directory of uid {uid}",
            dir.display(),
            meta.uid()
        )));
    }
    if meta.uid() != uid || meta.mode() & 0o022 != 0 {
        return Err(refused(format!(
            "{} is owned by uid {} with mode {:o}: it must be uid {uid}'s and writable \
             by no one else",
            dir.display(),
            meta.uid(),
            meta.mode() & 0o7777
        )));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| failed(format!("cannot set {}'s mode to 0700: {e}", dir.display())))?;
    }
    Ok(())
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

impl Ledger {
    /// Opens this process's ledger (empty) in [`STATE_DIR`].
    pub fn create() -> Result<Ledger, ExperimentError> {
        Ledger::create_in(Path::new(STATE_DIR))
    }

    fn create_in(dir: &Path) -> Result<Ledger, ExperimentError> {
        private_dir(dir, euid())?;
        let run = RunId::own();
        let ledger = Ledger {
            path: dir.join(format!("{}-{}.json", run.pid, run.start_time)),
            run,
            changes: Vec::new(),
        };
        ledger.save()?;
        Ok(ledger)
    }

    fn save(&self) -> Result<(), ExperimentError> {
        let text = serde_json::to_string_pretty(&LedgerFile {
            run: self.run,
            changes: self.changes.clone(),
        })
        .map_err(|e| failed(e.to_string()))?;
        write_private(&self.path, text.as_bytes())
    }

    /// Records a change about to be made; its index, for [`Ledger::update`].
    pub fn record(&mut self, change: Change) -> Result<usize, ExperimentError> {
        self.changes.push(change);
        self.save()?;
        Ok(self.changes.len() - 1)
    }

    /// Replaces a recorded change (its identity, once the object exists).
    pub fn update(&mut self, index: usize, change: Change) -> Result<(), ExperimentError> {
        if let Some(slot) = self.changes.get_mut(index) {
            *slot = change;
        }
        self.save()
    }

    /// Forgets a change that needs no putting back (a process reaped, a name never made).
    pub fn forget(&mut self, gone: impl Fn(&Change) -> bool) -> Result<(), ExperimentError> {
        self.changes.retain(|c| !gone(c));
        self.save()
    }

    /// Records a process this run started (by pid and start time), if it still runs and is not
    /// recorded yet.
    pub fn record_process(&mut self, pid: u32) -> Result<(), ExperimentError> {
        match RunId::of(pid) {
            Some(process) if !self.changes.contains(&Change::Process { process }) => {
                self.record(Change::Process { process }).map(|_| ())
            }
            _ => Ok(()),
        }
    }

    /// Puts back every change, newest first; what cannot be put back stays in the ledger (the
    /// next run or `--cleanup` tries again), which is removed once empty. Returns what could not
    /// be put back (one line each).
    pub fn undo_all(&mut self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut kept = Vec::new();
        // This run's own devices: their locks are this process's.
        let held = own_devices(&self.changes);
        while let Some(change) = self.changes.pop() {
            if let Err(e) = undo(&change, &held) {
                problems.push(e.message);
                kept.push(change);
            }
            let _ = self.save();
        }
        if kept.is_empty() {
            let _ = std::fs::remove_file(&self.path);
        } else {
            kept.reverse();
            self.changes = kept;
            let _ = self.save();
        }
        problems
    }
}

impl Drop for Ledger {
    fn drop(&mut self) {
        for p in self.undo_all() {
            tracing::warn!("clean-up: {p}");
        }
    }
}

/// Writes a file of the run directory through a temporary opened O_NOFOLLOW, renamed into place.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), ExperimentError> {
    use std::io::Write;
    let tmp = path.with_extension("json.tmp");
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| std::fs::rename(&tmp, path));
    written.map_err(|e| failed(format!("cannot write the ledger {}: {e}", path.display())))
}

/// The `--device`s a ledger switched (their locks were its process's).
fn own_devices(changes: &[Change]) -> Vec<DevNum> {
    changes
        .iter()
        .filter_map(|c| match c {
            Change::QueueState { device, loop_backing: None, .. } => Some(*device),
            _ => None,
        })
        .collect()
}

/// What undoing a change did.
#[derive(Debug, PartialEq)]
enum Undone {
    /// It was put back.
    PutBack,
    /// Nothing of it was left to put back (or what is there is not what was made).
    Gone,
}

/// Puts back one change, acting only on what still matches the record. `held`: the devices
/// whose locks this process holds.
fn undo(change: &Change, held: &[DevNum]) -> Result<Undone, ExperimentError> {
    match change {
        Change::PrivateDir { path, id } => remove_if_same(path, *id, true),
        Change::BackingFile { path, id } => remove_if_same(path, *id, false),
        Change::LoopDevice { backing, backing_path, .. } => {
            detach_loops_over(*backing, backing_path, LOOP_RELEASE).map(|n| {
                if n > 0 {
                    Undone::PutBack
                } else {
                    Undone::Gone
                }
            })
        }
        Change::Cgroup { path, id } => remove_cgroup(path, *id),
        Change::Process { process } => {
            Ok(if kill_recorded(*process) { Undone::PutBack } else { Undone::Gone })
        }
        Change::QueueState { device, loop_backing, scheduler, knobs } => {
            match loop_backing {
                // A loop device of this run's: only while it is still over the run's file.
                Some(backing) if loop_backing_of(*device).ok().flatten() != Some(*backing) => {
                    return Ok(Undone::Gone)
                }
                Some(_) => {}
                None if held.contains(device) => {}
                None => {
                    // Another run's --device: only when no live run holds it.
                    let _lock = match lock_device_in(Path::new(STATE_DIR), *device, "--device") {
                        Ok(lock) => lock,
                        Err(e) => {
                            return Err(failed(format!(
                                "left {device}'s scheduler as it is: {}",
                                e.message
                            )))
                        }
                    };
                    return restore_queue(*device, scheduler, knobs);
                }
            }
            restore_queue(*device, scheduler, knobs)
        }
    }
}

fn restore_queue(
    device: DevNum,
    scheduler: &str,
    knobs: &[(String, String)],
) -> Result<Undone, ExperimentError> {
    let queue = device.queue();
    if !queue.join("scheduler").exists() {
        return Ok(Undone::Gone);
    }
    std::fs::write(queue.join("scheduler"), scheduler).map_err(|e| {
        failed(format!("cannot restore {device}'s scheduler to `{scheduler}`: {e}"))
    })?;
    let mut not_restored = Vec::new();
    for (knob, value) in knobs {
        if std::fs::write(queue.join("iosched").join(knob), value).is_err() {
            not_restored.push(knob.as_str());
        }
    }
    if not_restored.is_empty() {
        Ok(Undone::PutBack)
    } else {
        let knobs = not_restored.join(", ");
        Err(failed(format!("cannot restore {device}'s iosched knobs {knobs}")))
    }
}

/// Removes the file or (empty) directory at `path` only if it is the one recorded (same device
/// and inode, not a link). A name whose identity was never recorded (its run died between the
/// `mkdir` and the record) is left and reported if something is there.
fn remove_if_same(path: &Path, id: Option<FileId>, dir: bool) -> Result<Undone, ExperimentError> {
    let Some((now, meta)) = FileId::at(path)? else {
        return Ok(Undone::Gone);
    };
    let Some(id) = id else {
        return Err(failed(format!(
            "left {}: its run died before recording what it made there; remove it by hand if it \
             is that run's",
            path.display()
        )));
    };
    if now != id || meta.file_type().is_symlink() || meta.is_dir() != dir {
        return Ok(Undone::Gone);
    }
    let removed = if dir { std::fs::remove_dir(path) } else { std::fs::remove_file(path) };
    match removed {
        Ok(()) => Ok(Undone::PutBack),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Undone::Gone),
        Err(e) => Err(failed(format!("cannot remove {}: {e}", path.display()))),
    }
}

/// Records a queue's scheduler and its current knobs (see [`Change::QueueState`]).
pub fn record_queue_state(
    ledger: &mut Ledger,
    device: DevNum,
    loop_backing: Option<FileId>,
) -> Result<(), ExperimentError> {
    let queue = device.queue();
    let (_, scheduler) = schedulers(&queue)?;
    let mut knobs = Vec::new();
    if let Ok(entries) = std::fs::read_dir(queue.join("iosched")) {
        for e in entries.flatten() {
            let writable = e.metadata().is_ok_and(|m| m.permissions().mode() & 0o200 != 0);
            if let (true, Ok(v)) = (writable, std::fs::read_to_string(e.path())) {
                knobs.push((e.file_name().to_string_lossy().into_owned(), v.trim().to_string()));
            }
        }
    }
    let scheduler = if scheduler.is_empty() { "none".into() } else { scheduler };
    ledger.record(Change::QueueState { device, loop_backing, scheduler, knobs }).map(|_| ())
}

/// Puts back this process's own changes from its ledger file, for a process about to exit without
/// unwinding (a second signal): whatever the ledger recorded, newest first.
pub fn undo_own_ledger() {
    let run = RunId::own();
    let path = Path::new(STATE_DIR).join(format!("{}-{}.json", run.pid, run.start_time));
    let Ok(text) = std::fs::read_to_string(&path) else {
        return;
    };
    let Ok(ledger) = serde_json::from_str::<LedgerFile>(&text) else {
        return;
    };
    if ledger.run != run {
        return;
    }
    let held = own_devices(&ledger.changes);
    let mut failed = false;
    for change in ledger.changes.iter().rev() {
        failed |= undo(change, &held).is_err();
    }
    if !failed {
        let _ = std::fs::remove_file(&path);
    }
}

/// How long a detach waits for the kernel to let the loop device go. `LOOP_CLR_FD` on a device
/// still open only sets autoclear; the kernel unbinds it at the last close, and since Linux 5.17
/// does so from a work item, a moment after that close. Within this bound the device's last
/// openers (fio's job processes, killed a moment before) are gone on a loaded 2-CPU machine.
const LOOP_RELEASE: Duration = Duration::from_secs(30);

/// `LOOP_CLR_FD` and `LOOP_GET_STATUS64` (linux/loop.h).
const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

/// `struct loop_info64` (linux/loop.h): the backing file's device and inode come first.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// The backing file of the loop device open at `fd` (`None`: not bound).
fn loop_backing_fd(fd: &std::fs::File) -> Result<Option<FileId>, ExperimentError> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: all-zero is a valid loop_info64 (integers and byte arrays).
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 writes one loop_info64 (layout as linux/loop.h, 232 bytes) into
    // the struct we own for the whole call; the descriptor is open.
    let rc = unsafe {
        libc::ioctl(fd.as_raw_fd(), LOOP_GET_STATUS64 as _, &mut info as *mut LoopInfo64)
    };
    if rc == 0 {
        // The kernel encodes the device with new_encode_dev, as glibc's makedev does below 4096
        // majors.
        let dev = libc::makedev(libc::major(info.lo_device), libc::minor(info.lo_device));
        return Ok(Some(FileId { dev, ino: info.lo_inode }));
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::ENXIO) => Ok(None),
        _ => Err(failed(format!("LOOP_GET_STATUS64: {}", std::io::Error::last_os_error()))),
    }
}

/// The device node of `device` that /dev holds (its name from sysfs), checked without opening
/// it: a block device (not a link) of that number.
fn checked_dev_node(device: DevNum) -> Result<PathBuf, ExperimentError> {
    let node = dev_node(device)?;
    let meta =
        std::fs::symlink_metadata(&node).map_err(|e| failed(format!("{}: {e}", node.display())))?;
    if !meta.file_type().is_block_device() || DevNum::of_rdev(meta.rdev()) != device {
        return Err(failed(format!("{} is not the block device {device}", node.display())));
    }
    Ok(node)
}

/// Opens the device node of `device` that /dev holds (its name from sysfs, its number checked).
fn open_dev_node(device: DevNum) -> Result<(PathBuf, std::fs::File), ExperimentError> {
    let node = checked_dev_node(device)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&node)
        .map_err(|e| failed(format!("cannot open {}: {e}", node.display())))?;
    let meta =
        file.metadata().map_err(|e| failed(format!("cannot stat {}: {e}", node.display())))?;
    if !meta.file_type().is_block_device() || DevNum::of_rdev(meta.rdev()) != device {
        return Err(failed(format!("{} is not the block device {device}", node.display())));
    }
    Ok((node, file))
}

/// `/dev/<DEVNAME>` of a device number (from `/sys/dev/block/MAJ:MIN/uevent`): a name in root's
/// /dev, never one a user gave.
fn dev_node(device: DevNum) -> Result<PathBuf, ExperimentError> {
    let uevent = std::fs::read_to_string(device.sys_dir().join("uevent"))
        .map_err(|e| failed(format!("no block device {device}: {e}")))?;
    let name = uevent
        .lines()
        .find_map(|l| l.strip_prefix("DEVNAME="))
        .ok_or_else(|| failed(format!("block device {device} has no DEVNAME")))?;
    if name.split('/').any(|part| part == ".." || part.is_empty()) {
        return Err(failed(format!("block device {device} has an odd DEVNAME `{name}`")));
    }
    Ok(Path::new("/dev").join(name))
}

/// The backing file of loop device `device` now (`None`: not bound).
fn loop_backing_of(device: DevNum) -> Result<Option<FileId>, ExperimentError> {
    let (_, file) = open_dev_node(device)?;
    loop_backing_fd(&file)
}

/// Every loop device (by number) whose sysfs says it is bound.
fn bound_loop_devices() -> Vec<DevNum> {
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.path().join("loop/backing_file").exists())
        .filter_map(|e| std::fs::read_to_string(e.path().join("dev")).ok())
        .filter_map(|d| {
            let (major, minor) = d.trim().split_once(':')?;
            Some(DevNum { major: major.parse().ok()?, minor: minor.parse().ok()? })
        })
        .collect()
}

/// Detaches every loop device whose backing file is `backing` (checked with
/// `LOOP_GET_STATUS64` on the descriptor `LOOP_CLR_FD` then goes to) and waits (at most
/// `limit`) until the kernel has unbound it. No holder is signalled: this run's fio processes
/// are recorded and killed before (newer in the ledger); an error names whatever else still
/// holds it. The number of devices detached.
fn detach_loops_over(
    backing: FileId,
    backing_path: &Path,
    limit: Duration,
) -> Result<usize, ExperimentError> {
    let mut detached = Vec::new();
    for device in bound_loop_devices() {
        let Ok((node, file)) = open_dev_node(device) else {
            continue;
        };
        if loop_backing_fd(&file)? != Some(backing) {
            continue;
        }
        use std::os::unix::io::AsRawFd;
        // SAFETY: LOOP_CLR_FD takes no argument; the descriptor is open on the loop device whose
        // backing file was just checked to be this run's.
        let rc = unsafe { libc::ioctl(file.as_raw_fd(), LOOP_CLR_FD as _, 0) };
        if rc != 0 {
            return Err(failed(format!(
                "cannot detach {} ({device}): {}",
                node.display(),
                std::io::Error::last_os_error()
            )));
        }
        drop(file);
        detached.push((node, device));
    }
    let end = Instant::now() + limit;
    for (node, device) in &detached {
        while is_bound_to(*device, backing_path) {
            if Instant::now() > end {
                let holders = holders_of(node);
                let held: Vec<String> =
                    holders.iter().map(|(pid, comm)| format!("{comm} (pid {pid})")).collect();
                return Err(failed(format!(
                    "{} is still bound {} s after its detach: {}; the kernel detaches it when it \
                     is closed",
                    node.display(),
                    limit.as_secs(),
                    if held.is_empty() {
                        "no process holds it open".to_string()
                    } else {
                        format!("held open by {}", held.join(", "))
                    }
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    Ok(detached.len())
}

/// Whether loop device `device` is still bound to the file at `backing_path` (sysfs's
/// `loop/backing_file`, which says " (deleted)" after an unlink).
fn is_bound_to(device: DevNum, backing_path: &Path) -> bool {
    std::fs::read_to_string(device.sys_dir().join("loop/backing_file")).is_ok_and(|b| {
        b.trim_end().trim_end_matches(" (deleted)") == backing_path.as_os_str().to_string_lossy()
    })
}

/// The processes with `device` open (pid and command name), from `/proc/<pid>/fd`.
fn holders_of(device: &Path) -> Vec<(u32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(e.path().join("fd")) else {
            continue;
        };
        if fds
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == device))
        {
            let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            found.push((pid, comm.trim().to_string()));
        }
    }
    found
}

/// How long a killed process or an emptied cgroup is waited for.
const GONE_WAIT: Duration = Duration::from_secs(5);

/// SIGKILLs a recorded process only while its pid has the recorded start time, and waits (at
/// most [`GONE_WAIT`]) until it is gone. Whether it was signalled.
fn kill_recorded(process: RunId) -> bool {
    if !run_alive(process) {
        return false;
    }
    // SAFETY: a signal involves no memory of ours; the pid has the start time recorded when this
    // tool started the process, so it is that process.
    unsafe { libc::kill(process.pid as libc::pid_t, libc::SIGKILL) };
    let end = Instant::now() + GONE_WAIT;
    while run_alive(process) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// The pids in a cgroup directory (its own `cgroup.procs`).
fn cgroup_pids(dir: &Path) -> Vec<u32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Removes a cgroup of this tool's only while its inode is the one made. Processes in it are
/// never signalled here: this run's were recorded and killed before (newer in the ledger); any
/// still there after [`GONE_WAIT`] were not started by this tool, and the cgroup is left and
/// reported.
fn remove_cgroup(path: &Path, id: Option<FileId>) -> Result<Undone, ExperimentError> {
    let Some((now, meta)) = FileId::at(path)? else {
        return Ok(Undone::Gone);
    };
    let Some(id) = id else {
        return Err(failed(format!(
            "left cgroup {}: its run died before recording its inode; remove it by hand if it is \
             that run's",
            path.display()
        )));
    };
    if now != id || !meta.is_dir() {
        return Ok(Undone::Gone);
    }
    let end = Instant::now() + GONE_WAIT;
    loop {
        let pids = cgroup_pids(path);
        match std::fs::remove_dir(path) {
            Ok(()) => return Ok(Undone::PutBack),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Undone::Gone),
            Err(e) if Instant::now() > end => {
                let why = if pids.is_empty() {
                    e.to_string()
                } else {
                    let list: Vec<String> = pids.iter().map(|p| p.to_string()).collect();
                    format!("it holds processes this tool did not start (pid {})", list.join(", "))
                };
                return Err(failed(format!("left cgroup {}: {why}", path.display())));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Which cgroup hierarchy holds the I/O controller.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum CgroupIo {
    /// cgroup v1: the blkio hierarchy's mount point; cpuacct's, if mounted separately.
    V1 { blkio: PathBuf, cpuacct: Option<PathBuf> },
    /// cgroup v2: the unified mount point (with `io` available).
    V2 { root: PathBuf },
}

impl CgroupIo {
    pub fn version(&self) -> &'static str {
        match self {
            CgroupIo::V1 { .. } => "v1 (blkio)",
            CgroupIo::V2 { .. } => "v2 (io)",
        }
    }
}

/// Finds the I/O controller's hierarchy from /proc/mounts.
pub fn find_cgroup_io() -> Option<CgroupIo> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    let (mut blkio, mut cpuacct, mut v2) = (None, None, None);
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 {
            continue;
        }
        let opts: Vec<&str> = f[3].split(',').collect();
        match f[2] {
            "cgroup" if opts.contains(&"blkio") => blkio = Some(PathBuf::from(f[1])),
            "cgroup" if opts.contains(&"cpuacct") => cpuacct = Some(PathBuf::from(f[1])),
            "cgroup2" => {
                let controllers =
                    std::fs::read_to_string(Path::new(f[1]).join("cgroup.controllers"))
                        .unwrap_or_default();
                if controllers.split_whitespace().any(|c| c == "io") {
                    v2 = Some(PathBuf::from(f[1]));
                }
            }
            _ => {}
        }
    }
    match (blkio, v2) {
        (Some(blkio), _) => Some(CgroupIo::V1 { blkio, cpuacct }),
        (None, Some(root)) => Some(CgroupIo::V2 { root }),
        _ => None,
    }
}

/// Puts back what dead runs left, from their ledgers only (nothing is found by its name): every
/// change of a ledger whose run is dead (pid gone, or alive with another start time) that still
/// matches its record. `held`: the devices whose locks this process holds. Returns one line per
/// thing put back, and one per problem.
pub fn cleanup_stale(held: &[DevNum]) -> (Vec<String>, Vec<String>) {
    match private_dir(Path::new(STATE_DIR), euid()) {
        Ok(()) => cleanup_stale_in(Path::new(STATE_DIR), held),
        Err(e) => (Vec::new(), vec![e.message]),
    }
}

fn cleanup_stale_in(dir: &Path, held: &[DevNum]) -> (Vec<String>, Vec<String>) {
    let (mut done, mut problems) = (Vec::new(), Vec::new());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (done, problems);
    };
    let mut ledgers: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    ledgers.sort();
    for path in ledgers {
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_file() => m,
            _ => continue,
        };
        let ledger = match std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<LedgerFile>(&t).map_err(|e| e.to_string()))
        {
            Ok(l) => l,
            Err(e) => {
                // An earlier version's ledger (`<pid>.json`, names only): never acted on; said
                // unless its process still runs.
                let pid =
                    path.file_stem().and_then(|s| s.to_str()).and_then(|s| s.parse::<u32>().ok());
                if pid.is_some_and(|pid| RunId::of(pid).is_some()) {
                    continue;
                }
                problems.push(format!(
                    "cannot read the ledger {} (uid {}): {e}; left as it is (an earlier version's? \
                     it records names, not what they were, so it is not acted on)",
                    path.display(),
                    meta.uid()
                ));
                continue;
            }
        };
        if run_alive(ledger.run) || ledger.run == RunId::own() {
            continue;
        }
        let pid = ledger.run.pid;
        let mut kept = Vec::new();
        for change in ledger.changes.iter().rev() {
            let verb = if matches!(change, Change::Process { .. }) { "killed" } else { "put back" };
            match undo(change, held) {
                Ok(Undone::PutBack) => done.push(format!("{verb} {change} (left by pid {pid})")),
                Ok(Undone::Gone) => {}
                Err(p) => {
                    problems.push(p.message);
                    kept.push(change.clone());
                }
            }
        }
        let _ = std::fs::remove_file(path.with_extension("json.tmp"));
        if kept.is_empty() {
            let _ = std::fs::remove_file(&path);
        } else {
            kept.reverse();
            let text = serde_json::to_string_pretty(&LedgerFile { run: ledger.run, changes: kept })
                .unwrap_or_default();
            let _ = write_private(&path, text.as_bytes());
        }
    }
    (done, problems)
}

/// A block device as `--device` names it, judged by what it is: its number (`st_rdev`), its
/// sysfs directory by number, its size; and the node in /dev that fio then opens.
#[derive(Clone, Debug, Serialize)]
pub struct BlockDevice {
    /// The path given.
    pub given: PathBuf,
    /// `/dev/<DEVNAME>` of its number, checked to be that device.
    pub node: PathBuf,
    pub num: DevNum,
    pub bytes: u64,
}

impl BlockDevice {
    /// Resolves `path` to a whole block device with a scheduler and a size, or refuses it (one
    /// line, naming what it is).
    pub fn open(path: &Path) -> Result<BlockDevice, ExperimentError> {
        let meta =
            std::fs::metadata(path).map_err(|e| refused(format!("{}: {e}", path.display())))?;
        let ft = meta.file_type();
        if !ft.is_block_device() {
            let kind = if ft.is_file() {
                "a regular file"
            } else if ft.is_dir() {
                "a directory"
            } else if ft.is_char_device() {
                "a character device"
            } else {
                "not a block device"
            };
            return Err(refused(format!(
                "--device {} is {kind} (owner uid {}), not a block device: give a whole block \
                 device such as /dev/sdb",
                path.display(),
                meta.uid()
            )));
        }
        let num = DevNum::of_rdev(meta.rdev());
        let sys = num.sys_dir();
        if sys.join("partition").exists() {
            return Err(refused(format!(
                "--device {} is a partition ({num}): give the whole device, whose scheduler it is",
                path.display()
            )));
        }
        if !num.queue().join("scheduler").exists() {
            return Err(refused(format!(
                "--device {} ({num}) has no I/O scheduler ({} is missing)",
                path.display(),
                num.queue().join("scheduler").display()
            )));
        }
        let sectors: u64 = std::fs::read_to_string(sys.join("size"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        if sectors == 0 {
            return Err(refused(format!(
                "--device {} ({num}) has size 0: nothing is behind it",
                path.display()
            )));
        }
        let node = checked_dev_node(num)?;
        Ok(BlockDevice { given: path.to_path_buf(), node, num, bytes: sectors.saturating_mul(512) })
    }
}

/// A `--device` held for a run: an exclusive `flock` on `device-MAJ:MIN.lock` in the run
/// directory, released when dropped (or when the process dies).
#[derive(Debug)]
pub struct DeviceLock {
    _file: std::fs::File,
    pub device: DevNum,
}

/// Takes the device's lock, or refuses (one line) when another run holds it.
pub fn lock_device(device: &BlockDevice) -> Result<DeviceLock, ExperimentError> {
    private_dir(Path::new(STATE_DIR), euid())?;
    lock_device_in(Path::new(STATE_DIR), device.num, &device.given.display().to_string())
}

/// How the files this module makes are opened: readable and writable by their owner alone,
/// never through a symlink, and not inherited by the programs it runs.
fn owner_only_file() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.mode(0o600).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    options
}

fn lock_device_in(dir: &Path, device: DevNum, given: &str) -> Result<DeviceLock, ExperimentError> {
    use std::io::{Read, Seek, Write};
    use std::os::unix::io::AsRawFd;
    let path = dir.join(format!("device-{device}.lock"));
    let mut file = owner_only_file()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| failed(format!("cannot open the device lock {}: {e}", path.display())))?;
    // SAFETY: flock on a descriptor we own; no memory is involved.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        let holder = holder.trim();
        let holder =
            if holder.is_empty() { "another run".to_string() } else { format!("pid {holder}") };
        return Err(refused(format!(
            "another schedlab kernel run ({holder}) holds {given} ({device}); run again \
             once it has ended"
        )));
    }
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = write!(file, "{}", std::process::id());
    Ok(DeviceLock { _file: file, device })
}

/// The schedulers a queue offers and the one in use (`none mq-deadline [bfq]`).
pub fn schedulers(queue: &Path) -> Result<(Vec<String>, String), ExperimentError> {
    let text = std::fs::read_to_string(queue.join("scheduler"))
        .map_err(|e| failed(format!("cannot read {}: {e}", queue.join("scheduler").display())))?;
    let mut all = Vec::new();
    let mut current = String::new();
    for w in text.split_whitespace() {
        let name = w.trim_start_matches('[').trim_end_matches(']');
        if w.starts_with('[') {
            current = name.to_string();
        }
        all.push(name.to_string());
    }
    Ok((all, current))
}

/// Whether a block device (or one of its partitions) holds a mounted filesystem or swap: the
/// mount point, or "swap".
pub fn mounted(device: &BlockDevice) -> Result<Option<String>, ExperimentError> {
    let mut ids = vec![device.num.to_string()];
    if let Ok(children) = std::fs::read_dir(device.num.sys_dir()) {
        for c in children.flatten() {
            if c.path().join("partition").exists() {
                if let Ok(dev) = std::fs::read_to_string(c.path().join("dev")) {
                    ids.push(dev.trim().to_string());
                }
            }
        }
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| failed(format!("cannot read mountinfo: {e}")))?;
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 5 && ids.iter().any(|id| id == f[2]) {
            return Ok(Some(f[4].to_string()));
        }
    }
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    let is_ours = |d: &str| {
        std::fs::metadata(d).is_ok_and(|m| {
            m.file_type().is_block_device() && ids.contains(&DevNum::of_rdev(m.rdev()).to_string())
        })
    };
    if swaps.lines().skip(1).any(|l| l.split_whitespace().next().is_some_and(is_ours)) {
        return Ok(Some("swap".into()));
    }
    Ok(None)
}

/// The loop device made for a run and the file behind it.
#[derive(Clone, Debug, Serialize)]
pub struct LoopDevice {
    pub device: PathBuf,
    pub num: DevNum,
    pub backing: PathBuf,
    pub backing_id: FileId,
    pub size_bytes: u64,
    /// The loop device reads its file with direct I/O (tmpfs takes O_DIRECT since 6.6).
    pub direct_io: bool,
}

/// Makes a fresh directory `<parent>/<PREFIX><pid>-<random>` (mode 0700), recorded before the
/// `mkdir` and with its inode after. `mkdir` never follows a link and fails on any existing
/// name (another name is drawn then).
fn make_private_dir(ledger: &mut Ledger, parent: &Path) -> Result<PathBuf, ExperimentError> {
    for _ in 0..16 {
        let path =
            parent.join(format!("{PREFIX}{}-{:016x}", std::process::id(), rand::random::<u64>()));
        let index = ledger.record(Change::PrivateDir { path: path.clone(), id: None })?;
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => {
                let meta = std::fs::symlink_metadata(&path)
                    .map_err(|e| failed(format!("cannot stat {}: {e}", path.display())))?;
                ledger.update(
                    index,
                    Change::PrivateDir { path: path.clone(), id: Some(FileId::of(&meta)) },
                )?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                ledger.forget(
                    |c| matches!(c, Change::PrivateDir { path: p, id: None } if *p == path),
                )?;
            }
            Err(e) => return Err(failed(format!("cannot create {}: {e}", path.display()))),
        }
    }
    Err(failed(format!(
        "cannot create a private directory in {}: every name drawn was taken",
        parent.display()
    )))
}

/// Makes a sparse file in a private directory of the tmpfs and a loop device over it (direct
/// I/O where the kernel takes it), recording each first.
pub fn make_loop_device(
    ledger: &mut Ledger,
    size_bytes: u64,
) -> Result<LoopDevice, ExperimentError> {
    let dir = make_private_dir(ledger, Path::new(TMPFS_DIR))?;
    let backing = dir.join("backing.img");
    let index = ledger.record(Change::BackingFile { path: backing.clone(), id: None })?;
    let file = owner_only_file()
        .write(true)
        .create_new(true)
        .open(&backing)
        .map_err(|e| failed(format!("cannot create {}: {e}", backing.display())))?;
    let backing_id = FileId::of(
        &file.metadata().map_err(|e| failed(format!("cannot stat {}: {e}", backing.display())))?,
    );
    ledger.update(index, Change::BackingFile { path: backing.clone(), id: Some(backing_id) })?;
    file.set_len(size_bytes)
        .map_err(|e| failed(format!("cannot size {}: {e}", backing.display())))?;
    drop(file);
    let index = ledger.record(Change::LoopDevice {
        backing: backing_id,
        backing_path: backing.clone(),
        device: None,
    })?;
    let out = Command::new("losetup")
        .args(["-f", "--show", "--direct-io=on"])
        .arg(&backing)
        .output()
        .map_err(|e| failed(format!("cannot run losetup: {e}")))?;
    if !out.status.success() {
        return Err(failed(format!("losetup -f: {}", String::from_utf8_lossy(&out.stderr).trim())));
    }
    let said = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let rdev =
        std::fs::metadata(&said).map_err(|e| failed(format!("{}: {e}", said.display())))?.rdev();
    let num = DevNum::of_rdev(rdev);
    ledger.update(
        index,
        Change::LoopDevice {
            backing: backing_id,
            backing_path: backing.clone(),
            device: Some(num),
        },
    )?;
    let (device, file) = open_dev_node(num)?;
    if loop_backing_fd(&file)? != Some(backing_id) {
        return Err(failed(format!(
            "{} ({num}) is not over {} after losetup",
            device.display(),
            backing.display()
        )));
    }
    let direct_io =
        std::fs::read_to_string(num.sys_dir().join("loop/dio")).is_ok_and(|s| s.trim() == "1");
    Ok(LoopDevice { device, num, backing, backing_id, size_bytes, direct_io })
}

/// Whether a free loop device can be had (`losetup -f` finds one, or loop-control can add one).
pub fn free_loop_device() -> Result<(), ExperimentError> {
    let out = Command::new("losetup")
        .arg("-f")
        .output()
        .map_err(|e| failed(format!("cannot run losetup (util-linux / mount package): {e}")))?;
    if out.status.success() && !out.stdout.is_empty() {
        Ok(())
    } else {
        Err(failed(format!("no free loop device: {}", String::from_utf8_lossy(&out.stderr).trim())))
    }
}

/// The cgroups of a run: a parent named after the pid, and N children (groups).
#[derive(Clone, Debug, Serialize)]
pub struct Cgroups {
    pub io: CgroupIo,
    /// The parent in the I/O hierarchy.
    pub parent: PathBuf,
    /// The groups, in order.
    pub groups: Vec<PathBuf>,
    /// The accounting cgroup every fio process joins (v1's cpuacct; none on v2), for its CPU
    /// time.
    pub accounting: Option<PathBuf>,
}

/// Makes one cgroup directory of this run's: recorded first, then `mkdir`, which must make it
/// (an existing name is someone else's: refused with its owner), then its inode recorded.
fn make_cgroup_dir(ledger: &mut Ledger, path: &Path) -> Result<PathBuf, ExperimentError> {
    let index = ledger.record(Change::Cgroup { path: path.to_path_buf(), id: None })?;
    match std::fs::create_dir(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            ledger.forget(|c| matches!(c, Change::Cgroup { path: p, id: None } if p == path))?;
            let owner = std::fs::symlink_metadata(path)
                .map(|m| m.uid().to_string())
                .unwrap_or_else(|_| "unknown".into());
            return Err(refused(format!(
                "cgroup {} already exists (owner uid {owner}) and is not this run's: \
                 left as it is",
                path.display()
            )));
        }
        Err(e) => return Err(failed(format!("cannot create cgroup {}: {e}", path.display()))),
    }
    let meta = std::fs::symlink_metadata(path)
        .map_err(|e| failed(format!("cannot stat {}: {e}", path.display())))?;
    ledger
        .update(index, Change::Cgroup { path: path.to_path_buf(), id: Some(FileId::of(&meta)) })?;
    Ok(path.to_path_buf())
}

/// The cgroups a run of this process makes at the top of each hierarchy.
fn cgroup_parents(io: &CgroupIo) -> Vec<PathBuf> {
    let name = format!("{PREFIX}{}", std::process::id());
    match io {
        CgroupIo::V1 { blkio, cpuacct } => std::iter::once(blkio)
            .chain(cpuacct.iter().filter(|c| *c != blkio))
            .map(|r| r.join(&name))
            .collect(),
        CgroupIo::V2 { root } => vec![root.join(&name)],
    }
}

/// Refuses, before the work, a run whose cgroup names are taken (someone else's: this run has
/// made nothing yet), naming the owner. `make_cgroups` checks again as it makes them.
pub fn cgroup_names_free(io: &CgroupIo) -> Result<(), ExperimentError> {
    for path in cgroup_parents(io) {
        if let Ok(meta) = std::fs::symlink_metadata(&path) {
            return Err(refused(format!(
                "cgroup {} already exists (owner uid {}) and is not this run's: left as \
                 it is",
                path.display(),
                meta.uid()
            )));
        }
    }
    Ok(())
}

/// Makes the parent cgroup and `groups` children with the weights given in turn (BFQ's weight
/// file: `blkio.bfq.weight` in v1, `io.bfq.weight` in v2), recording each before it is made.
pub fn make_cgroups(
    ledger: &mut Ledger,
    io: &CgroupIo,
    groups: usize,
    weights: &[u64],
) -> Result<Cgroups, ExperimentError> {
    let name = format!("{PREFIX}{}", std::process::id());
    let (parent, accounting, weight_file) = match io {
        CgroupIo::V1 { blkio, cpuacct } => {
            let parent = make_cgroup_dir(ledger, &blkio.join(&name))?;
            let accounting = match cpuacct {
                Some(c) if c != blkio => Some(make_cgroup_dir(ledger, &c.join(&name))?),
                _ => None,
            };
            (parent, accounting, "blkio.bfq.weight")
        }
        CgroupIo::V2 { root } => {
            let parent = make_cgroup_dir(ledger, &root.join(&name))?;
            if groups > 0 {
                std::fs::write(parent.join("cgroup.subtree_control"), "+io").map_err(|e| {
                    failed(format!("cannot enable io in {}: {e}", parent.display()))
                })?;
            }
            // No accounting cgroup: v2 keeps processes out of a cgroup that enables a
            // controller for its children, and the CPU per I/O comes from /proc/stat anyway.
            (parent, None, "io.bfq.weight")
        }
    };
    let mut out =
        Cgroups { io: io.clone(), parent: parent.clone(), groups: Vec::new(), accounting };
    for i in 0..groups {
        let g = make_cgroup_dir(ledger, &parent.join(format!("g{i}")))?;
        let w = weights[i % weights.len()];
        let wf = g.join(weight_file);
        if wf.exists() {
            std::fs::write(&wf, w.to_string())
                .map_err(|e| failed(format!("cannot set {}: {e}", wf.display())))?;
        }
        out.groups.push(g);
    }
    Ok(out)
}
/// CPU time used by every process of the accounting cgroup so far, ns (v1 cpuacct.usage; v2
/// cpu.stat's usage_usec).
pub fn accounting_ns(cg: &Path) -> Option<u64> {
    if let Ok(t) = std::fs::read_to_string(cg.join("cpuacct.usage")) {
        return t.trim().parse().ok();
    }
    let stat = std::fs::read_to_string(cg.join("cpu.stat")).ok()?;
    stat.lines()
        .find_map(|l| l.strip_prefix("usage_usec "))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|us| us * 1000)
}

/// The root of the accounting hierarchy (v1's cpuacct, or blkio's where they share a mount; v2's
/// root): its usage is every task's CPU time on the machine.
pub fn accounting_root(io: &CgroupIo) -> PathBuf {
    match io {
        CgroupIo::V1 { blkio, cpuacct } => cpuacct.clone().unwrap_or_else(|| blkio.clone()),
        CgroupIo::V2 { root } => root.clone(),
    }
}

/// `PF_KTHREAD` in `/proc/<pid>/stat`'s flags field.
const PF_KTHREAD: u64 = 0x0020_0000;

/// CPU time each kernel thread has used so far, ns, by pid (`/proc/<pid>/schedstat`'s first
/// field): the loop device's worker, blk-mq's and the block layer's kworkers, ksoftirqd.
pub fn kthreads_runtime_ns() -> std::collections::BTreeMap<u32, u64> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return out };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        // The fields after the command name (which may hold spaces and parentheses).
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else { continue };
        // state ppid pgrp session tty_nr tpgid flags: flags is the 7th after the name.
        let flags = rest.split_whitespace().nth(6).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
        if flags & PF_KTHREAD == 0 {
            continue;
        }
        if let Some(ns) = std::fs::read_to_string(e.path().join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        {
            out.insert(pid, ns);
        }
    }
    out
}

/// What kernel threads used between two [`kthreads_runtime_ns`] snapshots, ns: a thread seen
/// only in the second counts whole (it started in between); one seen only in the first is lost
/// (kworkers retire after minutes idle, not within a run).
/// The sum is checked (issue 43): past `u64::MAX` is an error naming it, never a wrap.
pub fn kthreads_delta_ns(
    before: &std::collections::BTreeMap<u32, u64>,
    after: &std::collections::BTreeMap<u32, u64>,
) -> Result<u64, ExperimentError> {
    crate::counts::sum(
        after.iter().map(|(pid, &ns)| ns.saturating_sub(before.get(pid).copied().unwrap_or(0))),
        "the kernel threads' CPU time (ns, /proc/<pid>/schedstat)",
    )
    .map_err(failed)
}

/// This process's CPU time so far, ns (every thread's `schedstat`), summed checked (issue 43).
pub fn own_runtime_ns() -> Result<u64, ExperimentError> {
    let Ok(entries) = std::fs::read_dir("/proc/self/task") else { return Ok(0) };
    crate::counts::sum(
        entries
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path().join("schedstat")).ok())
            .filter_map(|s| s.split_whitespace().next().and_then(|v| v.parse::<u64>().ok())),
        "this process's CPU time (ns, /proc/self/task/*/schedstat)",
    )
    .map_err(failed)
}

/// The CPU time of one kernel run, split into what belongs to the experiment and what other
/// processes used, seconds. All deltas over the same window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CpuSplit {
    /// The machine's busy time (`/proc/stat`, all CPUs, steal left out).
    pub machine_s: f64,
    /// The experiment's: fio's accounting cgroup, every kernel thread (the loop worker, kworkers,
    /// ksoftirqd), and the interrupt and softirq time no task was charged with (the machine's
    /// busy time less every task's: on this kernel, without IRQ time accounting, interrupts are
    /// charged to the task they interrupt, so what is left is the ones that hit an idle CPU).
    pub experiment_s: f64,
    /// Every other task's (the root's usage less fio's, the kernel threads' and this process's).
    pub others_s: f64,
}

impl CpuSplit {
    /// From the deltas over one window, ns (machine busy time in seconds).
    pub fn of(
        machine_s: f64,
        root_ns: u64,
        fio_ns: u64,
        kthreads_ns: u64,
        own_ns: u64,
    ) -> CpuSplit {
        // Summed wider (issue 43): three measured times cannot wrap a u128.
        let tasked_ns = u128::from(fio_ns) + u128::from(kthreads_ns) + u128::from(own_ns);
        let others_ns = u128::from(root_ns).saturating_sub(tasked_ns);
        // NOTE: ticks (/proc/stat) and runtimes (cgroups, schedstat) are different clocks; over
        // a window of seconds they differ by a few ticks, and the experiment's share is clamped
        // to at least fio's and the kernel threads' own.
        let untasked_s = (machine_s - root_ns as f64 / 1e9).max(0.0);
        CpuSplit {
            machine_s,
            experiment_s: (fio_ns as f64 + kthreads_ns as f64) / 1e9 + untasked_s,
            others_s: others_ns as f64 / 1e9,
        }
    }
}

/// A command's child setup: join these cgroups (their `cgroup.procs`, opened before the fork)
/// and die with the parent.
pub struct ChildSetup {
    procs: Vec<std::fs::File>,
}

impl ChildSetup {
    pub fn new(cgroups: &[&Path]) -> Result<ChildSetup, ExperimentError> {
        let procs = cgroups
            .iter()
            .map(|c| {
                let procs = c.join("cgroup.procs");
                let opened = std::fs::OpenOptions::new().write(true).open(&procs);
                opened.map_err(|e| failed(format!("cannot open {}: {e}", procs.display())))
            })
            .collect::<Result<_, _>>()?;
        Ok(ChildSetup { procs })
    }

    /// Arranges for `cmd`'s child to join the cgroups and to die with this thread.
    pub fn apply(&self, cmd: &mut Command) {
        use std::os::unix::io::AsRawFd;
        use std::os::unix::process::CommandExt;
        let fds: Vec<i32> = self.procs.iter().map(|f| f.as_raw_fd()).collect();
        // SAFETY: the closure runs in the child between fork and exec and calls only
        // async-signal-safe functions (prctl, getppid, write, _exit) on values copied in before
        // the fork; it allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
                for &fd in &fds {
                    // "0": the writing process itself (v1 and v2).
                    if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    }
}

/// What the preflight found: the I/O controller's hierarchy and `--device` as what it is.
#[derive(Debug)]
pub struct Preflight {
    pub cgroup_io: Option<CgroupIo>,
    pub device: Option<BlockDevice>,
}

/// Whatever stops the preflight is a refusal: nothing was changed yet.
fn as_refusal(e: ExperimentError) -> ExperimentError {
    refused(e.message)
}

/// Why this machine cannot run the kernel experiment, if it cannot: one line naming what to
/// install or change, a refusal before the work (exit 2) whatever failed.
pub fn preflight(
    need_cgroups: bool,
    need_bpftrace: bool,
    device: Option<&Path>,
) -> Result<Preflight, ExperimentError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        let why = "it makes loop devices, switches schedulers, makes cgroups";
        return Err(refused(format!("schedlab kernel needs root ({why})")));
    }
    for (tool, package) in [("fio", "fio"), ("perf", "linux-perf")] {
        if !on_path(tool) {
            let install = format!("install it (Debian: apt-get install {package})");
            return Err(refused(format!("`{tool}` not found: {install}")));
        }
    }
    if need_bpftrace && !on_path("bpftrace") {
        return Err(refused(
            "`bpftrace` not found: install it (Debian: apt-get install bpftrace), or pass \
             --contention off",
        ));
    }
    if need_bpftrace
        && !Path::new("/sys/kernel/tracing/events/lock/contention_begin").exists()
        && !Path::new("/sys/kernel/debug/tracing/events/lock/contention_begin").exists()
    {
        // tracefs may just not be mounted yet.
        let _ =
            Command::new("mount").args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"]).output();
        if !Path::new("/sys/kernel/tracing/events/lock/contention_begin").exists() {
            return Err(refused(
                "this kernel has no lock:contention_begin tracepoint (Linux 5.19 or later, \
                 tracefs mounted): pass --contention off",
            ));
        }
    }
    let block_device = match device {
        Some(d) => {
            let bd = BlockDevice::open(d).map_err(as_refusal)?;
            if let Some(m) = mounted(&bd).map_err(as_refusal)? {
                let (path, num) = (d.display(), bd.num);
                let holds = format!("holds a mounted filesystem ({m})");
                return Err(refused(format!("{path} ({num}) {holds}: refused")));
            }
            let (all, _) = schedulers(&bd.num.queue()).map_err(as_refusal)?;
            if !all.iter().any(|s| s == "bfq") {
                let (d, all) = (d.display(), all.join(" "));
                return Err(refused(format!(
                    "no BFQ in this kernel for {d} (schedulers: {all}): modprobe bfq, or a kernel \
                     with CONFIG_IOSCHED_BFQ"
                )));
            }
            Some(bd)
        }
        None => {
            if !on_path("losetup") {
                let install = "install it (Debian: apt-get install mount)";
                return Err(refused(format!("`losetup` not found: {install}")));
            }
            free_loop_device().map_err(as_refusal)?;
            if !bfq_available() {
                return Err(refused(
                    "no BFQ in this kernel (no loop device offers it): modprobe bfq, or a kernel \
                     with CONFIG_IOSCHED_BFQ",
                ));
            }
            if !is_tmpfs(Path::new(TMPFS_DIR)) {
                let give = "give an existing device with --device";
                return Err(refused(format!("{TMPFS_DIR} is not a tmpfs: {give}")));
            }
            None
        }
    };
    // The run directory: made or checked before the work (a planted one is refused).
    private_dir(Path::new(STATE_DIR), euid()).map_err(as_refusal)?;
    let cgroup_io = find_cgroup_io();
    if need_cgroups && cgroup_io.is_none() {
        return Err(refused(
            "no cgroup hierarchy with the I/O controller is mounted (blkio v1 or io v2): run \
             with --groups 0",
        ));
    }
    Ok(Preflight { cgroup_io, device: block_device })
}

/// Whether a loop device offers BFQ (any `/sys/block/loop*`: the scheduler list is the kernel's,
/// not the device's; a built-in or loaded bfq shows on every one).
fn bfq_available() -> bool {
    let Ok(entries) = std::fs::read_dir("/sys/block") else { return false };
    let mut any = false;
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with("loop") {
            any = true;
            if let Ok((all, _)) = schedulers(&e.path().join("queue")) {
                return all.iter().any(|s| s == "bfq");
            }
        }
    }
    // No loop device yet to ask: the module list is the next best witness.
    !any && std::fs::read_to_string("/proc/modules")
        .is_ok_and(|m| m.lines().any(|l| l.starts_with("bfq ")))
}

fn is_tmpfs(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_encoded_bytes()) else { return false };
    // SAFETY: all-zero is a valid statfs; statfs fills it for a NUL-terminated path that lives
    // for the whole call.
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let rc = unsafe { libc::statfs(c.as_ptr(), &mut s) };
    rc == 0 && s.f_type as i64 == 0x0102_1994
}

/// Whether `tool` is an executable on PATH.
pub fn on_path(tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|p| {
        std::env::split_paths(&p).any(|d| {
            std::fs::metadata(d.join(tool))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn the_experiments_cpu_leaves_other_processes_out() {
        // 2 s of a 2-CPU machine fully busy: the root's tasks 3.8 s, of which fio 1.5 s, kernel
        // threads 0.5 s, this process 0.1 s; 0.2 s of interrupts hit idle CPUs.
        let s = CpuSplit::of(4.0, 3_800_000_000, 1_500_000_000, 500_000_000, 100_000_000);
        assert!((s.others_s - 1.7).abs() < 1e-9, "{s:?}");
        assert!((s.experiment_s - 2.2).abs() < 1e-9, "{s:?}");
        // Ticks behind runtimes: never less than fio's and the kernel threads' own.
        let s = CpuSplit::of(1.0, 2_000_000_000, 1_500_000_000, 500_000_000, 0);
        assert!((s.experiment_s - 2.0).abs() < 1e-9 && s.others_s == 0.0, "{s:?}");
    }

    #[test]
    fn kernel_threads_are_found_and_their_deltas_summed() {
        let now = kthreads_runtime_ns();
        // Every Linux machine has kernel threads (kthreadd, ksoftirqd, kworkers).
        assert!(!now.is_empty());
        assert!(!now.contains_key(&std::process::id()), "this process is no kernel thread");
        let before = std::collections::BTreeMap::from([(1, 100), (2, 50), (3, 7)]);
        let after = std::collections::BTreeMap::from([(1, 150), (2, 50), (4, 30)]);
        assert_eq!(
            kthreads_delta_ns(&before, &after),
            Ok(80),
            "50 more, none more, a new one's 30; a gone one's lost"
        );
    }

    /// Measured times near the largest: the kernel threads' deltas are summed checked, the CPU
    /// split's sums wider; neither wraps (issue 43).
    #[test]
    fn measured_times_that_add_up_past_the_largest_are_refused_or_summed_wider() {
        let before = std::collections::BTreeMap::from([(1, 0), (2, 0)]);
        let near = std::collections::BTreeMap::from([(1, u64::MAX - 1), (2, 1)]);
        assert_eq!(kthreads_delta_ns(&before, &near), Ok(u64::MAX));
        let past = std::collections::BTreeMap::from([(1, u64::MAX), (2, 1)]);
        let e = kthreads_delta_ns(&before, &past).unwrap_err().message;
        assert!(e.contains("add up past 18446744073709551615") && !e.contains('\n'), "{e}");
        // fio's, the kernel threads' and this process's times past u64::MAX together: nothing
        // is left for other processes (a wrapped sum left them almost all of root's time).
        let split = CpuSplit::of(1.0, u64::MAX, u64::MAX, 2, 0);
        assert_eq!(split.others_s, 0.0);
        assert!(split.experiment_s > 1.8e10, "{split:?}");
    }

    fn is_root() -> bool {
        euid() == 0
    }

    fn ledger_at(dir: &Path, run: RunId, changes: Vec<Change>) {
        let text = serde_json::to_string(&LedgerFile { run, changes }).unwrap();
        std::fs::write(dir.join(format!("{}-{}.json", run.pid, run.start_time)), text).unwrap();
    }

    fn id_of(path: &Path) -> FileId {
        FileId::of(&std::fs::symlink_metadata(path).unwrap())
    }

    /// A child that sleeps until killed, and its identity.
    fn sleeper() -> (std::process::Child, RunId) {
        let child = Command::new("sleep").arg("600").spawn().unwrap();
        let run = RunId::of(child.id()).expect("the sleeper runs");
        (child, run)
    }

    #[test]
    fn a_state_dir_that_is_a_link_or_anothers_is_refused_naming_its_owner() {
        let tmp = tempfile::tempdir().unwrap();
        let me = euid();
        // Made where missing, mode 0700.
        let fresh = tmp.path().join("fresh");
        private_dir(&fresh, me).unwrap();
        assert_eq!(std::fs::metadata(&fresh).unwrap().mode() & 0o777, 0o700);
        // An old one of ours, 0755: tightened.
        let old = tmp.path().join("old");
        std::fs::create_dir(&old).unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o755)).unwrap();
        private_dir(&old, me).unwrap();
        assert_eq!(std::fs::metadata(&old).unwrap().mode() & 0o777, 0o700);
        // A link planted at the name, to a directory: refused, never followed.
        let target = tmp.path().join("target");
        std::fs::create_dir(&target).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let ExperimentError { kind, message: e, .. } = private_dir(&link, me).unwrap_err();
        assert!(
            kind == ErrorKind::BadInput
                && e.contains("symbolic link")
                && e.contains(&format!("owner uid {me}")),
            "{e}"
        );
        assert!(e.contains(&link.display().to_string()), "{e}");
        assert_eq!(
            std::fs::metadata(&target).unwrap().mode() & 0o777,
            0o755,
            "the link's target was changed"
        );
        // A directory others may write: refused.
        let open = tmp.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let ExperimentError { kind, message: e, .. } = private_dir(&open, me).unwrap_err();
        assert!(kind == ErrorKind::BadInput && e.contains("mode 777"), "{e}");
        // Another user's directory (as root, one chowned to nobody): refused, its owner said.
        if is_root() {
            let theirs = tmp.path().join("theirs");
            std::fs::create_dir(&theirs).unwrap();
            std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
            let ExperimentError { kind, message: e, .. } = private_dir(&theirs, me).unwrap_err();
            assert!(kind == ErrorKind::BadInput && e.contains("uid 65534"), "{e}");
        }
    }

    #[test]
    fn a_run_is_alive_only_with_its_pid_and_its_start_time() {
        let own = RunId::own();
        assert!(own.start_time > 0);
        assert!(run_alive(own));
        assert!(
            !run_alive(RunId { start_time: own.start_time + 1, ..own }),
            "same pid, another start time: another process"
        );
        let (mut child, run) = sleeper();
        assert!(run_alive(run));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!run_alive(run), "a reaped child is dead");
    }

    #[test]
    fn cleanup_acts_only_on_the_ledgers_of_dead_runs() {
        let state = tempfile::tempdir().unwrap();
        std::fs::set_permissions(state.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let files = tempfile::tempdir().unwrap();
        let (dead_file, live_file) = (files.path().join("dead.img"), files.path().join("live.img"));
        // A decoy named as this tool once named its files: in no ledger.
        let decoy = files.path().join("schedlab-kernel-99999.img");
        for f in [&dead_file, &live_file, &decoy] {
            std::fs::write(f, "x").unwrap();
        }
        let own = RunId::own();
        let dead = RunId { start_time: own.start_time + 1, ..own };
        ledger_at(
            state.path(),
            dead,
            vec![Change::BackingFile { path: dead_file.clone(), id: Some(id_of(&dead_file)) }],
        );
        let (mut child, live) = sleeper();
        ledger_at(
            state.path(),
            live,
            vec![Change::BackingFile { path: live_file.clone(), id: Some(id_of(&live_file)) }],
        );
        let (done, problems) = cleanup_stale_in(state.path(), &[]);
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(done.len(), 1, "{done:?}");
        assert!(!dead_file.exists(), "the dead run's file is left");
        assert!(live_file.exists(), "the live run's file was removed");
        assert!(decoy.exists(), "a file named like the tool's was removed");
        let left: Vec<_> =
            std::fs::read_dir(state.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from(format!("{}-{}.json", live.pid, live.start_time))]
        );
    }

    #[test]
    fn a_recorded_file_replaced_by_another_or_by_a_link_is_left() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("backing.img");
        std::fs::write(&path, "ours").unwrap();
        let ours = id_of(&path);
        // Replaced by another file (a new inode at the name).
        let other = tmp.path().join("other");
        std::fs::write(&other, "theirs").unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert_eq!(
            undo(&Change::BackingFile { path: path.clone(), id: Some(ours) }, &[]),
            Ok(Undone::Gone)
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "theirs");
        // Replaced by a link to a file of someone else's, whose inode is the recorded one.
        let victim = tmp.path().join("victim");
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&victim, "root's").unwrap();
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        let victim_id = id_of(&victim);
        assert_eq!(
            undo(&Change::BackingFile { path: path.clone(), id: Some(victim_id) }, &[]),
            Ok(Undone::Gone)
        );
        assert!(
            std::fs::symlink_metadata(&path).is_ok() && victim.exists(),
            "the link or its target was removed"
        );
        // The file made, still there: removed.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "ours").unwrap();
        assert_eq!(
            undo(&Change::BackingFile { path: path.clone(), id: Some(id_of(&path)) }, &[]),
            Ok(Undone::PutBack)
        );
        assert!(!path.exists());
        // Never identified (its run died between the open and the record): left, said.
        std::fs::write(&path, "?").unwrap();
        let e =
            undo(&Change::BackingFile { path: path.clone(), id: None }, &[]).unwrap_err().message;
        assert!(e.contains("left") && path.exists(), "{e}");
    }

    #[test]
    fn a_recorded_directory_replaced_by_another_is_left() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("schedlab-kernel-1-0123456789abcdef");
        std::fs::create_dir(&dir).unwrap();
        let ours = id_of(&dir);
        // Another directory (made while ours exists, so another inode) renamed over it.
        let other = tmp.path().join("other");
        std::fs::create_dir(&other).unwrap();
        std::fs::rename(&other, &dir).unwrap();
        assert_eq!(
            undo(&Change::PrivateDir { path: dir.clone(), id: Some(ours) }, &[]),
            Ok(Undone::Gone)
        );
        assert!(dir.exists(), "another directory at the name was removed");
        // Ours, holding something it did not record: left, said.
        let ours = id_of(&dir);
        std::fs::write(dir.join("notes.txt"), "x").unwrap();
        let e = undo(&Change::PrivateDir { path: dir.clone(), id: Some(ours) }, &[])
            .unwrap_err()
            .message;
        assert!(e.contains("cannot remove") && dir.join("notes.txt").exists(), "{e}");
        std::fs::remove_file(dir.join("notes.txt")).unwrap();
        assert_eq!(
            undo(&Change::PrivateDir { path: dir.clone(), id: Some(ours) }, &[]),
            Ok(Undone::PutBack)
        );
        assert!(!dir.exists());
    }

    #[test]
    fn a_recorded_process_is_signalled_only_while_its_start_time_matches() {
        use std::os::unix::process::ExitStatusExt;
        let (mut child, run) = sleeper();
        let other = RunId { start_time: run.start_time + 1, ..run };
        assert_eq!(undo(&Change::Process { process: other }, &[]), Ok(Undone::Gone));
        assert!(
            child.try_wait().unwrap().is_none(),
            "a process with another start time was signalled"
        );
        assert_eq!(undo(&Change::Process { process: run }, &[]), Ok(Undone::PutBack));
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    }

    #[test]
    fn a_device_is_judged_by_what_it_is_not_by_its_name() {
        let tmp = tempfile::tempdir().unwrap();
        let loop0 = tmp.path().join("loop0");
        std::fs::write(&loop0, vec![0u8; 4096]).unwrap();
        let e = BlockDevice::open(&loop0).unwrap_err().message;
        assert!(
            e.contains("a regular file") && e.contains(&format!("owner uid {}", euid())),
            "{e}"
        );
        let e = BlockDevice::open(Path::new("/dev/null")).unwrap_err().message;
        assert!(e.contains("a character device"), "{e}");
        let e = BlockDevice::open(tmp.path()).unwrap_err().message;
        assert!(e.contains("a directory"), "{e}");
        // A link named like a device, to the regular file: judged by what it points at.
        let sda = tmp.path().join("sda");
        std::os::unix::fs::symlink(&loop0, &sda).unwrap();
        assert!(BlockDevice::open(&sda).unwrap_err().message.contains("a regular file"));
    }

    /// Detaches a scratch loop device when dropped (a failed test leaves none bound).
    struct Detach(PathBuf);

    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = Command::new("losetup").arg("-d").arg(&self.0).output();
        }
    }

    /// A loop device over a fresh file in the tmpfs (outside any ledger), and the file.
    fn scratch_loop_device() -> (DevNum, Detach, tempfile::TempPath) {
        let file = tempfile::Builder::new()
            .prefix("schedlab-detach-test-")
            .suffix(".img")
            .tempfile_in(TMPFS_DIR)
            .unwrap()
            .into_temp_path();
        std::fs::File::options().write(true).open(&file).unwrap().set_len(1 << 20).unwrap();
        let out = Command::new("losetup").args(["-f", "--show"]).arg(&file).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let node = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        (DevNum::of_rdev(std::fs::metadata(&node).unwrap().rdev()), Detach(node), file)
    }

    #[test]
    #[ignore = "needs root and a free loop device: scripts/test.sh runs it (kernel peer)"]
    fn an_unbound_loop_device_is_refused_for_its_size_0() {
        let out = Command::new("losetup").arg("-f").output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let free = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let e = BlockDevice::open(&free).unwrap_err().message;
        assert!(e.contains("size 0"), "{e}");
    }

    #[test]
    #[ignore = "needs root and a free loop device: scripts/test.sh runs it (kernel peer)"]
    fn the_setting_put_back_is_the_one_seen_before_the_first_run() {
        let (device, detach, _file) = scratch_loop_device();
        let node = &detach.0;
        let state = tempfile::tempdir().unwrap();
        std::fs::write(device.queue().join("scheduler"), "none").unwrap();
        // A first run recorded `none` and switched to mq-deadline, then died.
        let own = RunId::own();
        let dead = RunId { start_time: own.start_time + 1, ..own };
        let before = Change::QueueState {
            device,
            loop_backing: None,
            scheduler: "none".into(),
            knobs: Vec::new(),
        };
        ledger_at(state.path(), dead, vec![before]);
        std::fs::write(device.queue().join("scheduler"), "mq-deadline").unwrap();
        // The second run holds the device, then puts back the dead run's setting before it records
        // its own "before".
        let lock = lock_device_in(state.path(), device, &node.display().to_string()).unwrap();
        let ExperimentError { kind, message: again, .. } =
            lock_device_in(state.path(), device, "again").unwrap_err();
        assert!(kind == ErrorKind::BadInput && again.contains("holds"), "{again}");
        let (done, problems) = cleanup_stale_in(state.path(), &[lock.device]);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(done.len(), 1, "{done:?}");
        assert_eq!(schedulers(&device.queue()).unwrap().1, "none");
    }

    #[test]
    #[ignore = "needs root and a free loop device: scripts/test.sh runs it (kernel peer)"]
    fn a_detach_returns_only_once_the_last_holder_let_the_device_go() {
        let (device, detach, file) = scratch_loop_device();
        let node = &detach.0;
        // A holder the detach must wait out (it is not recorded, so it is not signalled).
        let mut holder =
            Command::new("sh").args(["-c", "exec 3<\"$0\"; sleep 2"]).arg(node).spawn().unwrap();
        let end = Instant::now() + Duration::from_secs(30);
        while holders_of(node).is_empty() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!holders_of(node).is_empty(), "the holder never opened {}", node.display());
        assert_eq!(detach_loops_over(id_of(&file), &file, LOOP_RELEASE), Ok(1));
        assert!(
            holder.try_wait().unwrap().is_some(),
            "the detach returned while the holder still ran"
        );
        assert!(
            !is_bound_to(device, &file),
            "{} is still bound after the detach returned",
            node.display()
        );
    }

    #[test]
    #[ignore = "needs root and a free loop device: scripts/test.sh runs it (kernel peer)"]
    fn a_detach_never_signals_a_holder_it_did_not_record() {
        let (device, detach, file) = scratch_loop_device();
        let node = &detach.0;
        // A process whose command name is `fio` (a copy of sleep), holding the device open.
        let dir = tempfile::tempdir().unwrap();
        let fio = dir.path().join("fio");
        let sleep = ["/usr/bin/sleep", "/bin/sleep"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("sleep");
        std::fs::copy(sleep, &fio).unwrap();
        let mut holder = Command::new("sh")
            .args(["-c", "exec 3<\"$0\"; exec \"$1\" 600"])
            .arg(node)
            .arg(&fio)
            .spawn()
            .unwrap();
        let end = Instant::now() + Duration::from_secs(30);
        while !holders_of(node).iter().any(|(_, comm)| comm == "fio") && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            holders_of(node).iter().any(|(_, comm)| comm == "fio"),
            "the holder never became `fio`"
        );
        // A file of the same name elsewhere is not the backing file: nothing detached.
        let elsewhere = dir.path().join("elsewhere.img");
        std::fs::write(&elsewhere, "x").unwrap();
        assert_eq!(detach_loops_over(id_of(&elsewhere), &elsewhere, Duration::ZERO), Ok(0));
        assert!(is_bound_to(device, &file));
        let e = detach_loops_over(id_of(&file), &file, Duration::from_secs(1)).unwrap_err().message;
        assert!(e.contains("held open by fio"), "{e}");
        assert!(
            holder.try_wait().unwrap().is_none(),
            "a holder this tool did not record was signalled"
        );
        holder.kill().unwrap();
        holder.wait().unwrap();
        let end = Instant::now() + LOOP_RELEASE;
        while is_bound_to(device, &file) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(!is_bound_to(device, &file), "still bound once its holder was gone");
    }

    #[test]
    #[ignore = "needs root and an I/O cgroup hierarchy: scripts/test.sh runs it (kernel peer)"]
    fn a_cgroup_holding_a_process_it_did_not_start_is_left_and_reported() {
        let io = find_cgroup_io().expect("a cgroup hierarchy with the I/O controller");
        let root = match &io {
            CgroupIo::V1 { blkio, .. } => blkio.clone(),
            CgroupIo::V2 { root } => root.clone(),
        };
        let state = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::create_in(state.path()).unwrap();
        let path = make_cgroup_dir(
            &mut ledger,
            &root.join(format!("schedlab-test-{}", std::process::id())),
        )
        .unwrap();
        let recorded = ledger.changes.last().cloned().unwrap();
        // A process this tool did not start, moved in.
        let (mut stranger, stranger_id) = sleeper();
        std::fs::write(path.join("cgroup.procs"), stranger.id().to_string()).unwrap();
        let e = undo(&recorded, &[]).unwrap_err().message;
        assert!(e.contains("did not start") && e.contains(&stranger.id().to_string()), "{e}");
        assert!(run_alive(stranger_id), "the stranger was signalled");
        assert!(path.exists(), "the cgroup was removed");
        stranger.kill().unwrap();
        stranger.wait().unwrap();
        // Empty now: the ledger puts it back.
        assert!(ledger.undo_all().is_empty());
        assert!(!path.exists());
    }

    // ---- The inventory: the notes list it, and every class has tests that exist and run ----

    fn workspace_file(relative: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(relative);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The source file a test of the inventory lives in (`file::name`).
    fn test_source(file: &str) -> &'static str {
        match file {
            "system.rs" => "benches/src/experiment/kernel/system.rs",
            "cli_kernel.rs" => "tests/cli_kernel.rs",
            "path_props.rs" => "src/path_props.rs",
            "cli_faults.rs" => "tests/cli_faults.rs",
            "lock.rs" => "benches/src/files/lock.rs",
            "output.rs" => "benches/src/files/output.rs",
            other => panic!("the inventory names a test in {other}: add where that file is"),
        }
    }

    /// The `scripts/test.sh` line that runs a file's ignored tests (the kernel peer's block).
    fn runs_ignored(file: &str) -> Option<&'static str> {
        match file {
            "system.rs" => Some("--ignored kernel::system"),
            "cli_kernel.rs" => Some("--test cli_kernel -- --ignored"),
            _ => None,
        }
    }

    /// Every row of `class` names tests that exist and that `cargo test` or `scripts/test.sh`
    /// runs.
    fn check_class(class: Class) {
        let rows: Vec<&Privileged> = INVENTORY.iter().filter(|r| r.class == class).collect();
        assert!(!rows.is_empty(), "no row of class {}", class.name());
        let script = workspace_file("scripts/test.sh");
        for row in rows {
            assert!(!row.tests.is_empty(), "{}: no test", row.what);
            for test in row.tests {
                let (file, name) =
                    test.split_once("::").unwrap_or_else(|| panic!("{test}: not file::name"));
                let source = workspace_file(test_source(file));
                let at = source
                    .find(&format!("fn {name}()"))
                    .unwrap_or_else(|| panic!("{}: no test {test}", row.what));
                let before = &source[..at];
                let attributes = &before
                    [before.rfind("#[test]").unwrap_or_else(|| panic!("{test} is no #[test]"))..];
                if attributes.contains("#[ignore") {
                    let line = runs_ignored(file)
                        .unwrap_or_else(|| panic!("{test} is ignored and nothing runs it"));
                    assert!(
                        script.contains(line),
                        "{test} is ignored and scripts/test.sh does not run `{line}`"
                    );
                }
            }
        }
    }

    macro_rules! per_class {
        ($($test:ident => $class:expr),* $(,)?) => {
            $(
                #[test]
                fn $test() {
                    check_class($class);
                }
            )*
            const CHECKED: &[Class] = &[$($class),*];
        };
    }

    per_class! {
        privileged_directories_have_tests => Class::Directory,
        privileged_files_have_tests => Class::File,
        privileged_locks_have_tests => Class::Lock,
        privileged_loop_devices_have_tests => Class::LoopDevice,
        privileged_scheduler_settings_have_tests => Class::Scheduler,
        privileged_cgroups_have_tests => Class::Cgroup,
        privileged_processes_have_tests => Class::Process,
        privileged_mounts_have_tests => Class::Mount,
    }

    #[test]
    fn every_class_is_checked_and_every_row_has_a_class_that_is() {
        // An exhaustive match: a new class does not compile until it is placed in ALL.
        let index = |c: Class| match c {
            Class::Directory => 0,
            Class::File => 1,
            Class::Lock => 2,
            Class::LoopDevice => 3,
            Class::Scheduler => 4,
            Class::Cgroup => 5,
            Class::Process => 6,
            Class::Mount => 7,
        };
        for (i, c) in Class::ALL.iter().enumerate() {
            assert_eq!(index(*c), i, "{} out of place in Class::ALL", c.name());
            assert!(CHECKED.contains(c), "{} has no generated test", c.name());
        }
    }

    #[test]
    fn the_notes_list_the_inventory_row_for_row() {
        let notes = workspace_file("notes/reliability.md");
        let heading = "## What the tool does with privilege (issue 43)";
        let section = &notes[notes
            .find(heading)
            .unwrap_or_else(|| panic!("notes/reliability.md has no `{heading}`"))..];
        let section = &section[heading.len()..];
        let section = &section[..section.find("\n## ").unwrap_or(section.len())];
        // The table's rows after its header and rule: | what | class | does | safe by | tests |
        let rows: Vec<Vec<&str>> = section
            .lines()
            .filter(|l| {
                l.starts_with("| ") && !l.starts_with("| what |") && !l.starts_with("| ---")
            })
            .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
            .collect();
        let listed: Vec<&str> = rows.iter().map(|r| r[0]).collect();
        let inventory: Vec<&str> = INVENTORY.iter().map(|r| r.what).collect();
        assert_eq!(listed, inventory, "the notes' rows and INVENTORY differ");
        for (row, entry) in rows.iter().zip(INVENTORY) {
            assert_eq!(row.len(), 5, "{}: five cells", entry.what);
            assert_eq!(row[1], entry.class.name(), "{}: its class", entry.what);
            for test in entry.tests {
                assert!(row[4].contains(test), "{}: the notes do not name {test}", entry.what);
            }
        }
    }

    #[test]
    fn changes_round_trip_through_the_ledger_format() {
        let changes = vec![
            Change::BackingFile {
                path: "/dev/shm/schedlab-kernel-1-0/backing.img".into(),
                id: Some(FileId { dev: 22, ino: 5 }),
            },
            Change::QueueState {
                device: DevNum { major: 7, minor: 0 },
                loop_backing: None,
                scheduler: "none".into(),
                knobs: vec![("slice_idle".into(), "8".into())],
            },
            Change::Process { process: RunId { pid: 12, start_time: 34 } },
        ];
        let text = serde_json::to_string(&LedgerFile {
            run: RunId { pid: 1, start_time: 2 },
            changes: changes.clone(),
        })
        .unwrap();
        let back: LedgerFile = serde_json::from_str(&text).unwrap();
        assert_eq!(back.changes, changes);
    }
}
/// Whether a process other than a zombie has process group `pgid` (`/proc/<pid>/stat`).
fn group_has_live_process(pgid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else { return false };
    entries.flatten().any(|e| {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { return false };
        // "pid (comm) state ppid pgrp ...": comm may hold spaces, so read after the last ')'.
        let Some((_, rest)) = stat.rsplit_once(')') else { return false };
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or("");
        let pgrp = fields.nth(1).and_then(|f| f.parse::<u32>().ok());
        pgrp == Some(pgid) && state != "Z" && state != "X"
    })
}

/// A process as `/proc/<pid>/stat` gives it: its parent, its state and its start time (which
/// tells a process from a later one given the same pid).
fn proc_stat(pid: u32) -> Option<(u32, char, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid pgrp ... starttime (field 22)": read after the last ')'.
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, state, start))
}

/// Every live descendant of `pid` (children, their children, ...), each with its start time.
pub(crate) fn descendants(pid: u32) -> Vec<(u32, u64)> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let all: Vec<(u32, u32, u64)> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| {
            proc_stat(p)
                .filter(|s| s.1 != 'Z' && s.1 != 'X')
                .map(|(ppid, _, start)| (p, ppid, start))
        })
        .collect();
    let mut found = Vec::new();
    let mut parents = vec![pid];
    while let Some(parent) = parents.pop() {
        for &(p, ppid, start) in &all {
            if ppid == parent && !found.iter().any(|&(q, _)| q == p) {
                found.push((p, start));
                parents.push(p);
            }
        }
    }
    found
}

/// Waits for a child up to `limit` (or until `stop`), then kills it with everything under it
/// ([`kill_tree`]). Its exit status, if it exited by itself.
pub(crate) fn wait_bounded(
    child: &mut std::process::Child,
    limit: Duration,
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> Option<std::process::ExitStatus> {
    let end = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) => {}
            Err(_) => return None,
        }
        if Instant::now() > end
            || stop.is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
        {
            // fio's job processes are its children in sessions of their own (each calls
            // `setsid()`): killed with it, by pid, or they run to the end of their runtime
            // holding fio's output pipes (which the caller reads to their end) and the loop
            // device. Waited for too, before the loop device under them is detached.
            if !kill_tree(child, KILL_WAIT) {
                tracing::warn!(
                    "pid {} or a process under it was still alive {} s after SIGKILL",
                    child.id(),
                    KILL_WAIT.as_secs()
                );
            }
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// How long [`wait_bounded`] waits for what it killed to be gone.
const KILL_WAIT: Duration = Duration::from_secs(10);

/// Kills `child`, its process group and every process under it, reaps it, and waits (at most
/// `limit`) until none of them is alive. fio's job processes each call `setsid()`: they are in
/// neither fio's process group nor its session, so a signal to the group missed them, and they
/// ran to the end of their `--runtime` holding fio's output pipes (a stop waited for them, up to
/// the run's duration) and the loop device. True when all are gone.
pub(crate) fn kill_tree(child: &mut std::process::Child, limit: Duration) -> bool {
    let pid = child.id();
    // Found before the parent dies (then they are reparented and no longer under it); the
    // parent is stopped first so that it forks no new one meanwhile.
    // SAFETY: signals to our own child and its process group; no memory is involved.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGSTOP) };
    let under = descendants(pid);
    for &(p, _) in &under {
        // SAFETY: a signal to a process under our own child, found just now by its parent.
        unsafe { libc::kill(p as libc::pid_t, libc::SIGKILL) };
    }
    // SAFETY: as above.
    unsafe { libc::kill(-(pid as libc::pid_t), libc::SIGKILL) };
    let _ = child.kill();
    let _ = child.wait();
    let end = Instant::now() + limit;
    loop {
        let alive = under.iter().any(|&(p, start)| {
            proc_stat(p).is_some_and(|(_, state, s)| s == start && state != 'Z' && state != 'X')
        });
        if !alive && !group_has_live_process(pid) {
            return true;
        }
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

//! What `schedlab kernel` changes on the machine, and how every change is put back.
//!
//! Every change is written to a ledger (`/run/schedlab-kernel/<pid>.json`) *before* it is made,
//! so that whatever stops the process, the next run (or `schedlab kernel --cleanup`) finds it:
//!
//! | change | put back by |
//! | --- | --- |
//! | a sparse backing file in a tmpfs (`/dev/shm/schedlab-kernel-<pid>.img`) | removing it |
//! | a loop device over it | `losetup -d`, then a bounded wait until the kernel has unbound it (a fio still holding it is killed) |
//! | a device's scheduler and its iosched knobs (`--device`) | writing the old values back |
//! | cgroups `schedlab-kernel-<pid>/…` (blkio v1 or io v2, and v1's cpuacct for accounting) | killing what runs in them, then `rmdir` |
//!
//! One thing is left as it is found after a run: where tracefs was not mounted, the preflight
//! mounts it at `/sys/kernel/tracing` (bpftrace needs the lock tracepoints there). It holds no
//! state of the run and changes nothing of the block layer, so it is not unmounted.
//!
//! The loop devices and files are also found without a ledger, by their names; the cgroups by
//! theirs. A run cleans up what a dead process of its own kind left (the owning pid is in every
//! name) and never touches what a live one holds. fio, bpftrace and perf are started with
//! `PR_SET_PDEATHSIG`, so that they end with the process that started them.

use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Where ledgers live.
pub const STATE_DIR: &str = "/run/schedlab-kernel";
/// Every name this tool gives (files, cgroups) starts with this, followed by the owner's pid.
pub const PREFIX: &str = "schedlab-kernel-";
/// The tmpfs that holds backing files.
pub const TMPFS_DIR: &str = "/dev/shm";

/// One change, recorded before it is made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Change {
    BackingFile { path: PathBuf },
    LoopDevice { device: PathBuf },
    /// A queue's scheduler and its knobs as they were: the scheduler is written back first (a
    /// switch resets the knobs), then each knob.
    QueueState { queue: PathBuf, scheduler: String, knobs: Vec<(String, String)> },
    Cgroup { path: PathBuf },
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Change::BackingFile { path } => write!(f, "backing file {}", path.display()),
            Change::LoopDevice { device } => write!(f, "loop device {}", device.display()),
            Change::QueueState { queue, scheduler, knobs } => write!(f, "{}: scheduler {scheduler} and {} knob(s)", queue.display(), knobs.len()),
            Change::Cgroup { path } => write!(f, "cgroup {}", path.display()),
        }
    }
}

/// The ledger of this process's changes.
#[derive(Debug)]
pub struct Ledger {
    path: PathBuf,
    changes: Vec<Change>,
}

fn pid_alive(pid: u32) -> bool {
    // SAFETY: kill with signal 0 only checks that the process exists; no memory is involved.
    let rc = unsafe { libc::kill(pid as libc::pid_t, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The owner pid in a name made by this tool (`schedlab-kernel-1234`, `...-1234.img`).
fn owner_of(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

impl Ledger {
    /// Opens this process's ledger (empty).
    pub fn create() -> Result<Ledger, String> {
        std::fs::create_dir_all(STATE_DIR).map_err(|e| format!("cannot create {STATE_DIR}: {e}"))?;
        let ledger = Ledger { path: Path::new(STATE_DIR).join(format!("{}.json", std::process::id())), changes: Vec::new() };
        ledger.save()?;
        Ok(ledger)
    }

    fn save(&self) -> Result<(), String> {
        let text = serde_json::to_string_pretty(&self.changes).map_err(|e| e.to_string())?;
        let tmp = self.path.with_extension("json.tmp");
        std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &self.path)).map_err(|e| format!("cannot write the ledger {}: {e}", self.path.display()))
    }

    /// Records a change about to be made.
    pub fn record(&mut self, change: Change) -> Result<(), String> {
        self.changes.push(change);
        self.save()
    }

    /// Puts back every change, newest first, and removes the ledger. Returns what could not be
    /// put back (one line each).
    pub fn undo_all(&mut self) -> Vec<String> {
        let mut problems = Vec::new();
        while let Some(change) = self.changes.pop() {
            if let Err(e) = undo(&change) {
                problems.push(e);
            }
            let _ = self.save();
        }
        let _ = std::fs::remove_file(&self.path);
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

/// Puts back one change.
fn undo(change: &Change) -> Result<(), String> {
    match change {
        Change::BackingFile { path } => match std::fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("cannot remove {}: {e}", path.display())),
        },
        Change::LoopDevice { device } => detach_loop(device),
        Change::Cgroup { path } => remove_cgroup(path),
        Change::QueueState { queue, scheduler, knobs } => {
            if !queue.join("scheduler").exists() {
                return Ok(());
            }
            std::fs::write(queue.join("scheduler"), scheduler).map_err(|e| format!("cannot restore {}'s scheduler to `{scheduler}`: {e}", queue.display()))?;
            let mut failed = Vec::new();
            for (knob, value) in knobs {
                if std::fs::write(queue.join("iosched").join(knob), value).is_err() {
                    failed.push(knob.as_str());
                }
            }
            if failed.is_empty() {
                Ok(())
            } else {
                Err(format!("cannot restore {}'s iosched knobs {}", queue.display(), failed.join(", ")))
            }
        }
    }
}

/// Records a queue's scheduler and its current knobs (see [`Change::QueueState`]).
pub fn record_queue_state(ledger: &mut Ledger, queue: &Path) -> Result<(), String> {
    let (_, scheduler) = schedulers(queue)?;
    let mut knobs = Vec::new();
    if let Ok(entries) = std::fs::read_dir(queue.join("iosched")) {
        for e in entries.flatten() {
            use std::os::unix::fs::PermissionsExt;
            let writable = e.metadata().is_ok_and(|m| m.permissions().mode() & 0o200 != 0);
            if let (true, Ok(v)) = (writable, std::fs::read_to_string(e.path())) {
                knobs.push((e.file_name().to_string_lossy().into_owned(), v.trim().to_string()));
            }
        }
    }
    ledger.record(Change::QueueState { queue: queue.to_path_buf(), scheduler: if scheduler.is_empty() { "none".into() } else { scheduler }, knobs })
}

/// Puts back this process's own changes from its ledger file, for a process about to exit without
/// unwinding (a second signal): whatever the ledger recorded, newest first.
pub fn undo_own_ledger() {
    let path = Path::new(STATE_DIR).join(format!("{}.json", std::process::id()));
    let Ok(text) = std::fs::read_to_string(&path) else { return };
    let changes: Vec<Change> = serde_json::from_str(&text).unwrap_or_default();
    for change in changes.iter().rev() {
        let _ = undo(change);
    }
    let _ = std::fs::remove_file(&path);
}

/// How long a detach waits for the kernel to let the loop device go. `losetup -d` on a device
/// still open only sets autoclear; the kernel unbinds it at the last close, and since Linux 5.17
/// does so from a work item, a moment after that close. Within this bound the device's last
/// openers (fio's job processes, killed a moment before) are gone on a loaded 2-CPU machine.
const LOOP_RELEASE: Duration = Duration::from_secs(30);

/// Detaches one of this tool's loop devices and waits (at most [`LOOP_RELEASE`]) until the kernel
/// has unbound it, so that a run that says it put everything back did. fio processes still holding
/// it open are killed: only this tool points fio at a device backed by one of its files. An error
/// names whatever else still holds it.
fn detach_loop(device: &Path) -> Result<(), String> {
    let bound = || is_bound(device);
    if !bound() {
        return Ok(()); // not bound any more
    }
    let out = Command::new("losetup").arg("-d").arg(device).output().map_err(|e| format!("cannot run losetup: {e}"))?;
    if !out.status.success() && bound() {
        return Err(format!("losetup -d {}: {}", device.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    let end = Instant::now() + LOOP_RELEASE;
    while bound() {
        let holders = holders_of(device);
        for (pid, comm) in &holders {
            if comm == "fio" {
                // SAFETY: a signal involves no memory of ours; the process holds open a loop
                // device over one of this tool's backing files, which only this tool's fio opens.
                unsafe { libc::kill(*pid as libc::pid_t, libc::SIGKILL) };
            }
        }
        if Instant::now() > end {
            let held: Vec<String> = holders.iter().map(|(pid, comm)| format!("{comm} (pid {pid})")).collect();
            return Err(format!(
                "{} is still bound {} s after losetup -d: {}; the kernel detaches it when it is closed",
                device.display(),
                LOOP_RELEASE.as_secs(),
                if held.is_empty() { "no process holds it open".to_string() } else { format!("held open by {}", held.join(", ")) }
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Whether a loop device is bound to a backing file (`/sys/block/<name>/loop` exists).
fn is_bound(device: &Path) -> bool {
    device.file_name().is_some_and(|name| Path::new("/sys/block").join(name).join("loop").exists())
}

/// The processes with `device` open (pid and command name), from `/proc/<pid>/fd`.
fn holders_of(device: &Path) -> Vec<(u32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut found = Vec::new();
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else { continue };
        let Ok(fds) = std::fs::read_dir(e.path().join("fd")) else { continue };
        if fds.flatten().any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == device)) {
            let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            found.push((pid, comm.trim().to_string()));
        }
    }
    found
}

/// Kills what runs in a cgroup (and its children), then removes them, deepest first.
fn remove_cgroup(path: &Path) -> Result<(), String> {
    if !path.exists() {
        return Ok(());
    }
    let mut dirs = vec![path.to_path_buf()];
    let mut i = 0;
    while i < dirs.len() {
        if let Ok(entries) = std::fs::read_dir(&dirs[i]) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    dirs.push(e.path());
                }
            }
        }
        i += 1;
    }
    for dir in dirs.iter().rev() {
        for attempt in 0..50 {
            let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                // SAFETY: sending a signal involves no memory of ours; the pid was read from a
                // cgroup this tool made, which only its own fio processes join.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            match std::fs::remove_dir(dir) {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) => {
                    if attempt == 49 {
                        return Err(format!("cannot remove cgroup {}: {e}", dir.display()));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            }
        }
    }
    Ok(())
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
                let controllers = std::fs::read_to_string(Path::new(f[1]).join("cgroup.controllers")).unwrap_or_default();
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

/// The directories every cleanup scan looks in for cgroups named [`PREFIX`]`<pid>`.
fn cgroup_roots() -> Vec<PathBuf> {
    match find_cgroup_io() {
        Some(CgroupIo::V1 { blkio, cpuacct }) => std::iter::once(blkio).chain(cpuacct).collect(),
        Some(CgroupIo::V2 { root }) => vec![root],
        None => Vec::new(),
    }
}

/// Finds and removes what dead runs left: their ledgers' changes, loop devices over their
/// backing files, the files, their cgroups. Returns one line per thing put back, and one per
/// problem.
pub fn cleanup_stale() -> (Vec<String>, Vec<String>) {
    let (mut done, mut problems) = (Vec::new(), Vec::new());
    let me = std::process::id();
    let dead = |pid: u32| pid != me && !pid_alive(pid);
    // 1. Ledgers of dead processes: every change they recorded (scheduler settings of a
    //    `--device` first of all: nothing else would find those).
    if let Ok(entries) = std::fs::read_dir(STATE_DIR) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name.strip_suffix(".json").and_then(|p| p.parse::<u32>().ok()) else { continue };
            if !dead(pid) {
                continue;
            }
            let changes: Vec<Change> = std::fs::read_to_string(e.path()).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
            for change in changes.iter().rev() {
                match undo(change) {
                    Ok(()) => done.push(format!("put back {change} (left by pid {pid})")),
                    Err(p) => problems.push(p),
                }
            }
            let _ = std::fs::remove_file(e.path());
            let _ = std::fs::remove_file(e.path().with_extension("json.tmp"));
        }
    }
    // 2. Loop devices over a backing file of a dead run, even without a ledger entry.
    if let Ok(entries) = std::fs::read_dir("/sys/block") {
        for e in entries.flatten() {
            let backing = std::fs::read_to_string(e.path().join("loop/backing_file")).unwrap_or_default();
            let backing = backing.trim();
            let file = Path::new(backing).file_name().and_then(|n| n.to_str()).unwrap_or("");
            if let Some(pid) = owner_of(file).filter(|&p| dead(p)) {
                let device = Path::new("/dev").join(e.file_name());
                match detach_loop(&device) {
                    Ok(()) => done.push(format!("detached {} (left by pid {pid})", device.display())),
                    Err(p) => problems.push(p),
                }
            }
        }
    }
    // 3. Backing files.
    if let Ok(entries) = std::fs::read_dir(TMPFS_DIR) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = owner_of(&name).filter(|&p| dead(p)) {
                match std::fs::remove_file(e.path()) {
                    Ok(()) => done.push(format!("removed {} (left by pid {pid})", e.path().display())),
                    Err(err) => problems.push(format!("cannot remove {}: {err}", e.path().display())),
                }
            }
        }
    }
    // 4. Cgroups.
    for root in cgroup_roots() {
        if let Ok(entries) = std::fs::read_dir(&root) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Some(pid) = owner_of(&name).filter(|&p| dead(p)) {
                    match remove_cgroup(&e.path()) {
                        Ok(()) => done.push(format!("removed cgroup {} (left by pid {pid})", e.path().display())),
                        Err(p) => problems.push(p),
                    }
                }
            }
        }
    }
    (done, problems)
}

/// The queue directory of a block device (`/sys/block/<name>/queue`).
pub fn queue_dir(device: &Path) -> Result<PathBuf, String> {
    let canonical = std::fs::canonicalize(device).map_err(|e| format!("{}: {e}", device.display()))?;
    let name = canonical.file_name().and_then(|n| n.to_str()).ok_or_else(|| format!("{}: not a block device", device.display()))?;
    let dir = Path::new("/sys/block").join(name).join("queue");
    if dir.join("scheduler").exists() {
        Ok(dir)
    } else {
        Err(format!("{}: not a whole block device with a scheduler (no {})", device.display(), dir.join("scheduler").display()))
    }
}

/// The schedulers a queue offers and the one in use (`none mq-deadline [bfq]`).
pub fn schedulers(queue: &Path) -> Result<(Vec<String>, String), String> {
    let text = std::fs::read_to_string(queue.join("scheduler")).map_err(|e| format!("cannot read {}: {e}", queue.join("scheduler").display()))?;
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
pub fn mounted(device: &Path) -> Result<Option<String>, String> {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(device).map_err(|e| format!("{}: {e}", device.display()))?.rdev();
    let mut ids = vec![format!("{}:{}", libc::major(rdev), libc::minor(rdev))];
    let name = std::fs::canonicalize(device).ok().and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned())).unwrap_or_default();
    if let Ok(children) = std::fs::read_dir(Path::new("/sys/block").join(&name)) {
        for c in children.flatten() {
            if c.path().join("partition").exists() {
                if let Ok(dev) = std::fs::read_to_string(c.path().join("dev")) {
                    ids.push(dev.trim().to_string());
                }
            }
        }
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| format!("cannot read mountinfo: {e}"))?;
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 5 && ids.iter().any(|id| id == f[2]) {
            return Ok(Some(f[4].to_string()));
        }
    }
    let target = std::fs::canonicalize(device).ok();
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    if swaps.lines().skip(1).any(|l| l.split_whitespace().next().is_some_and(|d| std::fs::canonicalize(d).ok() == target)) {
        return Ok(Some("swap".into()));
    }
    Ok(None)
}

/// The loop device made for a run and the file behind it.
#[derive(Clone, Debug, Serialize)]
pub struct LoopDevice {
    pub device: PathBuf,
    pub backing: PathBuf,
    pub size_bytes: u64,
    /// The loop device reads its file with direct I/O (tmpfs takes O_DIRECT since 6.6).
    pub direct_io: bool,
}

/// Makes a sparse file in the tmpfs and a loop device over it (direct I/O where the kernel
/// takes it), recording both first.
pub fn make_loop_device(ledger: &mut Ledger, size_bytes: u64) -> Result<LoopDevice, String> {
    let backing = Path::new(TMPFS_DIR).join(format!("{PREFIX}{}.img", std::process::id()));
    ledger.record(Change::BackingFile { path: backing.clone() })?;
    let file = std::fs::File::create(&backing).map_err(|e| format!("cannot create {}: {e}", backing.display()))?;
    file.set_len(size_bytes).map_err(|e| format!("cannot size {}: {e}", backing.display()))?;
    drop(file);
    let out = Command::new("losetup")
        .args(["-f", "--show", "--direct-io=on"])
        .arg(&backing)
        .output()
        .map_err(|e| format!("cannot run losetup: {e}"))?;
    if !out.status.success() {
        return Err(format!("losetup -f: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    let device = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    // Recorded right after: a process killed in between leaves a device that the scan by backing
    // file name finds (cleanup_stale).
    ledger.record(Change::LoopDevice { device: device.clone() })?;
    let name = device.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
    let direct_io = std::fs::read_to_string(Path::new("/sys/block").join(&name).join("loop/dio")).is_ok_and(|s| s.trim() == "1");
    Ok(LoopDevice { device, backing, size_bytes, direct_io })
}

/// Whether a free loop device can be had (`losetup -f` finds one, or loop-control can add one).
pub fn free_loop_device() -> Result<(), String> {
    let out = Command::new("losetup").arg("-f").output().map_err(|e| format!("cannot run losetup (util-linux / mount package): {e}"))?;
    if out.status.success() && !out.stdout.is_empty() {
        Ok(())
    } else {
        Err(format!("no free loop device: {}", String::from_utf8_lossy(&out.stderr).trim()))
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
    /// time and so that clean-up finds every process.
    pub accounting: Option<PathBuf>,
}

/// Makes the parent cgroup and `groups` children with the weights given in turn (BFQ's weight
/// file: `blkio.bfq.weight` in v1, `io.bfq.weight` in v2), recording each before it is made.
pub fn make_cgroups(ledger: &mut Ledger, io: &CgroupIo, groups: usize, weights: &[u64]) -> Result<Cgroups, String> {
    let name = format!("{PREFIX}{}", std::process::id());
    let mkdir = |ledger: &mut Ledger, path: PathBuf| -> Result<PathBuf, String> {
        ledger.record(Change::Cgroup { path: path.clone() })?;
        match std::fs::create_dir(&path) {
            Ok(()) => Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(path),
            Err(e) => Err(format!("cannot create cgroup {}: {e}", path.display())),
        }
    };
    let (parent, accounting, weight_file) = match io {
        CgroupIo::V1 { blkio, cpuacct } => {
            let parent = mkdir(ledger, blkio.join(&name))?;
            let accounting = match cpuacct {
                Some(c) if c != blkio => Some(mkdir(ledger, c.join(&name))?),
                _ => None,
            };
            (parent, accounting, "blkio.bfq.weight")
        }
        CgroupIo::V2 { root } => {
            let parent = mkdir(ledger, root.join(&name))?;
            if groups > 0 {
                std::fs::write(parent.join("cgroup.subtree_control"), "+io").map_err(|e| format!("cannot enable io in {}: {e}", parent.display()))?;
            }
            // No accounting cgroup: v2 keeps processes out of a cgroup that enables a
            // controller for its children, and the CPU per I/O comes from /proc/stat anyway.
            (parent, None, "io.bfq.weight")
        }
    };
    let mut out = Cgroups { io: io.clone(), parent: parent.clone(), groups: Vec::new(), accounting };
    for i in 0..groups {
        let g = mkdir(ledger, parent.join(format!("g{i}")))?;
        let w = weights[i % weights.len()];
        let wf = g.join(weight_file);
        if wf.exists() {
            std::fs::write(&wf, w.to_string()).map_err(|e| format!("cannot set {}: {e}", wf.display()))?;
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
    stat.lines().find_map(|l| l.strip_prefix("usage_usec ")).and_then(|v| v.trim().parse::<u64>().ok()).map(|us| us * 1000)
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
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        // The fields after the command name (which may hold spaces and parentheses).
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else { continue };
        // state ppid pgrp session tty_nr tpgid flags: flags is the 7th after the name.
        let flags = rest.split_whitespace().nth(6).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
        if flags & PF_KTHREAD == 0 {
            continue;
        }
        if let Some(ns) = std::fs::read_to_string(e.path().join("schedstat")).ok().and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok())) {
            out.insert(pid, ns);
        }
    }
    out
}

/// What kernel threads used between two [`kthreads_runtime_ns`] snapshots, ns: a thread seen
/// only in the second counts whole (it started in between); one seen only in the first is lost
/// (kworkers retire after minutes idle, not within a run).
pub fn kthreads_delta_ns(before: &std::collections::BTreeMap<u32, u64>, after: &std::collections::BTreeMap<u32, u64>) -> u64 {
    after.iter().map(|(pid, &ns)| ns.saturating_sub(before.get(pid).copied().unwrap_or(0))).sum()
}

/// This process's CPU time so far, ns (every thread's `schedstat`).
pub fn own_runtime_ns() -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc/self/task") else { return 0 };
    entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()))
        .sum()
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
    pub fn of(machine_s: f64, root_ns: u64, fio_ns: u64, kthreads_ns: u64, own_ns: u64) -> CpuSplit {
        let others_ns = root_ns.saturating_sub(fio_ns + kthreads_ns + own_ns);
        // NOTE: ticks (/proc/stat) and runtimes (cgroups, schedstat) are different clocks; over
        // a window of seconds they differ by a few ticks, and the experiment's share is clamped
        // to at least fio's and the kernel threads' own.
        let untasked_s = (machine_s - root_ns as f64 / 1e9).max(0.0);
        CpuSplit { machine_s, experiment_s: (fio_ns + kthreads_ns) as f64 / 1e9 + untasked_s, others_s: others_ns as f64 / 1e9 }
    }
}

/// A command's child setup: join these cgroups (their `cgroup.procs`, opened before the fork)
/// and die with the parent.
pub struct ChildSetup {
    procs: Vec<std::fs::File>,
}

impl ChildSetup {
    pub fn new(cgroups: &[&Path]) -> Result<ChildSetup, String> {
        let procs = cgroups
            .iter()
            .map(|c| {
                std::fs::OpenOptions::new().write(true).open(c.join("cgroup.procs")).map_err(|e| format!("cannot open {}: {e}", c.join("cgroup.procs").display()))
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

/// Why this machine cannot run the kernel experiment, if it cannot: one line naming what to
/// install or change.
pub fn preflight(need_cgroups: bool, need_bpftrace: bool, device: Option<&Path>) -> Result<Option<CgroupIo>, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("schedlab kernel needs root (it makes loop devices, switches schedulers, makes cgroups)".into());
    }
    for (tool, package) in [("fio", "fio"), ("perf", "linux-perf")] {
        if !on_path(tool) {
            return Err(format!("`{tool}` not found: install it (Debian: apt-get install {package})"));
        }
    }
    if need_bpftrace && !on_path("bpftrace") {
        return Err("`bpftrace` not found: install it (Debian: apt-get install bpftrace), or pass --contention off".into());
    }
    if need_bpftrace && !Path::new("/sys/kernel/tracing/events/lock/contention_begin").exists() && !Path::new("/sys/kernel/debug/tracing/events/lock/contention_begin").exists() {
        // tracefs may just not be mounted yet.
        let _ = Command::new("mount").args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"]).output();
        if !Path::new("/sys/kernel/tracing/events/lock/contention_begin").exists() {
            return Err("this kernel has no lock:contention_begin tracepoint (Linux 5.19 or later, tracefs mounted): pass --contention off".into());
        }
    }
    match device {
        Some(d) => {
            if let Some(m) = mounted(d)? {
                return Err(format!("{} holds a mounted filesystem ({m}): refused", d.display()));
            }
            let queue = queue_dir(d)?;
            let (all, _) = schedulers(&queue)?;
            if !all.iter().any(|s| s == "bfq") {
                return Err(format!("no BFQ in this kernel for {} (schedulers: {}): modprobe bfq, or a kernel with CONFIG_IOSCHED_BFQ", d.display(), all.join(" ")));
            }
        }
        None => {
            if !on_path("losetup") {
                return Err("`losetup` not found: install it (Debian: apt-get install mount)".into());
            }
            free_loop_device()?;
            if !bfq_available() {
                return Err("no BFQ in this kernel (no loop device offers it): modprobe bfq, or a kernel with CONFIG_IOSCHED_BFQ".into());
            }
            if !is_tmpfs(Path::new(TMPFS_DIR)) {
                return Err(format!("{TMPFS_DIR} is not a tmpfs: give an existing device with --device"));
            }
        }
    }
    if need_cgroups {
        return match find_cgroup_io() {
            Some(io) => Ok(Some(io)),
            None => Err("no cgroup hierarchy with the I/O controller is mounted (blkio v1 or io v2): run with --groups 0".into()),
        };
    }
    Ok(find_cgroup_io())
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
    !any && std::fs::read_to_string("/proc/modules").is_ok_and(|m| m.lines().any(|l| l.starts_with("bfq ")))
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
        std::env::split_paths(&p).any(|d| std::fs::metadata(d.join(tool)).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(kthreads_delta_ns(&before, &after), 80, "50 more, none more, a new one's 30; a gone one's lost");
    }

    #[test]
    fn owners_are_read_from_names_this_tool_gives() {
        assert_eq!(owner_of("schedlab-kernel-1234"), Some(1234));
        assert_eq!(owner_of("schedlab-kernel-1234.img"), Some(1234));
        assert_eq!(owner_of("schedlab-kernel-"), None);
        assert_eq!(owner_of("other-1234"), None);
    }

    /// A loop device over a fresh file in the tmpfs (named outside this tool's prefix, so that no
    /// cleanup scan takes it for a run's), and the file.
    fn scratch_loop_device() -> (PathBuf, tempfile::TempPath) {
        let file = tempfile::Builder::new().prefix("schedlab-detach-test-").suffix(".img").tempfile_in(TMPFS_DIR).unwrap().into_temp_path();
        std::fs::File::options().write(true).open(&file).unwrap().set_len(1 << 20).unwrap();
        let out = Command::new("losetup").args(["-f", "--show"]).arg(&file).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()), file)
    }

    #[test]
    #[ignore = "needs root and a free loop device: scripts/test.sh runs it with the kernel peer's tests"]
    fn a_detach_returns_only_once_the_last_holder_let_the_device_go() {
        let (device, _file) = scratch_loop_device();
        // A holder the detach must wait out (it is no fio, so it is not killed).
        let mut holder = Command::new("sh").args(["-c", "exec 3<\"$0\"; sleep 2"]).arg(&device).spawn().unwrap();
        let end = Instant::now() + Duration::from_secs(30);
        while holders_of(&device).is_empty() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!holders_of(&device).is_empty(), "the holder never opened {}", device.display());
        detach_loop(&device).unwrap();
        assert!(holder.try_wait().unwrap().is_some(), "detach_loop returned while the holder still ran");
        assert!(!is_bound(&device), "{} is still bound after detach_loop returned", device.display());
    }

    #[test]
    #[ignore = "needs root and a free loop device: scripts/test.sh runs it with the kernel peer's tests"]
    fn a_detach_kills_a_fio_that_still_holds_the_device() {
        let (device, _file) = scratch_loop_device();
        // A process whose command name is `fio` (a copy of sleep), holding the device open.
        let dir = tempfile::tempdir().unwrap();
        let fio = dir.path().join("fio");
        let sleep = ["/usr/bin/sleep", "/bin/sleep"].into_iter().find(|p| Path::new(p).exists()).expect("sleep");
        std::fs::copy(sleep, &fio).unwrap();
        let mut holder = Command::new("sh").args(["-c", "exec 3<\"$0\"; exec \"$1\" 600"]).arg(&device).arg(&fio).spawn().unwrap();
        let end = Instant::now() + Duration::from_secs(30);
        while !holders_of(&device).iter().any(|(_, comm)| comm == "fio") && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(holders_of(&device).iter().any(|(_, comm)| comm == "fio"), "the holder never became `fio`");
        detach_loop(&device).unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(holder.wait().unwrap().signal(), Some(libc::SIGKILL), "the fio holding the device was not killed");
        assert!(!is_bound(&device));
    }

    #[test]
    fn changes_round_trip_through_the_ledger_format() {
        let changes = vec![
            Change::BackingFile { path: "/dev/shm/schedlab-kernel-1.img".into() },
            Change::QueueState { queue: "/sys/block/loop0/queue".into(), scheduler: "none".into(), knobs: vec![("slice_idle".into(), "8".into())] },
        ];
        let text = serde_json::to_string(&changes).unwrap();
        let back: Vec<Change> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, changes);
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
fn descendants(pid: u32) -> Vec<(u32, u64)> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let all: Vec<(u32, u32, u64)> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| proc_stat(p).filter(|s| s.1 != 'Z' && s.1 != 'X').map(|(ppid, _, start)| (p, ppid, start)))
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
pub(crate) fn wait_bounded(child: &mut std::process::Child, limit: Duration, stop: Option<&std::sync::atomic::AtomicBool>) -> Option<std::process::ExitStatus> {
    let end = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) => {}
            Err(_) => return None,
        }
        if Instant::now() > end || stop.is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed)) {
            // fio's job processes are its children in sessions of their own (each calls
            // `setsid()`): killed with it, by pid, or they run to the end of their runtime
            // holding fio's output pipes (which the caller reads to their end) and the loop
            // device. Waited for too, before the loop device under them is detached.
            if !kill_tree(child, KILL_WAIT) {
                tracing::warn!("pid {} or a process under it was still alive {} s after SIGKILL", child.id(), KILL_WAIT.as_secs());
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
        let alive = under.iter().any(|&(p, start)| proc_stat(p).is_some_and(|(_, state, s)| s == start && state != 'Z' && state != 'X'));
        if !alive && !group_has_live_process(pid) {
            return true;
        }
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

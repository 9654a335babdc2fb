//! Output files that cannot lose work or damage what they point at.
//!
//! Every output path of the CLI (`--json`, `--csv`, `--svg`, `--trace`, the files under `--out`)
//! goes through [`OutputFile`]:
//!
//! 1. [`OutputFile::check`] runs *before any work*: the path must not be a directory (nor end in
//!    `/`), its directory must exist and accept a new file (a temporary file is created there and
//!    removed at once: the only test that a read-only mount, a full quota or root's missing
//!    permission cannot fool). A bad path costs the user a second, not a measurement.
//! 2. What the path is decides how it is written:
//!
//! | the path is | written how |
//! | --- | --- |
//! | missing, or a regular file | to a temporary file in the same directory, flushed to disk, then renamed over the path: readers see the old file or the new one, never half of one; a failure leaves the old file as it was |
//! | a symlink | resolved (up to 40 links); the link itself is never removed or replaced. A link to a regular or missing file: that file is replaced as above, in *its* directory. A link to anything else: written through |
//! | a character or block device (`/dev/null`, `/dev/full`, a tty), a FIFO | written through: opened for writing as it is, never truncated, removed or replaced. A FIFO with no reader is an error, not a wait |
//! | one of this process's descriptors (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`, process substitution's `/dev/fd/63`, or the very file or pipe the shell redirected stdout or stderr to) | written through a duplicate of the descriptor (its append mode and offset honoured), stdout after what the process printed: never renamed over, so a redirected `> out.txt` keeps the tables and gains the output, and `3>>log` is appended to. A descriptor not open for writing is refused at the check |
//! | a name longer than 255 bytes | refused at the check (the temporary file's name is kept within the limit for any legal name) |
//! | a directory, a socket | refused at the check |
//!
//! Two outputs of one command that are the same regular file, or an output that is one of the
//! command's inputs, would destroy each other: [`OutputFile::identity`] and [`file_identity`]
//! give what the CLI compares before any work (written-through outputs cannot alias: they
//! destroy nothing).
//!
//! A failed write (a full disk, `/dev/full`, a FIFO whose reader left) is an `Err` with one line
//! naming the path and the OS error; the callers print it and exit non-zero, and print no "wrote"
//! line for it.
//!
//! [`Stream`] is the same for files written piece by piece by another thread (the trace writer):
//! its writer never fails (the first error is kept and the rest of the bytes dropped, so a
//! writer thread that unwraps cannot panic), and [`Stream::commit`] reports the error or renames
//! the finished file into place.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Why an output cannot be written: one line naming the path as the user gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputError {
    /// An empty path.
    EmptyPath,
    /// The file `path` cannot be written: `why`.
    File { path: PathBuf, why: String },
    /// Nothing can be written into the directory `path`: `why`.
    Directory { path: PathBuf, why: String },
    /// `path`'s symbolic links go on past 40.
    SymlinkLoop { path: PathBuf },
    /// The symbolic link `link` cannot be read: `why`.
    UnreadableSymlink { link: PathBuf, why: String },
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OutputError::EmptyPath => f.write_str("an output path is empty"),
            OutputError::File { path, why } => write!(f, "cannot write {}: {why}", path.display()),
            OutputError::Directory { path, why } => {
                write!(f, "cannot write into {}: {why}", path.display())
            }
            OutputError::SymlinkLoop { path } => {
                write!(f, "{}: too many levels of symbolic links", path.display())
            }
            OutputError::UnreadableSymlink { link, why } => {
                write!(f, "cannot read the symlink {}: {why}", link.display())
            }
        }
    }
}

impl std::error::Error for OutputError {}

/// The one line, for a caller that keeps messages (`ExperimentError::bad_input` and
/// `output_failed` take it: which one is the caller's, by when it writes).
impl From<OutputError> for String {
    fn from(e: OutputError) -> String {
        e.to_string()
    }
}

/// `OutputError::File` of `path`.
fn cannot_write(path: &Path, why: impl Into<String>) -> OutputError {
    OutputError::File { path: path.to_path_buf(), why: why.into() }
}

/// Temporary files not yet renamed into place, for [`remove_temporary_files`].
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes the temporary files of outputs not yet finished: for a process about to exit without
/// unwinding (a second signal), which would otherwise leave them behind. Finished outputs are
/// not touched.
pub fn remove_temporary_files() {
    if let Ok(mut pending) = PENDING.lock() {
        for path in pending.drain(..) {
            let _ = std::fs::remove_file(path);
        }
    }
    super::lock::release_all();
}

/// How the bytes reach the path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    /// A regular file (or none yet) at `target`: temporary file + rename.
    Replace,
    /// A device or a FIFO: opened and written as it is.
    Through { fifo: bool },
    /// One of this process's open descriptors (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`, or
    /// the very file the shell redirected stdout or stderr to): written through a duplicate of
    /// the descriptor, so its append mode and offset are honoured, never renamed over.
    Descriptor(i32),
}

/// The longest file name the file systems here take (Linux's NAME_MAX).
pub const NAME_MAX: usize = 255;

/// Whether `fd`, which the output `path` names, is open for writing in this process.
fn descriptor_writable(fd: i32, path: &Path) -> Result<(), OutputError> {
    // SAFETY: F_GETFL reads the flags of a descriptor number; an unopened one is EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(cannot_write(path, format!("descriptor {fd} is not open")));
    }
    match flags & libc::O_ACCMODE {
        libc::O_WRONLY | libc::O_RDWR => Ok(()),
        _ => Err(cannot_write(path, format!("descriptor {fd} is not open for writing"))),
    }
}

/// A duplicate of this process's descriptor `fd` (same open file, same offset and append mode),
/// after flushing what the process has buffered for stdout, so that the output comes after what
/// was printed.
fn descriptor_file(fd: i32) -> io::Result<File> {
    use std::os::fd::FromRawFd;
    if fd == 1 {
        io::stdout().lock().flush()?;
    }
    // SAFETY: F_DUPFD_CLOEXEC makes a new descriptor (or fails) and touches nothing else.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if dup < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `dup` was just made by fcntl and is owned by nothing else: the File owns it now.
    Ok(unsafe { File::from_raw_fd(dup) })
}

/// The descriptor number a path names when it is an entry of this process's descriptor
/// directory (`/dev/fd/N`, `/proc/self/fd/N`, `/proc/thread-self/fd/N`, `/proc/PID/fd/N`),
/// directly or through symlinks (`/dev/stdout`).
fn descriptor_of(path: &Path) -> Option<i32> {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        if let Some(fd) = fd_entry(&at) {
            return Some(fd);
        }
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&at).ok()?;
                at = match at.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return None,
        }
    }
    None
}

/// `Some(N)` when `path` is `DIR/N` and DIR is this process's (or one of its threads')
/// descriptor directory.
fn fd_entry(path: &Path) -> Option<i32> {
    let fd: i32 = path.file_name()?.to_str()?.parse().ok()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => return None,
    };
    let dir = std::fs::canonicalize(parent).ok()?;
    let own = Path::new("/proc").join(std::process::id().to_string());
    if dir == own.join("fd") {
        return Some(fd);
    }
    let rest = dir.strip_prefix(own.join("task")).ok()?;
    (rest.components().count() == 2 && rest.ends_with("fd")).then_some(fd)
}

/// Which file a path names, to tell whether two paths name the same one: its device and inode
/// when it exists (symlinks followed), else its directory's and its own name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileIdentity {
    Inode { dev: u64, ino: u64 },
    New { dir: PathBuf, name: std::ffi::OsString },
}

/// The identity of an existing file (an input), following symlinks; `None` when it cannot be
/// read (the input's own check reports that).
pub fn file_identity(path: &Path) -> Option<FileIdentity> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| FileIdentity::Inode { dev: m.dev(), ino: m.ino() })
}

/// The identity of the file `path` names or will name once written: an existing file's (symlinks
/// followed), else the canonical form of its nearest existing ancestor with the rest of the path,
/// so that `d/x`, `./d/x` and `d/../d/x` are one file even before `d` exists.
pub fn future_identity(path: &Path) -> Option<FileIdentity> {
    let target = resolve(path).ok()?;
    if let Some(id) = file_identity(&target) {
        return Some(id);
    }
    let name = target.file_name()?.to_os_string();
    let mut dir = directory_of(&target);
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = std::fs::canonicalize(&dir) {
            let dir =
                rest.iter().rev().fold(canonical, |d: PathBuf, c: &std::ffi::OsString| d.join(c));
            return Some(FileIdentity::New { dir, name });
        }
        rest.push(dir.file_name()?.to_os_string());
        dir = directory_of(&dir);
    }
}

/// Whether `path` is this process's standard output or error (the same open file): its
/// descriptor.
fn standard_stream(path: &Path) -> Option<i32> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let target = std::fs::metadata(path).ok()?;
    let same = |fd: std::os::fd::BorrowedFd<'_>| {
        fd.try_clone_to_owned()
            .ok()
            .and_then(|fd| File::from(fd).metadata().ok())
            .is_some_and(|m| m.dev() == target.dev() && m.ino() == target.ino())
    };
    if same(io::stdout().as_fd()) {
        Some(1)
    } else if same(io::stderr().as_fd()) {
        Some(2)
    } else {
        None
    }
}

/// An output path, checked.
#[derive(Clone, Debug)]
pub struct OutputFile {
    /// The path as the user gave it (for messages).
    path: PathBuf,
    /// Where the bytes go: the path, or the file at the end of its symlinks.
    target: PathBuf,
    kind: Kind,
}

/// An I/O error as one short line (tempfile appends ` at path "..."` to its errors: the caller
/// names the path already).
fn one_line(e: &io::Error) -> String {
    let text = e.to_string();
    let line = text.lines().next().unwrap_or("");
    let line = line.split(" at path \"").next().unwrap_or(line);
    // (tempfile wraps the OS error with its path: its kind stays, its number does not.)
    if e.kind() == io::ErrorKind::FileTooLarge || e.raw_os_error() == Some(libc::EFBIG) {
        // A shell's `ulimit -f` (SIGXFSZ is ignored: main.rs), or the file system's own limit.
        return format!("{line}: past the file-size limit (ulimit -f)");
    }
    line.to_string()
}

/// Follows `path`'s symlinks (not those of its directories, which the OS resolves) up to 40.
fn resolve(path: &Path) -> Result<PathBuf, OutputError> {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let unreadable =
                    |e| OutputError::UnreadableSymlink { link: at.clone(), why: one_line(&e) };
                let link = std::fs::read_link(&at).map_err(unreadable)?;
                at = match at.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(at),
        }
    }
    Err(OutputError::SymlinkLoop { path: path.to_path_buf() })
}

/// The directory a file at `path` lives in ("." for a bare name).
fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Creates and removes a temporary file in `dir`: the one sure test that a file can be made there.
fn check_writable_dir(dir: &Path, shown: &Path) -> Result<(), OutputError> {
    let in_dir = dir.display();
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(cannot_write(shown, format!("{in_dir} is not a directory"))),
        Err(e) => return Err(cannot_write(shown, format!("directory {in_dir}: {}", one_line(&e)))),
    }
    tempfile::Builder::new().prefix(".schedlab-check-").tempfile_in(dir).map(drop).map_err(|e| {
        cannot_write(shown, format!("cannot create a file in {in_dir}: {}", one_line(&e)))
    })
}

/// Checks an output *directory* before any work: an existing one must be a directory that
/// accepts new files; a missing one is created later, so its nearest existing ancestor must.
pub fn check_dir(path: &Path) -> Result<(), OutputError> {
    let mut at = path.to_path_buf();
    let cannot = |why: String| OutputError::Directory { path: path.to_path_buf(), why };
    loop {
        match std::fs::metadata(&at) {
            Ok(m) if m.is_dir() => return check_writable_dir(&at, path),
            Ok(_) => return Err(cannot(format!("{} is not a directory", at.display()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => match at.parent() {
                Some(p) if !p.as_os_str().is_empty() => at = p.to_path_buf(),
                _ => return check_writable_dir(Path::new("."), path),
            },
            Err(e) => return Err(cannot(one_line(&e))),
        }
    }
}

impl OutputFile {
    /// Checks `path` as an output file (see the module documentation); the error is one line.
    pub fn check(path: &Path) -> Result<OutputFile, OutputError> {
        let cannot = |why: &str| Err(cannot_write(path, why));
        if path.as_os_str().is_empty() {
            return Err(OutputError::EmptyPath);
        }
        if path.as_os_str().to_string_lossy().ends_with('/') {
            return cannot("it names a directory (ends with /)");
        }
        if let Some(fd) = descriptor_of(path).or_else(|| standard_stream(path)) {
            descriptor_writable(fd, path)?;
            let (path, kind) = (path.to_path_buf(), Kind::Descriptor(fd));
            return Ok(OutputFile { target: path.clone(), path, kind });
        }
        if path.file_name().is_some_and(|n| n.len() > NAME_MAX) {
            let long = format!("its name is longer than the {NAME_MAX} bytes a file name may have");
            return cannot(&long);
        }
        let target = resolve(path)?;
        let kind = match std::fs::metadata(&target) {
            Ok(m) if m.is_dir() => return cannot("it is a directory"),
            Ok(m) if m.is_file() => Kind::Replace,
            Ok(m) => {
                use std::os::unix::fs::FileTypeExt;
                let t = m.file_type();
                if t.is_fifo() {
                    Kind::Through { fifo: true }
                } else if t.is_char_device() || t.is_block_device() {
                    Kind::Through { fifo: false }
                } else {
                    return cannot("it is neither a file, a device nor a FIFO");
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Kind::Replace,
            Err(e) => return cannot(&one_line(&e)),
        };
        match kind {
            Kind::Replace => check_writable_dir(&directory_of(&target), path)?,
            Kind::Through { fifo: false } => {
                // Opening a device has effects on some (a tape rewinds), none on the usual
                // ones (null, full, a tty); it is the only check that write access is there.
                let opened = OpenOptions::new().write(true).open(&target);
                opened.map(drop).map_err(|e| cannot_write(path, one_line(&e)))?;
            }
            // A FIFO is opened when its data is ready: a reader may come later.
            Kind::Through { fifo: true } | Kind::Descriptor(_) => {}
        }
        Ok(OutputFile { path: path.to_path_buf(), target, kind })
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the bytes go: the path, or the file at the end of its symlinks.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Whether the path is (or will be) a regular file: one that can be read back and resumed.
    pub fn is_regular(&self) -> bool {
        self.kind == Kind::Replace
    }

    /// The file this output replaces, to compare with the command's other outputs and inputs;
    /// `None` for an output written through (a device, a FIFO, a standard stream), which
    /// destroys nothing it could share.
    pub fn identity(&self) -> Option<FileIdentity> {
        match self.kind {
            Kind::Replace => future_identity(&self.target),
            // A descriptor open on a regular file: that file (a rename over it would orphan
            // what is written through the descriptor).
            Kind::Descriptor(fd) => {
                use std::os::unix::fs::MetadataExt;
                let m = descriptor_file(fd).ok()?.metadata().ok()?;
                m.is_file().then(|| FileIdentity::Inode { dev: m.dev(), ino: m.ino() })
            }
            Kind::Through { .. } => None,
        }
    }

    fn error(&self, e: &io::Error) -> OutputError {
        cannot_write(&self.path, one_line(e))
    }

    /// Opens a device or FIFO for writing (never blocks: a FIFO without a reader is an error).
    fn open_through(&self, fifo: bool) -> Result<File, OutputError> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut options = OpenOptions::new();
        options.write(true);
        if fifo {
            options.custom_flags(libc::O_NONBLOCK);
        }
        let file = options.open(&self.target).map_err(|e| {
            if fifo && e.raw_os_error() == Some(libc::ENXIO) {
                cannot_write(&self.path, "no process is reading the FIFO")
            } else {
                self.error(&e)
            }
        })?;
        if fifo {
            set_blocking(&file).map_err(|e| self.error(&e))?;
        }
        Ok(file)
    }

    /// A temporary file beside the target, with the target's permissions if it exists (else
    /// 0666 less the umask, as a plain create would give).
    fn temporary(&self) -> Result<tempfile::NamedTempFile, OutputError> {
        use std::os::unix::fs::PermissionsExt;
        let dir = directory_of(&self.target);
        // `.NAME.XXXXXX.tmp` must stay within NAME_MAX: a long name is shortened (on a character
        // boundary), the random part keeps it unique.
        let full = self
            .target
            .file_name()
            .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
        let mut name = full.as_str();
        while name.len() > NAME_MAX - 16 {
            let mut end = name.len() - 1;
            while !name.is_char_boundary(end) {
                end -= 1;
            }
            name = &name[..end];
        }
        let mode =
            std::fs::metadata(&self.target).map_or(0o666, |m| m.permissions().mode() & 0o7777);
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .permissions(std::fs::Permissions::from_mode(mode))
            .tempfile_in(&dir)
            .map_err(|e| {
                let why = format!("cannot create a file in {}: {}", dir.display(), one_line(&e));
                cannot_write(&self.path, why)
            })?;
        if let Ok(mut pending) = PENDING.lock() {
            pending.retain(|p| p.exists());
            pending.push(temp.path().to_path_buf());
        }
        if let Ok(old) = std::fs::metadata(&self.target) {
            keep_owner(temp.as_file(), &old).map_err(|e| {
                let why = format!("cannot give the new file its owner: {}", one_line(&e));
                cannot_write(&self.path, why)
            })?;
        }
        Ok(temp)
    }

    /// Renames a finished temporary file over the target.
    fn persist(&self, temp: tempfile::NamedTempFile) -> Result<(), OutputError> {
        if let Ok(mut pending) = PENDING.lock() {
            pending.retain(|p| p != temp.path());
        }
        temp.as_file().sync_all().map_err(|e| self.error(&e))?;
        temp.persist(&self.target).map(drop).map_err(|e| self.error(&e.error))
    }

    /// Writes `bytes` as the whole content of the output (see the module documentation).
    pub fn write(&self, bytes: &[u8]) -> Result<(), OutputError> {
        match self.kind {
            Kind::Replace => {
                let mut temp = self.temporary()?;
                temp.write_all(bytes).and_then(|()| temp.flush()).map_err(|e| self.error(&e))?;
                self.persist(temp)
            }
            Kind::Through { fifo } => {
                let mut file = self.open_through(fifo)?;
                file.write_all(bytes).and_then(|()| file.flush()).map_err(|e| self.error(&e))
            }
            Kind::Descriptor(fd) => {
                let mut file = descriptor_file(fd).map_err(|e| self.error(&e))?;
                file.write_all(bytes).and_then(|()| file.flush()).map_err(|e| self.error(&e))
            }
        }
    }

    /// Opens the output for writing piece by piece (see [`Stream`]).
    pub fn stream(&self) -> Result<Stream, OutputError> {
        let (file, temp) = match self.kind {
            Kind::Replace => {
                let temp = self.temporary()?;
                let file = temp.as_file().try_clone().map_err(|e| self.error(&e))?;
                (file, Some(temp))
            }
            Kind::Through { fifo } => (self.open_through(fifo)?, None),
            Kind::Descriptor(fd) => (descriptor_file(fd).map_err(|e| self.error(&e))?, None),
        };
        let (file, error, first_writer) = (Arc::new(file), Arc::default(), Arc::default());
        let writer = StreamWriter { file, error, first_writer };
        Ok(Stream { output: self.clone(), writer, temp })
    }
}

/// Gives the temporary file `new` the owner and group of the file it replaces (issue 43: root
/// replacing another user's output made it root's), then the old file's mode again (a change of
/// owner clears the set-user-ID and set-group-ID bits). A user who may not give a file away
/// (EPERM: not root) keeps it as theirs, as any editor's save does.
fn keep_owner(new: &File, old: &std::fs::Metadata) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    let made = new.metadata()?;
    if made.uid() == old.uid() && made.gid() == old.gid() {
        return Ok(());
    }
    // SAFETY: fchown on a descriptor `new` owns and keeps open for the call; no memory involved.
    if unsafe { libc::fchown(new.as_raw_fd(), old.uid(), old.gid()) } != 0 {
        let e = io::Error::last_os_error();
        return if e.raw_os_error() == Some(libc::EPERM) { Ok(()) } else { Err(e) };
    }
    let mode = old.mode() & 0o7777;
    // SAFETY: as above, fchmod on the same open descriptor.
    if unsafe { libc::fchmod(new.as_raw_fd(), mode as libc::mode_t) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn set_blocking(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this `File` owns and keeps open for the whole call; F_GETFL
    // and F_SETFL read and write only the descriptor's flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// An output written piece by piece, possibly from another thread.
pub struct Stream {
    output: OutputFile,
    writer: StreamWriter,
    /// The temporary file renamed into place by [`Stream::commit`] (regular targets).
    temp: Option<tempfile::NamedTempFile>,
}

/// The writing end of a [`Stream`]: never returns an error; the first one is kept for
/// [`Stream::commit`], and what follows it is dropped.
#[derive(Clone)]
pub struct StreamWriter {
    file: Arc<File>,
    error: Arc<Mutex<Option<io::Error>>>,
    /// The OS thread id of the first thread that wrote (0: none yet), so that its owner can
    /// change that thread's priority (the trace writer runs at nice 19 until the run ends).
    first_writer: Arc<std::sync::atomic::AtomicI64>,
}

impl StreamWriter {
    fn failed(&self) -> bool {
        self.error.lock().map_or(true, |e| e.is_some())
    }

    fn keep(&self, e: io::Error) {
        if let Ok(mut slot) = self.error.lock() {
            slot.get_or_insert(e);
        }
    }
}

impl Write for StreamWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.first_writer.load(std::sync::atomic::Ordering::Relaxed) == 0 {
            #[cfg(target_os = "linux")]
            {
                // SAFETY: gettid has no preconditions.
                let tid = unsafe { libc::gettid() };
                self.first_writer.store(tid.into(), std::sync::atomic::Ordering::Relaxed);
            }
        }
        if !self.failed() {
            if let Err(e) = (&*self.file).write_all(buf) {
                self.keep(e);
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.failed() {
            if let Err(e) = (&*self.file).flush() {
                self.keep(e);
            }
        }
        Ok(())
    }
}

impl Stream {
    /// A writer for the stream (clones write to the same file).
    pub fn writer(&self) -> StreamWriter {
        self.writer.clone()
    }

    /// The OS thread id of the first thread that wrote to the stream, if any wrote yet.
    pub fn writer_thread(&self) -> Option<i64> {
        match self.writer.first_writer.load(std::sync::atomic::Ordering::Relaxed) {
            0 => None,
            tid => Some(tid),
        }
    }

    /// Writes `bytes` now (from the calling thread).
    pub fn append(&mut self, bytes: &[u8]) -> Result<(), OutputError> {
        let mut w = self.writer();
        w.write_all(bytes).expect("a StreamWriter never fails");
        self.check()
    }

    /// The first write error so far, as one line.
    pub fn check(&self) -> Result<(), OutputError> {
        match self.writer.error.lock() {
            Ok(e) => e.as_ref().map_or(Ok(()), |e| Err(self.output.error(e))),
            Err(_) => Err(cannot_write(&self.output.path, "a writer thread failed")),
        }
    }

    /// Finishes the output: reports the first write error, else renames a regular target's
    /// temporary file into place (the temporary file is removed on error).
    pub fn commit(self) -> Result<(), OutputError> {
        self.check()?;
        match self.temp {
            Some(temp) => self.output.persist(temp),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_and_missing_parents_are_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let e = OutputFile::check(dir.path()).unwrap_err().to_string();
        assert_eq!(e, format!("cannot write {}: it is a directory", dir.path().display()));
        assert_eq!(OutputFile::check(Path::new("")).unwrap_err(), OutputError::EmptyPath);
        let e = check_dir(&dir.path().join("missing/deeper")).map(drop);
        assert_eq!(e, Ok(()), "a missing directory is made later: its ancestor is checked");
        let e = OutputFile::check(&dir.path().join("missing/x.json")).unwrap_err().to_string();
        assert!(e.contains("directory") && e.contains("missing"), "{e}");
        let e = OutputFile::check(Path::new("x.json/")).unwrap_err().to_string();
        assert!(e.contains("ends with /"), "{e}");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "the checks leave nothing behind"
        );
    }

    #[test]
    fn a_regular_file_is_replaced_whole_and_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let out = OutputFile::check(&path).unwrap();
        assert!(out.is_regular());
        out.write(b"new content").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new content");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);
        let names: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["out.json"], "no temporary file left");
    }

    /// Issue 43: root replacing a file of another user keeps that user as its owner (and its
    /// group and mode); a plain write left it root's.
    #[test]
    fn a_replaced_file_keeps_its_owner() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        // SAFETY: geteuid reads the process's credentials.
        if unsafe { libc::geteuid() } != 0 {
            println!("not root: a file of another user cannot be replaced here");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("theirs.json");
        std::fs::write(&path, "old").unwrap();
        std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        OutputFile::check(&path).unwrap().write(b"new").unwrap();
        let m = std::fs::metadata(&path).unwrap();
        assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (65534, 65534, 0o640));
        let mut s = OutputFile::check(&path).unwrap().stream().unwrap();
        s.append(b"streamed").unwrap();
        s.commit().unwrap();
        let m = std::fs::metadata(&path).unwrap();
        assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (65534, 65534, 0o640));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "streamed");
    }

    #[test]
    fn a_symlink_is_kept_and_its_target_written() {
        let dir = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let target = other.path().join("real.csv");
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        // A dangling link: the target is created, the link stays.
        OutputFile::check(&link).unwrap().write(b"one").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "one");
        OutputFile::check(&link).unwrap().write(b"two").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "two");
    }

    #[test]
    fn devices_are_written_through_and_a_full_one_is_an_error() {
        let null = OutputFile::check(Path::new("/dev/null")).unwrap();
        assert!(!null.is_regular());
        null.write(b"nothing").unwrap();
        use std::os::unix::fs::FileTypeExt;
        assert!(
            std::fs::metadata("/dev/null").unwrap().file_type().is_char_device(),
            "/dev/null is still a device"
        );
        let full = OutputFile::check(Path::new("/dev/full")).unwrap();
        let e = full.write(b"x").unwrap_err().to_string();
        assert!(e.starts_with("cannot write /dev/full: ") && e.contains("space"), "{e}");
        let mut stream = full.stream().unwrap();
        let mut w = stream.writer();
        w.write_all(&[b'x'; 100_000]).unwrap();
        w.flush().unwrap();
        assert!(stream.append(b"more").is_err());
        assert!(stream.commit().unwrap_err().to_string().contains("space"));
    }

    #[test]
    fn a_fifo_without_reader_is_an_error_not_a_wait() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path for the whole call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let out = OutputFile::check(&fifo).unwrap();
        let e = out.write(b"x").unwrap_err().to_string();
        assert!(e.contains("no process is reading"), "{e}");
        let reader = std::thread::spawn({
            let fifo = fifo.clone();
            move || std::fs::read_to_string(fifo).unwrap()
        });
        // The reader may not have opened its end yet: retry until it has (no timing assumed).
        loop {
            match out.write(b"through the pipe") {
                Ok(()) => break,
                Err(e) if e.to_string().contains("no process is reading") => {
                    std::thread::yield_now()
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(reader.join().unwrap(), "through the pipe");
        use std::os::unix::fs::FileTypeExt;
        assert!(
            std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(),
            "the FIFO is still there"
        );
    }

    #[test]
    fn descriptors_are_written_through_in_append_mode_never_renamed() {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        assert_eq!(descriptor_of(Path::new("/dev/stdout")), Some(1));
        assert_eq!(descriptor_of(Path::new("/proc/self/fd/2")), Some(2));
        assert_eq!(descriptor_of(Path::new("/tmp/1")), None);
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        std::fs::write(&log, "kept\n").unwrap();
        let ino = std::fs::metadata(&log).unwrap().ino();
        let file = OpenOptions::new().append(true).open(&log).unwrap();
        let path = PathBuf::from(format!("/dev/fd/{}", file.as_raw_fd()));
        let out = OutputFile::check(&path).unwrap();
        assert!(!out.is_regular(), "written through, not replaced");
        assert_eq!(
            out.identity(),
            file_identity(&log),
            "the file behind the descriptor, for the aliasing rule"
        );
        out.write(b"added\n").unwrap();
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "kept\nadded\n");
        assert_eq!(std::fs::metadata(&log).unwrap().ino(), ino);
        // A descriptor open for reading only is refused at the check.
        let reader = std::fs::File::open(&log).unwrap();
        let read_only = format!("/proc/self/fd/{}", reader.as_raw_fd());
        let e = OutputFile::check(Path::new(&read_only)).unwrap_err().to_string();
        assert!(e.contains("not open for writing"), "{e}");
    }

    #[test]
    fn names_longer_than_the_limit_are_refused_and_the_longest_legal_one_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let e = OutputFile::check(&dir.path().join("x".repeat(256))).unwrap_err().to_string();
        assert!(e.contains("longer than"), "{e}");
        let long = dir.path().join("é".repeat(127));
        OutputFile::check(&long).unwrap().write(b"ok").unwrap();
        assert_eq!(std::fs::read_to_string(&long).unwrap(), "ok");
        // A file in a directory not made yet, by two spellings: one identity.
        assert_eq!(
            future_identity(&dir.path().join("c/./b")),
            future_identity(&dir.path().join("c/b"))
        );
        assert!(future_identity(&dir.path().join("c/b")).is_some());
    }

    #[test]
    fn a_stream_is_renamed_into_place_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.json");
        std::fs::write(&path, "previous").unwrap();
        let out = OutputFile::check(&path).unwrap();
        let mut s = out.stream().unwrap();
        s.append(b"[1,").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "previous",
            "unfinished: the old file is intact"
        );
        s.append(b"2]").unwrap();
        s.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[1,2]");
        // Dropped without commit: the temporary file goes, the file stays.
        let mut s = out.stream().unwrap();
        s.append(b"half").unwrap();
        drop(s);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[1,2]");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}

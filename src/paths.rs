//! The path registry: every path a command reads or writes is declared through [`declare`] before
//! any work, as one list ([`Paths`]) built by the subcommand's `paths` function from its
//! arguments (`cli::declared`, an exhaustive match: a new subcommand declares its paths or does
//! not compile). The list names every input, every output file, every output directory and
//! every file the command will write inside one (`flamegraph --out D`: `D/<entry>.svg` ...), and
//! every output whose name is derived from an input's (`--folded F` writes `D/<stem of F>.svg`).
//!
//! [`declare`] checks each output (`schedlab_benches::files::output`: writable, a name within
//! `NAME_MAX`, descriptors and devices written through) and refuses, with one line and exit 2,
//! any two paths that are one file where that would destroy something: two outputs that replace
//! one file (by name, symlink or hard link, or a file inside an output directory), an output
//! that is an input, an output file where an output directory will be. Outputs written through
//! (devices, FIFOs, pipes, descriptors) destroy nothing and may be shared, except that a file
//! reached through a descriptor may not also be replaced or read.
//!
//! The commands then take their checked outputs with [`check_output`] and their inputs with
//! [`check_input`]: a path that was not declared is an internal error (found by the generated
//! tests, `path_props.rs` and `tests/cli_paths.rs`), so no path escapes the registry.

use schedlab_benches::experiment::ExperimentError;
use schedlab_benches::files::output::{
    check_dir, file_identity, future_identity, FileIdentity, OutputFile, NAME_MAX,
};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A path refused before any work: one line, exit 2.
fn bad_input(message: impl Into<String>) -> ExperimentError {
    ExperimentError::bad_input(message)
}

/// What a command does with a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// A file it reads.
    Input,
    /// A file it writes (replaced atomically, or written through).
    Output,
    /// A directory it writes into (made if missing), with every file it will write there.
    Dir(Vec<OsString>),
    /// The system's temporary directory (`TMPDIR`, else `/tmp`), in which the command makes a
    /// private directory of its own (`tempfile::tempdir`: a new name, mode 0700) during the work:
    /// it must exist and take a new file before the work (issue 43: a missing `TMPDIR` was found
    /// after the kernel's runs, exit 4).
    Temporary,
}

impl Role {
    pub fn name(&self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::Output => "output",
            Role::Dir(_) => "dir",
            Role::Temporary => "temporary",
        }
    }
}

/// One declared path: the option that gave it (`--json`; `FILE` for a positional argument).
#[derive(Clone, Debug)]
pub struct Declared {
    pub flag: &'static str,
    pub path: PathBuf,
    pub role: Role,
}

/// A command's paths, as its `paths` function declares them.
#[derive(Clone, Debug, Default)]
pub struct Paths(pub Vec<Declared>);

impl Paths {
    fn add(mut self, flag: &'static str, path: Option<&Path>, role: Role) -> Self {
        if let Some(path) = path {
            self.0.push(Declared { flag, path: path.to_path_buf(), role });
        }
        self
    }

    pub fn input(self, flag: &'static str, path: Option<&Path>) -> Self {
        self.add(flag, path, Role::Input)
    }

    pub fn output(self, flag: &'static str, path: Option<&Path>) -> Self {
        self.add(flag, path, Role::Output)
    }

    /// The system's temporary directory, when `needed` (see [`Role::Temporary`]).
    pub fn temporary(self, needed: bool) -> Self {
        let dir = std::env::temp_dir();
        self.add("TMPDIR", needed.then_some(dir.as_path()), Role::Temporary)
    }

    /// An output directory and the names of the files the command writes into it.
    pub fn dir(self, flag: &'static str, path: Option<&Path>, files: Vec<OsString>) -> Self {
        self.add(flag, path, Role::Dir(files))
    }
}

/// How a claimed path is used, for the aliasing rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Use {
    Read,
    /// Written to a temporary file renamed over it.
    Replace,
    /// Written through (a descriptor open on a regular file).
    Through,
    /// An output directory (made if missing).
    Dir,
}

struct Claim {
    identity: FileIdentity,
    /// `--flag PATH`, for messages.
    shown: String,
    used: Use,
}

static CLAIMS: Mutex<Vec<Claim>> = Mutex::new(Vec::new());
static OUTPUTS: Mutex<Vec<OutputFile>> = Mutex::new(Vec::new());
static INPUTS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn shown(flag: &str, path: &Path) -> String {
    if flag.starts_with('-') {
        format!("{flag} {}", path.display())
    } else {
        path.display().to_string()
    }
}

/// Whether two uses of one file may stand together: two reads, two directories, or two
/// written through (both append to what is there; nothing is replaced).
fn compatible(a: Use, b: Use) -> bool {
    matches!((a, b), (Use::Read, Use::Read) | (Use::Dir, Use::Dir) | (Use::Through, Use::Through))
}

fn claim(identity: FileIdentity, shown: String, used: Use) -> Result<(), ExperimentError> {
    let mut claims =
        CLAIMS.lock().map_err(|_| bad_input("internal: the path claims were poisoned"))?;
    if let Some(earlier) =
        claims.iter().find(|c| c.identity == identity && !compatible(c.used, used))
    {
        let there = &earlier.shown;
        return Err(bad_input(match (earlier.used, used) {
            (Use::Read, _) => format!(
                "cannot write {shown}: it is the input {there}, \
                which writing would destroy"
            ),
            (_, Use::Read) => format!(
                "cannot read {shown}: it is the output {there}, \
                which the command replaces"
            ),
            (Use::Dir, _) | (_, Use::Dir) => format!(
                "cannot write {shown}: it is the \
                same path as {there} (a directory and a file)"
            ),
            _ => format!(
                "cannot write {shown}: it is the same file as the output \
                {there} (one would replace the other)"
            ),
        }));
    }
    claims.push(Claim { identity, shown, used });
    Ok(())
}

/// Declares and checks every path of the command before any work (see the module
/// documentation): the first problem is one line of bad input (exit 2).
pub fn declare(paths: &Paths) -> Result<(), ExperimentError> {
    // Inputs first: an output that names an input is refused as such, whatever the order.
    for d in paths.0.iter().filter(|d| d.role == Role::Input) {
        if let Some(identity) = file_identity(&d.path) {
            claim(identity, shown(d.flag, &d.path), Use::Read)?;
        }
        INPUTS
            .lock()
            .map_err(|_| bad_input("internal: the path claims were poisoned"))?
            .push(d.path.clone());
    }
    // Outputs replaced and directories written into, locked once every path is known to be fine.
    let mut locks = Vec::new();
    for d in &paths.0 {
        match &d.role {
            Role::Input => {}
            Role::Temporary => check_temporary_dir(&d.path)?,
            Role::Output => {
                let out = OutputFile::check(&d.path).map_err(bad_input)?;
                if let Some(identity) = out.identity() {
                    claim(
                        identity,
                        shown(d.flag, &d.path),
                        if out.is_regular() { Use::Replace } else { Use::Through },
                    )?;
                }
                if out.is_regular() {
                    locks.push((out.target().to_path_buf(), d.path.clone()));
                }
                OUTPUTS
                    .lock()
                    .map_err(|_| bad_input("internal: the path claims were poisoned"))?
                    .push(out);
            }
            Role::Dir(files) => {
                check_dir(&d.path).map_err(bad_input)?;
                locks.push((d.path.clone(), d.path.clone()));
                if let Some(identity) = future_identity(&d.path) {
                    claim(identity, shown(d.flag, &d.path), Use::Dir)?;
                }
                for name in files {
                    let file = d.path.join(name);
                    let what =
                        format!("{} (written into {})", file.display(), shown(d.flag, &d.path));
                    if name.len() > NAME_MAX {
                        return Err(bad_input(format!(
                            "cannot write {what}: its name is \
                            longer than the {NAME_MAX} bytes a file name may have"
                        )));
                    }
                    // An existing file there must be one that can be replaced (not a directory).
                    if std::fs::symlink_metadata(&file).is_ok() {
                        OutputFile::check(&file).map_err(bad_input)?;
                    }
                    if let Some(identity) = future_identity(&file) {
                        claim(identity, what, Use::Replace)?;
                    }
                }
            }
        }
    }
    // A second process writing one of them refuses here, before any work (`files::lock`).
    for (target, shown) in locks {
        schedlab_benches::files::lock::lock_output(&target, &shown)?;
    }
    Ok(())
}

/// Checks the temporary directory `dir` before the work: a directory in which a file can be
/// made (the test makes one and removes it at once); one line naming `TMPDIR` otherwise.
fn check_temporary_dir(dir: &Path) -> Result<(), ExperimentError> {
    let shown = dir.display();
    let set = if std::env::var_os("TMPDIR").is_some() { "TMPDIR" } else { "the default" };
    let cannot = |why: String| {
        bad_input(format!("the temporary directory {shown} ({set}) cannot be used: {why}"))
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(cannot("it is not a directory".into())),
        Err(e) => return Err(cannot(e.to_string())),
    }
    tempfile::Builder::new()
        .prefix(".schedlab-check-")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| cannot(format!("no file can be made there ({})", e.kind())))
}

/// `SCHEDLAB_DESCRIBE=paths`, for the generated tests: what the command declares, one line a
/// path (role, flag, path) and one a file inside an output directory; nothing checked.
pub fn describe(declared: &Paths) {
    for d in &declared.0 {
        outln!("{}\t{}\t{}", d.role.name(), d.flag, d.path.display());
        if let Role::Dir(files) = &d.role {
            for f in files {
                outln!("file\t{}\t{}", d.flag, d.path.join(f).display());
            }
        }
    }
}

/// Releases the outputs' locks (their lock files removed): at the end of the process.
pub fn release() {
    schedlab_benches::files::lock::release_all();
}

/// The checked output for `path`, which the command declared; `None` for none.
pub fn check_output(path: Option<&Path>) -> Result<Option<OutputFile>, ExperimentError> {
    let Some(path) = path else { return Ok(None) };
    let outputs =
        OUTPUTS.lock().map_err(|_| bad_input("internal: the path claims were poisoned"))?;
    match outputs.iter().find(|o| o.path() == path) {
        Some(out) => Ok(Some(out.clone())),
        None => Err(bad_input(format!(
            "internal: the output {} was not declared before the work",
            path.display()
        ))),
    }
}

/// Checks that the command declared the input `path` (its reading reports a missing or
/// unreadable file).
pub fn check_input(path: &Path) -> Result<(), ExperimentError> {
    let inputs = INPUTS.lock().map_err(|_| bad_input("internal: the path claims were poisoned"))?;
    if inputs.iter().any(|p| p == path) {
        Ok(())
    } else {
        Err(bad_input(format!(
            "internal: the input {} was not declared before the work",
            path.display()
        )))
    }
}

//! Every path a command reads or writes, checked before any work as one rule: each output must be
//! writable (`schedlab_benches::output`), and no output may be the same file as another output or
//! as an input, which it would destroy (`--csv s.x --svg s.x`, `trace-summary t.json --svg
//! t.json`). Outputs written through (devices, FIFOs, the standard streams) destroy nothing and
//! may be shared. A command claims its paths through [`check_output`] and [`check_input`]; the
//! claims live for the process (one command per process).

use crate::{bad_input, ExperimentError};
use schedlab_benches::output::{file_identity, FileIdentity, OutputFile};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A path claimed by the command: its identity, as given, and whether it is read.
struct Claim {
    identity: FileIdentity,
    path: PathBuf,
    input: bool,
}

static CLAIMS: Mutex<Vec<Claim>> = Mutex::new(Vec::new());

/// Records a claim; an error when it is the same file as an earlier one and one of them is an
/// output (two inputs may be the same file).
fn claim(identity: FileIdentity, path: &Path, input: bool) -> Result<(), ExperimentError> {
    let mut claims = CLAIMS.lock().map_err(|_| bad_input("internal: the path claims were poisoned"))?;
    if let Some(earlier) = claims.iter().find(|c| c.identity == identity && !(c.input && input)) {
        let (here, there) = (path.display(), earlier.path.display());
        return Err(bad_input(match (earlier.input, input) {
            (true, false) => format!("cannot write {here}: it is the input {there}, which writing would destroy"),
            (false, true) => format!("cannot read {here}: it is the output {there}, which the command replaces"),
            _ => format!("cannot write {here}: it is the same file as the output {there} (one would replace the other)"),
        }));
    }
    claims.push(Claim { identity, path: path.to_path_buf(), input });
    Ok(())
}

/// Checks an optional output path before any work (exit 2 when it cannot be written or is
/// another output or an input of the command).
pub fn check_output(path: Option<&Path>) -> Result<Option<OutputFile>, ExperimentError> {
    let Some(path) = path else { return Ok(None) };
    let out = OutputFile::check(path).map_err(bad_input)?;
    if let Some(identity) = out.identity() {
        claim(identity, path, false)?;
    }
    Ok(Some(out))
}

/// Claims an input path before any work; its reading reports a missing or unreadable file.
pub fn check_input(path: &Path) -> Result<(), ExperimentError> {
    match file_identity(path) {
        Some(identity) => claim(identity, path, true),
        None => Ok(()),
    }
}

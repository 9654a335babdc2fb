//! What the source-reading tests of `schedlab-core` (`layering.rs`, `notes_links.rs`) share: the
//! walk over a folder's files of one kind. (A folder under `tests/` is not a test target of its
//! own.)

use std::path::{Path, PathBuf};

/// Pushes onto `out` every file under `dir`, at any depth, whose extension is `extension`.
pub fn files_with_extension(dir: &Path, extension: &str, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files_with_extension(&path, extension, out);
        } else if path.extension().is_some_and(|e| e == extension) {
            out.push(path);
        }
    }
}

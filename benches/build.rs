//! Records the toolchain, the commit and whether the sources built differed from it (`-dirty`),
//! when the binary was built (for result provenance). The commit is the build's, never the
//! working directory's at run time: a binary run from inside another repository still says which
//! code it is (issue 44, item 4).
use std::process::Command;

/// What the binary is built from, relative to the workspace root: the dirty state is read over
/// these, and a change to any of them runs this script again (a folder is scanned whole), so
/// that the state recorded is never older than the sources built. Tests, notes and scripts are
/// not built, nor is `verify`: an edit there leaves the binary's provenance as it is.
const BUILD_INPUTS: [&str; 8] = [
    "Cargo.toml",
    "Cargo.lock",
    "src",
    "core",
    "variants",
    "benches/src",
    "benches/build.rs",
    "benches/Cargo.toml",
];

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).current_dir("..").output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    if let Ok(out) = Command::new(rustc).arg("--version").output() {
        println!("cargo:rustc-env=SCHEDLAB_RUSTC={}", String::from_utf8_lossy(&out.stdout).trim());
    }
    let commit = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(c) if !c.is_empty() => {
            // Dirty: a tracked file of the build differs from the commit (untracked ones are not
            // built: a new source file must be added to be part of a module tree that git knows).
            let status = ["status", "--porcelain", "--untracked-files=no", "--"];
            let args: Vec<&str> = status.iter().chain(&BUILD_INPUTS).copied().collect();
            let dirty = git(&args).is_none_or(|s| !s.is_empty());
            if dirty {
                format!("{c}-dirty")
            } else {
                c
            }
        }
        // Built from a tarball or a copy without .git.
        _ => "unknown (built outside a git checkout)".to_string(),
    };
    println!("cargo:rustc-env=SCHEDLAB_BUILD_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    // The commit follows HEAD and the branch it names; the dirty state the index and the inputs.
    let git_state = ["../.git/HEAD", "../.git/refs/heads", "../.git/index"];
    let inputs = BUILD_INPUTS.iter().map(|p| format!("../{p}"));
    for path in git_state.iter().map(|p| p.to_string()).chain(inputs) {
        if std::path::Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}

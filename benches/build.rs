//! Records the toolchain, the commit and whether the tree was dirty when the binary was built (for
//! result provenance). The commit is the build's, never the working directory's at run time: a
//! binary run from inside another repository still says which code it is (issue 44, item 4).
use std::process::Command;

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
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_none_or(|s| !s.is_empty());
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
    // The commit and its dirty state follow HEAD, the index and every built source (a directory is
    // scanned whole by cargo).
    for path in [
        "../.git/HEAD",
        "../.git/refs/heads",
        "../.git/index",
        "../Cargo.toml",
        "../Cargo.lock",
        "../src",
        "../core",
        "../variants",
        "../verify/src",
        "src",
        "Cargo.toml",
    ] {
        if std::path::Path::new(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}

//! Records the toolchain and commit the binary was built with (for result provenance).
use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    if let Ok(out) = Command::new(rustc).arg("--version").output() {
        println!("cargo:rustc-env=SCHEDLAB_RUSTC={}", String::from_utf8_lossy(&out.stdout).trim());
    }
    if let Ok(out) = Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).output() {
        if out.status.success() {
            println!("cargo:rustc-env=SCHEDLAB_BUILD_COMMIT={}", String::from_utf8_lossy(&out.stdout).trim());
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    // The fallback commit must follow HEAD (the runtime `git` call is preferred anyway).
    for path in ["../.git/HEAD", "../.git/refs/heads"] {
        if std::path::Path::new(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}

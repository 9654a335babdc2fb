//! Where a number came from: machine, toolchain, commit, command, date. Every result file and
//! every `--json` output carries one.

use serde::Serialize;

/// How a result was produced.
#[derive(Clone, Debug, Serialize)]
pub struct Provenance {
    /// The commit the binary was built from (`-dirty` when a tracked source of the build differed
    /// from it), recorded by `benches/build.rs`; never read from the working directory.
    pub commit: String,
    pub rustc: String,
    /// Logical CPUs available to this process.
    pub cpus: usize,
    pub cpu_model: String,
    pub os: String,
    /// UTC, RFC 3339.
    pub date: String,
    pub command_line: String,
    pub profile: &'static str,
}

/// The build's commit (`benches/build.rs`).
pub const BUILD_COMMIT: &str = match option_env!("SCHEDLAB_BUILD_COMMIT") {
    Some(c) => c,
    None => "unknown",
};

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

impl Provenance {
    /// Collects the provenance of the current process.
    pub fn collect() -> Self {
        Provenance {
            commit: BUILD_COMMIT.to_string(),
            rustc: option_env!("SCHEDLAB_RUSTC").unwrap_or("unknown").to_string(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu_model: cpu_model(),
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
            date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            // `args_os`: an argument that is not UTF-8 (a file name) is shown lossily, never a panic.
            command_line: std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" "),
            profile: if cfg!(debug_assertions) { "debug" } else { "release" },
        }
    }

    /// One line for the head of a table.
    pub fn one_line(&self) -> String {
        format!(
            "commit {} | {} | {} CPUs ({}) | {} | {}",
            self.commit, self.rustc, self.cpus, self.cpu_model, self.profile, self.date
        )
    }
}

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

/// The widest a line of [`Provenance::head`] is, where its parts allow.
pub const HEAD_COLUMNS: usize = 120;

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

    /// The head of a report's text: the provenance's parts joined by ` | `, a new line begun
    /// where the next part would pass [`HEAD_COLUMNS`] (a CPU model or a dirty commit can make
    /// one line wider than a page's text).
    pub fn head(&self) -> String {
        let parts = [
            format!("commit {}", self.commit),
            self.rustc.clone(),
            format!("{} CPUs ({})", self.cpus, self.cpu_model),
            self.profile.to_string(),
            self.date.clone(),
        ];
        let mut lines: Vec<String> = Vec::new();
        for part in parts {
            match lines.last_mut() {
                Some(line) if line.chars().count() + 3 + part.chars().count() <= HEAD_COLUMNS => {
                    line.push_str(" | ");
                    line.push_str(&part);
                }
                _ => lines.push(part),
            }
        }
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_keeps_every_part_and_wraps_where_a_line_would_pass_the_width() {
        let short = Provenance {
            commit: "d56ad96bef77".into(),
            cpu_model: "AMD EPYC".into(),
            date: "2026-12-05T03:53:17Z".into(),
            rustc: "rustc 1.95.0 (59807616e 2026-04-14)".into(),
            ..Provenance::collect()
        };
        assert_eq!(
            short.head(),
            "commit d56ad96bef77 | rustc 1.95.0 (59807616e 2026-04-14) | 2 CPUs (AMD EPYC) | \
             release | 2026-12-05T03:53:17Z"
                .replace("2 CPUs", &format!("{} CPUs", short.cpus))
                .replace("release", short.profile)
        );
        let long = Provenance {
            commit: "d56ad96bef77-dirty".into(),
            cpu_model: "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz".into(),
            ..short.clone()
        };
        let head = long.head();
        assert!(head.lines().count() >= 2, "{head}");
        assert!(head.lines().all(|l| l.chars().count() <= HEAD_COLUMNS), "{head}");
        for part in [&long.commit, &long.cpu_model, &long.rustc, &long.date] {
            assert!(head.contains(part.as_str()), "{part} lost: {head}");
        }
    }
}

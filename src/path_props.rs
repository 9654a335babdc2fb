//! Every path-valued option of every subcommand is declared to the path registry (`paths.rs`),
//! read from the CLI's own definition (clap's value hint: a `PathBuf` option is a path), so a
//! new subcommand or option is covered without touching this test. The behaviour of each
//! declared path (aliasing, descriptors, long and non-UTF-8 names) is tested on the binary by
//! `tests/cli_paths.rs`, which reads the same definition.

use crate::cli::{self, parse_from};
use crate::paths::Role;

/// The cheapest arguments that make each subcommand's declaration possible.
fn base(sub: &str) -> Vec<&'static str> {
    match sub {
        // `--inject-raw` needs `--inject`; the others do not mind it.
        "kernel" => vec!["--inject", "0,500"],
        // `--svg` draws the validation.
        "predict" => vec!["--validate"],
        _ => crate::deps::needed_by_config(sub),
    }
}

fn path_options() -> Vec<(String, clap::Arg)> {
    let cli = crate::cli::command();
    let mut out = Vec::new();
    for sub in cli.get_subcommands() {
        for arg in sub.get_arguments() {
            let takes_value = arg.get_action().takes_values();
            if takes_value
                && matches!(
                    arg.get_value_hint(),
                    clap::ValueHint::AnyPath | clap::ValueHint::FilePath | clap::ValueHint::DirPath
                )
            {
                out.push((sub.get_name().to_string(), arg.clone()));
            }
        }
    }
    out
}

#[test]
fn every_path_option_of_every_subcommand_is_declared_before_any_work() {
    let options = path_options();
    assert!(options.len() >= 25, "the path options were found: {}", options.len());
    let dir = tempfile::tempdir().unwrap();
    for (i, (sub, arg)) in options.iter().enumerate() {
        let probe = dir.path().join(format!("probe-{i}"));
        let probe_s = probe.to_str().unwrap().to_string();
        let flag = match arg.get_long() {
            Some(long) => format!("--{long}"),
            None => arg.get_id().as_str().to_ascii_uppercase(),
        };
        let argv = |with_base: bool| -> Vec<String> {
            let mut v = vec!["schedlab".to_string(), sub.clone()];
            let base = base(sub);
            let positional_given = arg.is_positional();
            for b in base.iter().filter(|_| with_base) {
                // The positional under test replaces the base's.
                if positional_given && !b.starts_with('-') {
                    continue;
                }
                v.push(b.to_string());
            }
            if arg.is_positional() {
                v.push(probe_s.clone());
            } else {
                v.push(flag.clone());
                v.push(probe_s.clone());
            }
            v
        };
        // With the base, or alone when the option conflicts with it (`flamegraph --folded`).
        let cli = parse_from(argv(true)).or_else(|_| parse_from(argv(false)));
        let cli = cli.unwrap_or_else(|e| panic!("{sub} {flag}: {e}"));
        let declared =
            cli::declared(&cli.command).unwrap_or_else(|e| panic!("{sub} {flag}: {}", e.message));
        let found = declared.0.iter().find(|d| d.path == probe);
        let found = found.unwrap_or_else(|| {
            panic!("{sub} {flag}: not declared to the path registry: {declared:?}")
        });
        assert_eq!(found.flag, flag, "{sub}: declared under its own option");
        if let Role::Dir(files) = &found.role {
            assert!(
                !files.is_empty(),
                "{sub} {flag}: an output directory declares the files it receives"
            );
        }
    }
}

#[test]
fn the_files_inside_output_directories_are_declared() {
    let cli = parse_from([
        "schedlab",
        "flamegraph",
        "--variant",
        "no-stats",
        "--diff",
        "no-stats",
        "sched-lock",
        "--out",
        "/tmp/fg",
    ])
    .unwrap();
    let declared = cli::declared(&cli.command).unwrap();
    let Role::Dir(files) = &declared.0.iter().find(|d| d.flag == "--out").unwrap().role else {
        panic!("--out is a directory")
    };
    for name in [
        "no-stats.svg",
        "no-stats.folded",
        "sched-lock.svg",
        "diff-no-stats-vs-sched-lock.svg",
        "time-shares.json",
    ] {
        assert!(files.iter().any(|f| f == name), "{name} in {files:?}");
    }
    let cli =
        parse_from(["schedlab", "flamegraph", "--folded", "/x/off-cpu.folded", "--out", "/tmp/fg"])
            .unwrap();
    let declared = cli::declared(&cli.command).unwrap();
    let Role::Dir(files) = &declared.0.iter().find(|d| d.flag == "--out").unwrap().role else {
        panic!("--out is a directory")
    };
    assert_eq!(files, &["off-cpu.svg"], "the output named after the input");
}

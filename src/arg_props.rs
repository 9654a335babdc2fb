//! Property test of the argument parsers (issue 26, item 6): every option of every subcommand,
//! given an arbitrary value (arbitrary text, and the numbers and lists that break parsers:
//! negative, zero, huge, NaN, infinite, reversed ranges, units), is parsed and turned into the
//! command's configuration without a panic, answering either a configuration or bad input in one
//! line (exit 2). Nothing runs: the configuration is built, not used. The options are read from
//! the CLI's own definition, so a new option is covered without touching this test.

use crate::cli::{parse_from, Command};

use proptest::prelude::*;
use schedlab_benches::experiment::ErrorKind;

/// Values that break number, duration, size and list parsers.
fn awkward_value() -> impl Strategy<Value = String> {
    let fixed = [
        "",
        " ",
        "0",
        "-0",
        "-1",
        "1",
        "2",
        "7",
        "64",
        "1024",
        "1025",
        "65536",
        "4294967296",
        "18446744073709551616",
        "1e309",
        "-1e309",
        "nan",
        "NaN",
        "inf",
        "-inf",
        "0.0000001",
        "1e-320",
        "0x10",
        "1,2,4",
        "1-4",
        "4-1",
        "0-0",
        "1,,2",
        ",",
        "-",
        "1-",
        "-4",
        "500ms",
        "1m",
        "1h",
        "25h",
        "10us",
        "0ns",
        "4k",
        "4K",
        "512",
        "513",
        "128k",
        "1M",
        "both",
        "all",
        "none",
        "lists",
        "direct",
        "fair-spin",
        "parking-lot",
        "sched-lock",
        "no-stats",
        "randread",
        "ssd",
        "hdd",
        "null",
        "exact",
        "sampled",
        "/",
        "/dev/null",
        "/proc",
        "a\u{0}b",
        "é",
        "1.5",
        "-2.5",
    ];
    prop_oneof![3 => proptest::sample::select(fixed.to_vec()).prop_map(String::from), 1 => any::<String>()]
}

/// Parses `argv` as the CLI does, then builds the subcommand's configuration (no work, no
/// outputs written); `Err` with the kind of the refusal.
fn configure(argv: &[String]) -> Result<(), (ErrorKind, String)> {
    let cli = parse_from(argv).map_err(|e| (ErrorKind::BadInput, e.kind().to_string()))?;
    let built = match &cli.command {
        None | Some(Command::Variants) => Ok(()),
        Some(Command::Run(a)) => crate::run::config(a).map(drop),
        Some(Command::Compare(a)) => crate::compare::config(a).map(drop),
        Some(Command::Sweep(a)) => crate::sweep::config(a).map(drop),
        Some(Command::Predict(a)) => crate::predict::config(a).map(drop),
        Some(Command::Roundtrip(a)) => crate::roundtrip::config(a).map(drop),
        Some(Command::Simulate(a)) => crate::simulate::config(a).map(drop),
        Some(Command::Flamegraph(a)) => crate::flamegraph::config(a).map(drop),
        // Parsed only: its configuration is checked, but the rest reads the machine.
        Some(Command::TraceSummary(_)) => Ok(()),
        Some(Command::Kernel(a)) => crate::kernel::config(a).map(drop),
    };
    built.map_err(|e| (e.kind, e.message))
}

/// Every (subcommand, option) pair of the CLI: the option's long name and whether it takes a value.
fn options() -> Vec<(String, String, bool)> {
    let cli = crate::cli::command();
    let mut out = Vec::new();
    for sub in cli.get_subcommands() {
        for arg in sub.get_arguments() {
            let takes_value = arg.get_num_args().is_none_or(|n| n.takes_values());
            match arg.get_long() {
                Some(long) if long != "help" && long != "version" => {
                    out.push((sub.get_name().to_string(), format!("--{long}"), takes_value))
                }
                None if arg.is_positional() => {
                    out.push((sub.get_name().to_string(), String::new(), true))
                }
                _ => {}
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, timeout: 30_000, ..ProptestConfig::default() })]

    #[test]
    fn any_value_of_any_option_is_a_configuration_or_one_line_of_bad_input(
        pick in any::<prop::sample::Index>(),
        value in awkward_value(),
        second in any::<prop::sample::Index>(),
        second_value in awkward_value(),
    ) {
        let all = options();
        let (sub, option, takes_value) = &all[pick.index(all.len())];
        let mut argv = vec!["schedlab".to_string(), sub.clone()];
        // trace-summary needs its file; give it one the option under test may replace.
        if sub == "trace-summary" && !option.is_empty() {
            argv.push("/dev/null".into());
        }
        let mut push = |option: &str, takes_value: bool, value: &str| {
            match (option.is_empty(), takes_value) {
                (true, _) => argv.push(value.to_string()),
                (false, true) => argv.push(format!("{option}={value}")),
                (false, false) => argv.push(option.to_string()),
            }
        };
        push(option, *takes_value, &value);
        // A second option of the same subcommand, so that combinations are tried too.
        let same: Vec<_> = all.iter().filter(|(s, o, _)| s == sub && !o.is_empty()).collect();
        if !same.is_empty() {
            let (_, option2, takes2) = same[second.index(same.len())];
            push(option2, *takes2, &second_value);
        }
        if let Err((kind, message)) = configure(&argv) {
            prop_assert_eq!(kind, ErrorKind::BadInput, "{:?}: {}", argv, message);
            prop_assert!(!message.contains('\n'), "{:?}: one line: {}", argv, message);
        }
    }
}

#[test]
fn the_property_reaches_the_configurations() {
    let argv = |args: &[&str]| -> Vec<String> {
        std::iter::once("schedlab").chain(args.iter().copied()).map(String::from).collect()
    };
    assert!(options().len() > 100, "every option of every subcommand: {}", options().len());
    // Parsed, then refused by the configuration (not by the parser): the configurations are run.
    let refused = configure(&argv(&["compare", "--include-unlocked", "--churn", "1"])).unwrap_err();
    assert_eq!(refused.0, ErrorKind::BadInput);
    assert!(refused.1.contains("--include-unlocked"), "{}", refused.1);
    assert!(configure(&argv(&["simulate"])).is_ok());
    assert!(configure(&argv(&["roundtrip", "--variant", "nope"])).is_err());
}

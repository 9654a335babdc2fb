//! Which options of the CLI depend on another, read from clap's command tree by giving each
//! option alone (issue 33, item 5): shared by the in-process test (`flag_props.rs`) and
//! `SCHEDLAB_DESCRIBE=requires`, which the generated test against the binary reads
//! (`tests/cli_flags.rs`). Nothing here runs a command: it only parses argument vectors.

/// Values to try: the ones each kind of option takes.
pub(crate) const CANDIDATES: &[&str] = &[
    "2",
    "3",
    "1",
    "0",
    "7",
    "64",
    "0.5",
    "500ms",
    "1,2",
    "1-2",
    "both",
    "lists",
    "parking-lot",
    "exact",
    "plain",
    "hdd",
    "null",
    "randwrite",
    "8k",
    "6.18",
    "bare",
    "outside",
    "init",
    "off",
    "main",
    "psync",
    "no-stats",
    "sched-lock",
    "all",
    "1x1",
    "100,200",
    "10ms",
    "2x4",
    "8ms",
];

/// How clap answers one option given alone (beside the subcommand's required positional).
#[derive(Debug)]
pub(crate) enum Alone {
    Accepted,
    /// It needs these options (their long names).
    Needs(Vec<String>),
    /// Refused for another reason (it excludes something given by default, or the value).
    Other,
}

/// What a subcommand's configuration cannot do without: the file `trace-summary` reads, the one
/// variant `run` and `flamegraph` measure (the cheapest, `no-stats`). The in-process tests
/// (`flag_props.rs`, `path_props.rs`) start their argument vectors from these.
#[cfg(test)]
pub(crate) fn needed_by_config(sub: &str) -> Vec<&'static str> {
    match sub {
        "run" | "flamegraph" => vec!["--variant", "no-stats"],
        "trace-summary" => vec!["t.json"],
        _ => vec![],
    }
}

/// The argument vector `schedlab SUB [FILE] ARGS...`: only the positional clap requires.
pub(crate) fn minimal(sub: &str, args: &[(String, Option<String>)]) -> Vec<String> {
    let mut argv = vec!["schedlab".to_string(), sub.to_string()];
    if sub == "trace-summary" {
        argv.push("t.json".into());
    }
    for (long, value) in args {
        argv.push(format!("--{long}"));
        argv.extend(value.clone());
    }
    argv
}

fn needs(e: &clap::Error) -> Vec<String> {
    use clap::error::{ContextKind, ContextValue};
    match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::Strings(v)) => v
            .iter()
            .filter_map(|s| s.strip_prefix("--"))
            .map(|s| s.split([' ', '=']).next().unwrap_or(s).to_string())
            .collect(),
        Some(ContextValue::String(s)) => s
            .strip_prefix("--")
            .map(|s| vec![s.split([' ', '=']).next().unwrap_or(s).to_string()])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Every option of `sub` with a value clap's parser takes for it (`None` for a flag), and how
/// clap answers it given alone.
pub(crate) fn options_alone(sub: &clap::Command) -> Vec<(String, Option<String>, Alone)> {
    use clap::error::ErrorKind;
    let mut out = Vec::new();
    for arg in sub.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        if matches!(long, "help" | "version" | "verbose") {
            continue;
        }
        let values: Vec<Option<String>> = if !arg.get_action().takes_values() {
            vec![None]
        } else if matches!(
            arg.get_value_hint(),
            clap::ValueHint::AnyPath | clap::ValueHint::FilePath | clap::ValueHint::DirPath
        ) {
            vec![Some(format!("/tmp/schedlab-dep-{long}"))]
        } else {
            let defaults =
                arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned());
            defaults.chain(CANDIDATES.iter().map(|c| c.to_string())).map(Some).collect()
        };
        let n = arg.get_num_args().map_or(1, |r| r.min_values().max(1));
        for value in values {
            // An option that takes N values (`--diff A B`) gets the value N times.
            let mut argv = minimal(sub.get_name(), &[(long.to_string(), value.clone())]);
            for _ in 1..n {
                argv.extend(value.clone());
            }
            let answer = match crate::cli::parse_from(&argv) {
                Ok(_) => Alone::Accepted,
                Err(e) if e.kind() == ErrorKind::MissingRequiredArgument => Alone::Needs(needs(&e)),
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::ValueValidation
                            | ErrorKind::InvalidValue
                            | ErrorKind::WrongNumberOfValues
                    ) =>
                {
                    continue
                }
                Err(_) => Alone::Other,
            };
            let value = match (value, n) {
                (Some(v), n) if n > 1 => Some(vec![v; n].join(" ")),
                (v, _) => v,
            };
            out.push((long.to_string(), value, answer));
            break;
        }
    }
    out
}

/// `SCHEDLAB_DESCRIBE=requires`: one line per option that clap refuses alone because it needs
/// another: subcommand, option (`--long`), kind (`path`, `value`, `flag`), the value tried (empty
/// for a flag; the parts of a many-valued one separated by spaces), the options it needs, and the
/// arguments to give before it (the subcommand's own required options, with a value clap takes:
/// an option refused only for lacking one of those depends on nothing, and is not listed).
pub(crate) fn describe_requires() {
    let cli = crate::cli::command();
    for sub in cli.get_subcommands() {
        let options = options_alone(sub);
        let (required, base) = required_first(sub, &options);
        for (long, value, alone) in &options {
            let Alone::Needs(needs) = alone else { continue };
            let needs: Vec<String> = needs
                .iter()
                .filter(|n| !required.contains(&n.as_str()))
                .map(|n| format!("--{n}"))
                .collect();
            if needs.is_empty() {
                continue;
            }
            let kind = kind(sub, long);
            outln!(
                "{}\t--{long}\t{kind}\t{}\t{}\t{}",
                sub.get_name(),
                value.clone().unwrap_or_default(),
                needs.join(","),
                base.join(" ")
            );
        }
    }
}

/// `path`, `value` or `flag`: how an option of `sub` is given.
fn kind(sub: &clap::Command, long: &str) -> &'static str {
    match sub.get_arguments().find(|a| a.get_long() == Some(long)) {
        Some(a) if !a.get_action().takes_values() => "flag",
        Some(a)
            if matches!(
                a.get_value_hint(),
                clap::ValueHint::AnyPath | clap::ValueHint::FilePath | clap::ValueHint::DirPath
            ) =>
        {
            "path"
        }
        _ => "value",
    }
}

/// The subcommand's own required options, and the arguments that give them a value clap takes.
fn required_first<'a>(
    sub: &'a clap::Command,
    options: &[(String, Option<String>, Alone)],
) -> (Vec<&'a str>, Vec<String>) {
    let required: Vec<&str> = sub
        .get_arguments()
        .filter(|a| a.is_required_set() && !a.is_positional())
        .filter_map(|a| a.get_long())
        .collect();
    let base = required
        .iter()
        .flat_map(|r| {
            let value = options.iter().find(|(l, _, _)| l == r).and_then(|(_, v, _)| v.clone());
            std::iter::once(format!("--{r}")).chain(value)
        })
        .collect();
    (required, base)
}

/// `SCHEDLAB_DESCRIBE=conflicts`: one line per pair of options declared to conflict
/// (`conflicts_with`, `exclusive`), each with a value clap takes for it alone: subcommand, then
/// option, kind and value for each of the two, then the arguments to give before them.
pub(crate) fn describe_conflicts() {
    let cli = crate::cli::command();
    for sub in cli.get_subcommands() {
        let options = options_alone(sub);
        let (_, base) = required_first(sub, &options);
        let value_of = |long: &str| {
            options
                .iter()
                .find(|(l, _, _)| l == long)
                .map(|(_, v, _)| v.clone().unwrap_or_default())
        };
        for arg in sub.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            for other in sub.get_arg_conflicts_with(arg) {
                let Some(other_long) = other.get_long() else { continue };
                // Each pair once.
                if other_long < long {
                    continue;
                }
                let (Some(v), Some(w)) = (value_of(long), value_of(other_long)) else { continue };
                outln!(
                    "{}\t--{long}\t{}\t{v}\t--{other_long}\t{}\t{w}\t{}",
                    sub.get_name(),
                    kind(sub, long),
                    kind(sub, other_long),
                    base.join(" ")
                );
            }
        }
    }
}

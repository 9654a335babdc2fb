//! No option is silently ignored (issue 33, item 5), tried for every option of every
//! subcommand, read from the CLI's own definition: given (with a value other than its default)
//! beside the subcommand's cheapest arguments, each option either changes what the command
//! will do (its configuration, or the few arguments a command reads beside it: [`effect`]), is
//! refused by clap because it needs or excludes another option (`requires`, `conflicts_with`),
//! is refused by the configuration, or is said to have no effect (a warning naming it). An
//! option that does none of these is reported, with the value tried. Path options are the path
//! registry's (`path_props.rs`). Nothing runs: the configuration is built, not used.

use crate::cli::{clap_error_line, parse_from, Cli, Command};
use crate::deps::{minimal, needed_by_config, options_alone, Alone, CANDIDATES};

/// The cheapest arguments each subcommand's configuration accepts.
fn base(sub: &str) -> Vec<&'static str> {
    match sub {
        "sweep" => vec!["--csv", "/tmp/schedlab-flag-props.csv"],
        _ => needed_by_config(sub),
    }
}

/// What the command will do, as text: its configuration and the arguments it reads beside it.
/// `Err` when the configuration refuses the arguments.
fn effect(cli: &Cli) -> Result<String, schedlab_benches::experiment::ExperimentError> {
    Ok(match &cli.command {
        None | Some(Command::Variants) => String::new(),
        Some(Command::Run(a)) => format!("{:?}", crate::run::config(a)?),
        Some(Command::Compare(a)) => {
            format!("{:?} {}", crate::compare::config(a)?, a.options.brief)
        }
        Some(Command::Sweep(a)) => {
            format!("{:?} {}", crate::sweep::config(a)?, a.options.resume)
        }
        Some(Command::Predict(a)) => format!("{:?}", crate::predict::config(a)?),
        Some(Command::Roundtrip(a)) => format!("{:?}", crate::roundtrip::config(a)?),
        Some(Command::Simulate(a)) => {
            format!("{:?} {}", crate::simulate::config(a)?.sim, a.options.variant)
        }
        Some(Command::Flamegraph(a)) => format!("{:?}", crate::flamegraph::config(a)?),
        // Its only configuration is its paths and the excerpt's window (which needs --svg).
        Some(Command::TraceSummary(_)) => String::new(),
        Some(Command::Kernel(a)) => {
            format!("{:?} {:?} {}", crate::kernel::config(a)?, a.options.inject, a.cleanup)
        }
    })
}

#[derive(Debug, PartialEq)]
enum Outcome {
    /// clap refused it: it needs or excludes another option, or the value is not one it takes.
    Declared,
    Refused,
    Warned,
    Changed,
    Same,
}

fn try_option(sub: &str, long: &str, value: Option<&str>, base_effect: &str) -> Outcome {
    let mut argv = vec!["schedlab".to_string(), sub.to_string()];
    argv.extend(base(sub).iter().map(|s| s.to_string()));
    argv.push(format!("--{long}"));
    if let Some(v) = value {
        argv.push(v.to_string());
    }
    let cli = match parse_from(&argv) {
        Ok(cli) => cli,
        Err(_) => return Outcome::Declared,
    };
    let warned = crate::out::warned();
    let effect = effect(&cli);
    if crate::out::warned() > warned {
        return Outcome::Warned;
    }
    match effect {
        Err(_) => Outcome::Refused,
        Ok(e) if e != base_effect => Outcome::Changed,
        Ok(_) => Outcome::Same,
    }
}

#[test]
fn every_option_changes_something_or_is_declared_refused_or_warned() {
    let cli = crate::cli::command();
    let mut ignored = Vec::new();
    let mut tried = 0;
    for sub in cli.get_subcommands() {
        let name = sub.get_name();
        let mut argv = vec!["schedlab".to_string(), name.to_string()];
        argv.extend(base(name).iter().map(|s| s.to_string()));
        let base_cli = parse_from(&argv).unwrap_or_else(|e| panic!("{name}: {e}"));
        let base_effect = effect(&base_cli)
            .unwrap_or_else(|e| panic!("{name}: the base arguments are refused: {e}"));
        for arg in sub.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            if matches!(long, "help" | "version" | "verbose") {
                continue;
            }
            let takes_value = arg.get_action().takes_values();
            if takes_value
                && matches!(
                    arg.get_value_hint(),
                    clap::ValueHint::AnyPath | clap::ValueHint::FilePath | clap::ValueHint::DirPath
                )
            {
                continue;
            }
            tried += 1;
            let defaults: Vec<String> =
                arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
            let outcomes: Vec<(Option<&str>, Outcome)> = if takes_value {
                CANDIDATES
                    .iter()
                    .filter(|c| !defaults.iter().any(|d| d == *c))
                    .map(|c| (Some(*c), try_option(name, long, Some(c), &base_effect)))
                    .collect()
            } else {
                vec![(None, try_option(name, long, None, &base_effect))]
            };
            // Ignored: some value is taken and changes nothing, and no value changes anything or
            // is said to have no effect (values refused by clap or the configuration are fine).
            let same: Vec<&(Option<&str>, Outcome)> =
                outcomes.iter().filter(|(_, o)| *o == Outcome::Same).collect();
            let honoured =
                outcomes.iter().any(|(_, o)| matches!(o, Outcome::Changed | Outcome::Warned));
            if !same.is_empty() && !honoured {
                let values: Vec<&str> = same.iter().filter_map(|(v, _)| *v).take(3).collect();
                ignored.push(format!("{name} --{long} {values:?}"));
            }
        }
    }
    assert!(tried > 100, "every option of every subcommand: {tried}");
    assert!(
        ignored.is_empty(),
        "options that change nothing, and are neither refused \
        nor said to have no effect: {ignored:#?}"
    );
}

fn parse(sub: &str, options: &[(String, Option<String>)]) -> Result<Cli, clap::Error> {
    // A value of N parts (`--diff A B`) is kept as one string joined by spaces.
    let argv: Vec<String> = minimal(sub, options)
        .into_iter()
        .flat_map(|a| a.split(' ').map(String::from).collect::<Vec<_>>())
        .collect();
    parse_from(argv)
}

/// Item 5's generated test, over clap's command tree: every option that depends on another
/// (`requires`, found by giving each option alone) is refused without it in one line of bad
/// input (main turns every parse error into that line and exit 2: `clap_error_line`), accepted
/// with it, and still refused beside any other single option (clap drops a requirement whose
/// required option conflicts with one given); every declared conflict is refused in one line.
#[test]
fn every_option_given_without_the_one_it_needs_is_refused_in_one_line() {
    let cli = crate::cli::command();
    let mut dependent = 0;
    let mut problems = Vec::new();
    for sub in cli.get_subcommands() {
        let name = sub.get_name();
        let options = options_alone(sub);
        let value_of =
            |long: &str| options.iter().find(|(l, _, _)| l == long).map(|(_, v, _)| v.clone());
        for (long, value, alone) in &options {
            let Alone::Needs(required) = alone else { continue };
            dependent += 1;
            let e = parse(name, &[(long.clone(), value.clone())])
                .err()
                .unwrap_or_else(|| panic!("{name} --{long}"));
            let line = clap_error_line(&e);
            if line.contains('\n')
                || line.is_empty()
                || !required.iter().all(|r| line.contains(&format!("--{r}")))
            {
                problems
                    .push(format!("{name} --{long}: not one line naming what it needs: {line:?}"));
            }
            // With what it needs, clap takes it.
            let mut with = vec![(long.clone(), value.clone())];
            for r in required {
                match value_of(r) {
                    Some(v) => with.push((r.clone(), v)),
                    None => problems.push(format!(
                        "{name} --{long} needs --{r}, which is not an option of {name}"
                    )),
                }
            }
            if let Err(e) = parse(name, &with) {
                problems.push(format!(
                    "{name} --{long} with {required:?}: refused: {}",
                    clap_error_line(&e)
                ));
            }
            // Beside any other single option, still refused.
            for (other, other_value, _) in &options {
                if other == long || required.contains(other) {
                    continue;
                }
                if parse(
                    name,
                    &[(long.clone(), value.clone()), (other.clone(), other_value.clone())],
                )
                .is_ok()
                {
                    problems.push(format!(
                        "{name} --{long} is accepted without {required:?} beside --{other}"
                    ));
                }
            }
        }
        for arg in sub.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            for other in sub.get_arg_conflicts_with(arg) {
                let Some(other_long) = other.get_long() else { continue };
                let (Some(v), Some(w)) = (value_of(long), value_of(other_long)) else { continue };
                match parse(name, &[(long.to_string(), v), (other_long.to_string(), w)]) {
                    Ok(_) => problems.push(format!(
                        "{name} --{long} and --{other_long} \
                        are declared to conflict but are accepted together"
                    )),
                    Err(e) if clap_error_line(&e).contains('\n') => problems.push(format!(
                        "{name} --{long} --{other_long}: not one \
                        line"
                    )),
                    Err(_) => {}
                }
            }
        }
    }
    assert!(
        dependent >= 15,
        "the dependencies declared on the command tree were found: {dependent}"
    );
    assert!(problems.is_empty(), "{problems:#?}");
}

//! Each experiment's options as the command line takes them, and their translation into the
//! experiment's configuration: the one place where text becomes a typed configuration.
//!
//! An options struct is a `clap::Args` (its fields, documentation and dependencies between flags
//! are the CLI's definition: `schedlab <command> --help` prints them, and the CLI's generated
//! tests read them from the command tree); its `config` turns the parsed values into the
//! experiment's configuration and checks what clap cannot (ranges that depend on other options,
//! names looked up in the registry), refusing bad input as [`ErrorKind::BadInput`] before any
//! work. The CLI (`src/`) flattens the options into its subcommand beside the output flags, calls
//! `config`, then the experiment's `run`: a command file is argument parsing plus one call.
//!
//! Numbers go through [`units`] (one parser per kind of number, ranges in the option's help);
//! the workload's flags, shared by `run`, `compare`, `sweep` and `predict`, are
//! [`workload::WorkloadFlags`] and [`workload::WorkloadArgs`].
//!
//! [`ErrorKind::BadInput`]: crate::error::ErrorKind::BadInput

pub mod compare;
pub mod context;
pub mod flamegraph;
pub mod kernel;
pub mod parse;
pub mod predict;
pub mod roundtrip;
pub mod run;
pub mod simulate;
pub mod sweep;
pub mod units;
pub mod workload;

pub use context::Context;
pub use parse::defaults;

//! `schedlab kernel`: this machine's own BFQ beside the model (`schedlab_benches::experiment::kernel`),
//! or with `--inject` a known cost injected into BFQ (`kernel::inject`). The options and their
//! translation are `schedlab_benches::experiment::options::kernel`; this file adds the outputs,
//! declares the paths and makes the one call.

use crate::signals::INTERRUPT;
use schedlab_benches::experiment::kernel::{self, KernelConfig};
use schedlab_benches::experiment::options::kernel::KernelOptions;
use schedlab_benches::experiment::ExperimentError;

#[derive(clap::Args, Debug, Clone)]
pub struct KernelArgs {
    #[command(flatten)]
    pub(crate) options: KernelOptions,
    /// `--json` (both halves), `--svg` (kernel and model side by side; with --inject, the ratio
    /// against the cost) and `--report`.
    #[command(flatten)]
    outputs: crate::report_out::OutputArgs,
    /// Only put back what an earlier run that was killed left (loop devices, files, cgroups,
    /// scheduler settings), then exit; takes no other option.
    #[arg(long, exclusive = true)]
    pub(crate) cleanup: bool,
}

/// Every path `kernel` reads or writes (`paths.rs`), with every file it writes into
/// --flamegraphs and --inject-raw.
pub(crate) fn paths(args: &KernelArgs) -> Result<crate::paths::Paths, ExperimentError> {
    let (paths, o) = (crate::paths::Paths::default(), &args.options);
    if args.cleanup {
        return Ok(paths);
    }
    let flamegraphs = match &o.flamegraphs {
        Some(_) => config(args)?.flamegraph_files().into_iter().map(Into::into).collect(),
        None => Vec::new(),
    };
    let raw = kernel::inject::RAW_FILES.iter().map(Into::into).collect();
    // The profiles are recorded into a private directory made in the temporary directory.
    let paths = paths.temporary(o.inject.is_none() && !o.no_profile);
    Ok(args.outputs.declare(
        paths
            .input("--device", o.device.as_deref())
            .input("--model-from", o.model_from.as_deref())
            .input("--kernel-from", o.kernel_from.as_deref())
            .dir("--flamegraphs", o.flamegraphs.as_deref(), flamegraphs)
            .dir("--inject-raw", o.inject_raw.as_deref(), raw),
    ))
}

pub(crate) fn config(args: &KernelArgs) -> Result<KernelConfig, ExperimentError> {
    args.options.config()
}

pub fn cmd(args: &KernelArgs, log: crate::logging::Start) -> Result<(), ExperimentError> {
    let _logging = log.logs()?;
    if args.cleanup {
        let done = kernel::cleanup()?;
        for d in &done {
            outln!("{d}");
        }
        if done.is_empty() {
            outln!("nothing left by an earlier run");
        }
        return Ok(());
    }
    let cfg = config(args)?;
    let Some(inject) = args.options.inject_config()? else {
        return crate::report_out::run_and_emit(&args.outputs, "schedlab kernel", "runs", |bar| {
            kernel::run(&cfg, &INTERRUPT, bar)
        });
    };
    cfg.validate()?;
    crate::report_out::run_and_emit(&args.outputs, "schedlab kernel --inject", "steps", |bar| {
        kernel::inject::run(&cfg.inject_settings(), &inject, &INTERRUPT, bar)
    })
}

//! `schedlab flamegraph`: on-CPU flamegraphs per variant, differential flamegraphs, and where the
//! time goes as a table (notes/flamegraphs.md). Each variant runs the workload (as `schedlab run`
//! does, without churn) under pprof-rs: `DIR/<variant>.svg`, `DIR/<variant>.folded` and one row
//! of the time table; `--diff A B` writes `DIR/diff-A-vs-B.svg`; `--folded FILE` renders a
//! folded-stacks file instead. The options are `schedlab_benches::experiment::options::flamegraph`,
//! the work `schedlab_benches::experiment::flamegraph`; this file adds the outputs and makes the
//! one call.

use crate::signals::INTERRUPT;
use schedlab_benches::experiment::flamegraph::{self, FlamegraphConfig};
use schedlab_benches::experiment::options::flamegraph::FlamegraphOptions;
use schedlab_benches::experiment::ExperimentError;

#[derive(clap::Args, Debug, Clone)]
pub struct FlamegraphArgs {
    #[command(flatten)]
    pub(crate) options: FlamegraphOptions,
    /// `--json` (the time table, the lines) and `--report` (every flamegraph, interactive); the
    /// drawings go to --out, so there is no `--svg`. Neither with --folded.
    #[command(flatten)]
    outputs: crate::report_out::ReportArgs,
}

/// Every path `flamegraph` reads or writes (`paths.rs`), with every file it writes into --out:
/// the profiles' files, or the SVG named after the --folded file.
pub(crate) fn paths(args: &FlamegraphArgs) -> Result<crate::paths::Paths, ExperimentError> {
    let paths = crate::paths::Paths::default();
    Ok(match &args.options.folded {
        Some(input) => paths.input("--folded", Some(input)).dir(
            "--out",
            Some(&args.options.out),
            vec![flamegraph::folded_svg_name(input)],
        ),
        // The sampler (pprof) keeps its samples in a file made in the temporary directory.
        None => {
            let files = config(args)?.files();
            let paths = paths.temporary(true).dir("--out", Some(&args.options.out), files);
            args.outputs.outputs().declare(paths)
        }
    })
}

pub(crate) fn config(args: &FlamegraphArgs) -> Result<FlamegraphConfig, ExperimentError> {
    args.options.config()
}

pub fn cmd(args: &FlamegraphArgs, log: crate::logging::Start) -> Result<(), ExperimentError> {
    let _logging = log.logs()?;
    let mut bar = crate::progress::Bar::new("schedlab flamegraph", "variants");
    if let Some(folded) = args.options.folded_config() {
        outln!("{}", flamegraph::render_folded(&folded, &INTERRUPT, &mut bar)?);
        return Ok(());
    }
    let cfg = config(args)?;
    let claimed = args.outputs.outputs().claim::<flamegraph::FlamegraphReport>()?;
    let w = &cfg.workload;
    outln!(
        "schedlab flamegraph: {} threads, {} lock, {} groups, kernel {}, outside {} ns, \
            {:.1} s per variant, on-CPU samples at {} Hz",
        w.threads,
        w.lock,
        w.groups,
        w.kernel,
        w.outside_ns,
        w.duration.as_secs_f64(),
        cfg.frequency
    );
    let report = flamegraph::run(&cfg, &INTERRUPT, &mut bar)?;
    drop(bar);
    // The failures were told as they happened; the report's outcome keeps their kinds.
    crate::report_out::emit(&report, Default::default(), &claimed, Default::default())
}

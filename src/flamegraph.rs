//! `schedlab flamegraph`: on-CPU flamegraphs per variant, differential flamegraphs, and where the
//! time goes as a table (notes/flamegraphs.md).
//!
//! Each variant runs the workload (as `schedlab run` does, without churn) under pprof-rs; the
//! samples become `DIR/<variant>.svg`, `DIR/<variant>.folded` and one row of the time table.
//! `--diff A B` profiles A and B (reusing profiles already taken in this invocation) and writes
//! `DIR/diff-A-vs-B.svg`. `DIR/time-shares.json` holds the table with provenance.
//! `--folded FILE` renders a folded-stacks file instead (the off-CPU stacks of scripts/offcpu.sh).

use schedlab_benches::profile::{self, format_table, profile_named, VariantProfile};
use schedlab_benches::output::{check_dir, OutputFile};
use schedlab_benches::provenance::Provenance;
use schedlab_benches::workload::{entry_name, split_entry, WorkloadConfig};
use schedlab_core::sync::Ordering;
use schedlab_core::{InsertPathKind, LockKind};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(clap::Args, Debug, Clone)]
pub struct FlamegraphArgs {
    /// Variant to profile (see `schedlab variants`), or `all` for every safe variant; a variant
    /// on the 2024 insert path is `NAME+lists` (as in `compare`'s rows).
    #[arg(long)]
    variant: Option<String>,
    /// Insert path of every variant named without one: `direct` (under the scheduler lock, BFQ
    /// through 2023) or `lists` (separate insertion lists spliced by dispatch, BFQ 2024).
    #[arg(long, default_value = "direct")]
    insert: String,
    /// Differential flamegraph of A against B: widths are A's samples, blue where B has fewer
    /// (what B removes), red where it has more. E.g. `--diff sched-lock debug-off`.
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    diff: Option<Vec<String>>,
    /// Submitting threads (one process each), 1..=1024 (with the fair lock at most 64 per CPU).
    #[arg(long, default_value_t = 2, value_parser = crate::units::count::<1, 1024>, allow_negative_numbers = true)]
    threads: u64,
    /// Time each variant runs (and is sampled): seconds or a duration, more than 0, at most 3600 s.
    #[arg(long, default_value = "2", value_parser = crate::units::seconds, allow_hyphen_values = true)]
    duration: f64,
    /// Lock kind of the scheduler and queue locks: fair-spin or parking-lot.
    #[arg(long, default_value = "fair-spin")]
    lock: String,
    /// Groups besides the root (a 3-level hierarchy), 0..=4096.
    #[arg(long, default_value_t = 4, value_parser = crate::units::count::<0, 4096>, allow_negative_numbers = true)]
    groups: u64,
    /// Simulated work outside the scheduler per request, ns, 0..=1000000000 (0: null device).
    #[arg(long, default_value_t = 0, value_parser = crate::units::count::<0, 1_000_000_000>, allow_negative_numbers = true)]
    outside_ns: u64,
    /// Sampling frequency, Hz, 1..=1000 (keep it under the kernel tick, 250 Hz here).
    #[arg(long, default_value_t = profile::DEFAULT_FREQUENCY as u64, value_parser = crate::units::count::<1, 1000>, allow_negative_numbers = true)]
    frequency: u64,
    /// Render this folded-stacks file ("stack count" lines, e.g. from scripts/offcpu.sh) as
    /// DIR/<file stem>.svg instead of profiling; --title and --count-name label it.
    #[arg(long, conflicts_with_all = ["variant", "diff"])]
    folded: Option<PathBuf>,
    /// Title of a --folded flamegraph (default: the file name).
    #[arg(long, requires = "folded")]
    title: Option<String>,
    /// What a --folded file's counts are (samples, us, ...).
    #[arg(long, default_value = "samples", requires = "folded")]
    count_name: String,
    /// Directory for the SVGs, folded stacks and time-shares.json (created if missing).
    #[arg(long, default_value = "target/flamegraphs")]
    out: PathBuf,
}

#[derive(Serialize)]
struct SharesJson<'a> {
    provenance: Provenance,
    config: &'a WorkloadConfig,
    frequency: i32,
    seed_stats_share_sched_lock: &'static str,
    rows: Vec<RowJson<'a>>,
}

#[derive(Serialize)]
struct RowJson<'a> {
    variant: &'a str,
    kiops: f64,
    samples: u64,
    core_pct: f64,
    stats_pct: f64,
    sums_pct: f64,
    lock_pct: f64,
    outside_pct: f64,
    other_pct: f64,
    stats_of_work_pct: f64,
    unsampled_cpu_share: Option<f64>,
    consistent: bool,
}

/// The entry a name stands for: `VARIANT` on the `--insert` path, or `VARIANT+PATH`.
fn known(name: &str, insert: InsertPathKind) -> Result<&'static str, String> {
    let (variant, path) = split_entry(name)?;
    let info = schedlab_variants::info(variant).ok_or_else(|| {
        let names: Vec<_> = schedlab_variants::ALL.iter().map(|v| v.name).collect();
        format!("unknown variant `{variant}` (known: {}, or all; NAME+lists for the 2024 insert path)", names.join(", "))
    })?;
    Ok(entry_name(info.name, path.unwrap_or(insert)))
}

fn config(args: &FlamegraphArgs) -> Result<(WorkloadConfig, i32), String> {
    let lock = LockKind::from_name(&args.lock)
        .ok_or_else(|| format!("unknown lock kind `{}` (known: fair-spin, parking-lot)", args.lock))?;
    if !(1..=1024).contains(&args.threads) {
        return Err(format!("--threads must be 1..=1024, got {}", args.threads));
    }
    if !(args.duration > 0.0 && args.duration <= 3600.0) {
        return Err(format!("--duration must be more than 0 and at most 3600 seconds, got {}", args.duration));
    }
    if !(0..=4096).contains(&args.groups) {
        return Err(format!("--groups must be 0..=4096, got {}", args.groups));
    }
    if !(1..=1000).contains(&args.frequency) {
        return Err(format!("--frequency must be 1..=1000 Hz, got {}", args.frequency));
    }
    let cfg = WorkloadConfig {
        threads: args.threads as usize,
        duration: Duration::from_secs_f64(args.duration),
        lock,
        groups: args.groups as usize,
        outside_ns: args.outside_ns,
        ..WorkloadConfig::default()
    };
    Ok((cfg, args.frequency as i32))
}

/// Renders an output in memory, then writes it safely (`schedlab_benches::output`). A rendering
/// error is returned; a write error is logged and counted in `failed_writes`.
fn write_file(path: &Path, failed_writes: &mut u32, render: impl FnOnce(&mut Vec<u8>) -> Result<(), String>) -> Result<bool, String> {
    let mut bytes = Vec::new();
    render(&mut bytes)?;
    match OutputFile::check(path).and_then(|out| out.write(&bytes)) {
        Ok(()) => Ok(true),
        Err(e) => {
            tracing::error!("{e}");
            *failed_writes += 1;
            Ok(false)
        }
    }
}

/// `--folded FILE`: renders a folded-stacks file.
fn render_folded(args: &FlamegraphArgs, path: &Path) -> Result<u8, String> {
    check_dir(&args.out)?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let folded = profile::Folded::from_text(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if folded.stacks.is_empty() {
        return Err(format!("{} holds no stacks", path.display()));
    }
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("folded");
    let title = args.title.clone().unwrap_or_else(|| stem.to_string());
    let subtitle = format!("{} {} in {} stacks, from {}", folded.samples(), args.count_name, folded.stacks.len(), path.display());
    std::fs::create_dir_all(&args.out).map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let svg = args.out.join(format!("{stem}.svg"));
    let mut failed = 0;
    if write_file(&svg, &mut failed, |w| profile::write_flamegraph_counting(&folded, &title, &subtitle, &args.count_name, w))? {
        outln!("{} -> {}", path.display(), svg.display());
    }
    Ok(if failed > 0 { crate::exit::WRITE_FAILED } else { crate::exit::OK })
}

pub fn cmd(args: &FlamegraphArgs) -> Result<u8, String> {
    if let Some(path) = &args.folded {
        return render_folded(args, path);
    }
    let (cfg, frequency) = config(args)?;
    let insert = InsertPathKind::from_name(&args.insert).ok_or_else(|| {
        let known: Vec<_> = InsertPathKind::ALL.iter().map(|k| k.name()).collect();
        format!("unknown insert path `{}` (known: {})", args.insert, known.join(", "))
    })?;
    let mut names: Vec<&'static str> = match args.variant.as_deref() {
        Some("all") => schedlab_variants::safe().map(|v| entry_name(v.name, insert)).collect(),
        Some(name) => vec![known(name, insert)?],
        None => Vec::new(),
    };
    let diff = match &args.diff {
        Some(pair) => Some((known(&pair[0], insert)?, known(&pair[1], insert)?)),
        None => None,
    };
    if names.is_empty() && diff.is_none() {
        return Err("say what to profile: --variant NAME|all, or --diff A B (or --folded FILE to render one)".into());
    }
    if let Some((a, b)) = diff {
        for name in [a, b] {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    for name in &names {
        cfg.validate(name)?;
    }
    check_dir(&args.out)?;
    std::fs::create_dir_all(&args.out).map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;

    let prov = Provenance::collect();
    outln!(
        "schedlab flamegraph: {} threads, {} lock, {} groups, outside {} ns, {:.1} s per variant, on-CPU samples at {} Hz",
        cfg.threads,
        cfg.lock,
        cfg.groups,
        cfg.outside_ns,
        cfg.duration.as_secs_f64(),
        frequency
    );
    outln!("{}", prov.one_line());
    schedlab_benches::workload::warn_before_run(cfg.lock, cfg.threads);
    let interrupt = &crate::INTERRUPT;
    // Each profile with its entry name (the run reports the variant alone, not its insert path).
    let mut profiles: Vec<(&'static str, VariantProfile)> = Vec::new();
    let mut failed_writes = 0u32;
    let mut failed_runs = 0u32;
    for name in &names {
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
        let p = match profile_named(name, &cfg, interrupt, frequency) {
            Ok(p) => p,
            Err(e) => {
                tracing::error!("{name}: {e}");
                failed_runs += 1;
                continue;
            }
        };
        let title = format!("{name}: on-CPU, {} lock, {} threads, commit {}", cfg.lock, cfg.threads, prov.commit);
        let subtitle = format!(
            "{} samples at {} Hz over {:.1} s, {:.1} KIOPS; stats {:.1}% of samples ({:.1}% of the scheduler's work)",
            p.folded.samples(),
            frequency,
            p.run.measured_s,
            p.run.kiops,
            p.shares.share(profile::Category::Stats),
            p.shares.stats_of_work()
        );
        let svg = args.out.join(format!("{name}.svg"));
        // A run too short for one sample has no flamegraph: said, not fatal.
        match write_file(&svg, &mut failed_writes, |w| profile::write_flamegraph(&p.folded, &title, &subtitle, w)) {
            Ok(_) => {}
            Err(e) => tracing::warn!("{name}: no flamegraph: {e}"),
        }
        let folded = args.out.join(format!("{name}.folded"));
        write_file(&folded, &mut failed_writes, |w| {
            w.extend_from_slice(p.folded.to_text().as_bytes());
            Ok(())
        })?;
        let unsampled = p.folded.unsampled_share().map_or(String::new(), |u| format!(", {:.0}% of CPU time unsampled", u * 100.0));
        outln!("{name}: {:.1} KIOPS, {} samples{unsampled} -> {}", p.run.kiops, p.folded.samples(), svg.display());
        profiles.push((name, p));
    }

    if let Some((a, b)) = diff {
        let find = |n: &str| profiles.iter().find(|(entry, _)| *entry == n).map(|(_, p)| p);
        if let (Some(pa), Some(pb)) = (find(a), find(b)) {
            let svg = args.out.join(format!("diff-{a}-vs-{b}.svg"));
            let title = format!("{a} against {b}: on-CPU, {} lock, {} threads, commit {}", cfg.lock, cfg.threads, prov.commit);
            // Per request: a path that costs the same per request in both is neutral.
            let (ra, rb) = (pa.run.requests.completed, pb.run.requests.completed);
            let per_request = (ra > 0 && rb > 0).then(|| ra as f64 / rb as f64);
            let subtitle = format!(
                "width: {a}'s {} samples; blue: less CPU time per request in {b} (what {b} removes), red: more in {b}",
                pa.folded.samples()
            );
            match write_file(&svg, &mut failed_writes, |w| profile::write_differential(&pa.folded, &pb.folded, per_request, &title, &subtitle, w)) {
                Ok(true) => outln!("diff {a} against {b} -> {}", svg.display()),
                Ok(false) => {}
                Err(e) => tracing::warn!("no differential flamegraph: {e}"),
            }
        }
    }

    let rows: Vec<(&str, &profile::TimeShares)> = profiles.iter().map(|(entry, p)| (*entry, &p.shares)).collect();
    outln!("\nwhere the time goes (percent of on-CPU samples; stats/work = stats / (core + stats)):");
    outln!("{}", format_table(&rows));
    let json = SharesJson {
        provenance: prov,
        config: &cfg,
        frequency,
        seed_stats_share_sched_lock: profile::SEED_STATS_SHARE,
        rows: profiles
            .iter()
            .map(|(entry, p)| RowJson {
                variant: entry,
                kiops: p.run.kiops,
                samples: p.shares.samples,
                core_pct: p.shares.share(profile::Category::Core),
                stats_pct: p.shares.share(profile::Category::Stats),
                sums_pct: p.shares.sums_share(),
                lock_pct: p.shares.share(profile::Category::Lock),
                outside_pct: p.shares.share(profile::Category::Outside),
                other_pct: p.shares.share(profile::Category::Other),
                stats_of_work_pct: p.shares.stats_of_work(),
                unsampled_cpu_share: p.folded.unsampled_share(),
                consistent: p.run.consistent,
            })
            .collect(),
    };
    let path = args.out.join("time-shares.json");
    let text = serde_json::to_string_pretty(&json).map_err(|e| format!("cannot serialise the table: {e}"))? + "\n";
    if write_file(&path, &mut failed_writes, |w| {
        w.extend_from_slice(text.as_bytes());
        Ok(())
    })? {
        outln!("wrote {}", path.display());
    }
    if profiles.iter().any(|(_, p)| p.run.interrupted) || interrupt.load(Ordering::Relaxed) {
        outln!("(interrupted: the profiles cover the part that ran)");
    }
    let ok = profiles.iter().all(|(_, p)| p.run.consistent && p.run.groups_live_after == 0);
    Ok(if failed_writes > 0 {
        crate::exit::WRITE_FAILED
    } else if !ok {
        crate::exit::CHECK_FAILED
    } else if failed_runs > 0 {
        crate::exit::RUN_FAILED
    } else {
        crate::exit::OK
    })
}

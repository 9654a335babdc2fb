//! `flamegraph` as an experiment: each entry runs the workload under pprof-rs; its samples become
//! `DIR/<entry>.svg`, `DIR/<entry>.folded` and one row of the time table; a differential
//! flamegraph of two entries is drawn from the same profiles; `DIR/time-shares.json` holds the
//! table with provenance (notes/flamegraphs.md). [`render_folded`] draws a folded-stacks file
//! instead (the off-CPU stacks of scripts/offcpu.sh).
//!
//! The files are this experiment's product, so it writes them itself, each checked and written
//! atomically (`files::output`); a file that cannot be written is a failure the report carries
//! (exit 3 in the CLI), not the end of the experiment.

use crate::driver::profile::{self, profile_named, Category, Folded, VariantProfile};
use crate::driver::workload::{self, WorkloadConfig};
use crate::error::ExperimentError;
use crate::experiment::observer::{Event, Observer};
use crate::files::input::{caps, read_input};
use crate::files::output::{check_dir, OutputFile};
use crate::files::provenance::Provenance;
use crate::files::stop::until_stopped;
use schedlab_core::sync::{AtomicBool, Ordering};
use serde::Serialize;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// What to profile and where to write it.
#[derive(Clone, Debug)]
pub struct FlamegraphConfig {
    /// The workload each entry runs (as `schedlab run` does, without churn).
    pub workload: WorkloadConfig,
    /// Entries to profile (`VARIANT` or `VARIANT+lists`), in order; a diff's two are among them.
    pub entries: Vec<&'static str>,
    /// A differential flamegraph of the first against the second.
    pub diff: Option<(&'static str, &'static str)>,
    /// Sampling frequency, Hz.
    pub frequency: i32,
    /// Directory for the SVGs, folded stacks and time-shares.json.
    pub out: PathBuf,
}

impl FlamegraphConfig {
    /// Checked before any work: something to profile, every entry runnable with this workload,
    /// an output directory that can be written.
    pub fn validate(&self) -> Result<(), ExperimentError> {
        if self.entries.is_empty() {
            return Err(ExperimentError::bad_input(
                "say what to profile: --variant \
                NAME|all, or --diff A B (or --folded FILE to render one)",
            ));
        }
        if !(1..=1000).contains(&self.frequency) {
            return Err(ExperimentError::bad_input(format!(
                "--frequency must be 1..=1000 Hz, got {}",
                self.frequency
            )));
        }
        for name in &self.entries {
            self.workload.validate(name)?;
        }
        check_dir(&self.out).map_err(ExperimentError::bad_input)
    }

    /// Every file the experiment writes into `out`, so that the CLI can declare them before any
    /// work: each entry's `.svg` and `.folded`, the differential SVG, `time-shares.json`.
    pub fn files(&self) -> Vec<OsString> {
        let mut files: Vec<OsString> = self
            .entries
            .iter()
            .flat_map(|e| [format!("{e}.svg").into(), format!("{e}.folded").into()])
            .collect();
        if let Some((a, b)) = self.diff {
            files.push(diff_svg_name(a, b).into());
        }
        files.push(TIME_SHARES.into());
        files
    }
}

/// The table's file in the output directory.
const TIME_SHARES: &str = "time-shares.json";

fn diff_svg_name(a: &str, b: &str) -> String {
    format!("diff-{a}-vs-{b}.svg")
}

/// The SVG `--folded FILE` becomes: `<stem of FILE>.svg` (any bytes the name holds).
pub fn folded_svg_name(input: &Path) -> OsString {
    let mut name = input.file_stem().map_or_else(|| OsString::from("folded"), OsStr::to_os_string);
    name.push(".svg");
    name
}

/// One profiled entry's row of the time table, as `time-shares.json` holds it.
#[derive(Clone, Debug, Serialize)]
pub struct ShareRow {
    pub variant: &'static str,
    pub kiops: f64,
    pub samples: u64,
    pub core_pct: f64,
    pub stats_pct: f64,
    pub sums_pct: f64,
    pub lock_pct: f64,
    pub outside_pct: f64,
    pub other_pct: f64,
    /// Every category's share added up: 100 with any sample, 0 without.
    pub total_pct: f64,
    pub stats_of_work_pct: f64,
    /// 95 % intervals of the two stats shares from their sample counts (Wilson; a lower bound
    /// on the uncertainty: one run's samples are not independent).
    pub stats_pct_interval: Option<crate::stats::Interval>,
    pub stats_of_work_pct_interval: Option<crate::stats::Interval>,
    pub unsampled_cpu_share: Option<f64>,
    /// The process's CPU time during the run, when it could be read.
    pub cpu_s: Option<f64>,
    /// The CPU time the samples stand for (samples ÷ frequency).
    pub sampled_s: f64,
    pub consistent: bool,
}

/// A file the experiment wrote: what it holds ("sched-lock's flamegraph") and where.
#[derive(Clone, Debug, Serialize)]
pub struct WrittenFile {
    pub what: String,
    pub path: String,
}

/// What `time-shares.json` holds.
#[derive(Clone, Debug, Serialize)]
pub struct SharesJson<'a> {
    pub provenance: &'a Provenance,
    pub config: &'a WorkloadConfig,
    pub frequency: i32,
    pub seed_stats_share_sched_lock: &'static str,
    pub rows: &'a [ShareRow],
}

/// The experiment's result: what ran, what was written, what failed.
pub struct FlamegraphReport {
    pub provenance: Provenance,
    /// Each profile with its entry name (the run reports the variant alone, not its insert path).
    pub profiles: Vec<(&'static str, VariantProfile)>,
    pub rows: Vec<ShareRow>,
    /// Each file written, in order (the report's table of files, not a line of text: the
    /// terminal text is drawn from the tables).
    pub files: Vec<WrittenFile>,
    /// Each flamegraph drawn (written or not), as (title, SVG), in order: for `--report`.
    pub svgs: Vec<(String, String)>,
    /// Files that could not be written (already told to the observer as failures).
    pub write_failures: Vec<String>,
    /// Entries whose run failed (already told to the observer).
    pub run_failures: Vec<String>,
    pub interrupted: bool,
}

impl FlamegraphReport {
    /// Every finished run passed the end-of-run checks (requests conserved, groups freed).
    pub fn all_consistent(&self) -> bool {
        self.profiles.iter().all(|(_, p)| p.run.consistent && p.run.groups_live_after == 0)
    }

    fn wrote(&mut self, what: impl Into<String>, path: &Path) {
        self.files.push(WrittenFile { what: what.into(), path: path.display().to_string() });
    }
}

/// Renders an output in memory, then writes it safely. A rendering error is returned; a write
/// error is told to the observer and kept in `failures`.
fn write_file(
    path: &Path,
    failures: &mut Vec<String>,
    observer: &mut dyn Observer,
    render: impl FnOnce(&mut Vec<u8>) -> Result<(), ExperimentError>,
) -> Result<bool, ExperimentError> {
    write_kept(path, failures, observer, render).map(|(written, _)| written)
}

/// [`write_file`], also returning what was rendered (kept for the report).
fn write_kept(
    path: &Path,
    failures: &mut Vec<String>,
    observer: &mut dyn Observer,
    render: impl FnOnce(&mut Vec<u8>) -> Result<(), ExperimentError>,
) -> Result<(bool, Vec<u8>), ExperimentError> {
    let mut bytes = Vec::new();
    render(&mut bytes)?;
    match OutputFile::check(path).and_then(|out| out.write(&bytes)) {
        Ok(()) => Ok((true, bytes)),
        Err(e) => {
            let e = e.to_string();
            observer.event(Event::Failure(&e));
            failures.push(e);
            Ok((false, bytes))
        }
    }
}

fn share_row(entry: &'static str, p: &VariantProfile) -> ShareRow {
    ShareRow {
        variant: entry,
        kiops: p.run.kiops,
        samples: p.shares.samples,
        core_pct: p.shares.share(Category::Core),
        stats_pct: p.shares.share(Category::Stats),
        sums_pct: p.shares.sums_share(),
        lock_pct: p.shares.share(Category::Lock),
        outside_pct: p.shares.share(Category::Outside),
        other_pct: p.shares.share(Category::Other),
        total_pct: p.shares.total_share(),
        stats_of_work_pct: p.shares.stats_of_work(),
        stats_pct_interval: p.shares.stats_interval(),
        stats_of_work_pct_interval: p.shares.stats_of_work_interval(),
        unsampled_cpu_share: p.folded.unsampled_share(),
        cpu_s: p.shares.cpu_s,
        sampled_s: p.shares.sampled_s,
        consistent: p.run.consistent,
    }
}

/// Profiles every entry, draws the flamegraphs and the differential one, and writes the table.
pub fn run(
    cfg: &FlamegraphConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<FlamegraphReport, ExperimentError> {
    cfg.validate()?;
    std::fs::create_dir_all(&cfg.out).map_err(|e| {
        ExperimentError::bad_input(format!("cannot create {}: {e}", cfg.out.display()))
    })?;
    let w = &cfg.workload;
    observer.event(Event::Planned {
        steps: cfg.entries.len(),
        estimated_s: cfg.entries.len() as f64 * (w.duration + w.ramp).as_secs_f64(),
    });
    if let Some(warning) = workload::warning_before_run(w.lock, w.threads) {
        observer.event(Event::Warning(&warning));
    }
    let provenance = Provenance::collect();
    let mut report = FlamegraphReport {
        provenance,
        profiles: Vec::new(),
        rows: Vec::new(),
        files: Vec::new(),
        svgs: Vec::new(),
        write_failures: Vec::new(),
        run_failures: Vec::new(),
        interrupted: false,
    };
    for (done, name) in cfg.entries.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        observer.event(Event::Step { done, label: name });
        let p = match profile_named(name, w, stop, cfg.frequency) {
            Ok(p) => p,
            Err(e) => {
                let failure = format!("{name}: {e}");
                observer.event(Event::Failure(&failure));
                report.run_failures.push(failure);
                continue;
            }
        };
        let title = format!(
            "{name}: on-CPU, {} lock, {} threads, commit {}",
            w.lock, w.threads, report.provenance.commit
        );
        let subtitle = format!(
            "{} samples at {} Hz over {:.1} s, {:.1} KIOPS; stats {:.1}% of samples \
                ({:.1}% of the scheduler's work)",
            p.folded.samples(),
            cfg.frequency,
            p.run.measured_s,
            p.run.kiops,
            p.shares.share(Category::Stats),
            p.shares.stats_of_work()
        );
        let svg = cfg.out.join(format!("{name}.svg"));
        // A run too short for one sample has no flamegraph: said, not fatal.
        let draw = |out: &mut Vec<u8>| profile::write_flamegraph(&p.folded, &title, &subtitle, out);
        match write_kept(&svg, &mut report.write_failures, observer, draw) {
            Ok((written, bytes)) => {
                if written {
                    report.wrote(format!("{name}'s flamegraph"), &svg);
                }
                report.svgs.push((title.clone(), String::from_utf8_lossy(&bytes).into_owned()))
            }
            Err(e) => observer.event(Event::Warning(&format!("{name}: no flamegraph: {e}"))),
        }
        let folded = cfg.out.join(format!("{name}.folded"));
        let written = write_file(&folded, &mut report.write_failures, observer, |out| {
            out.extend_from_slice(p.folded.to_text().as_bytes());
            Ok(())
        })?;
        if written {
            report.wrote(format!("{name}'s folded stacks"), &folded);
        }
        let unsampled = p
            .folded
            .unsampled_share()
            .map_or(String::new(), |u| format!(", {:.0}% of CPU time unsampled", u * 100.0));
        let summary =
            format!("{name}: {:.1} KIOPS, {} samples{unsampled}", p.run.kiops, p.folded.samples());
        observer.event(Event::StepDone { done: done + 1, summary: &summary });
        report.rows.push(share_row(name, &p));
        report.profiles.push((name, p));
    }
    if let Some((a, b)) = cfg.diff {
        write_differential(cfg, a, b, &mut report, observer);
    }
    let json = SharesJson {
        provenance: &report.provenance,
        config: w,
        frequency: cfg.frequency,
        seed_stats_share_sched_lock: profile::SEED_STATS_SHARE,
        rows: &report.rows,
    };
    let path = cfg.out.join(TIME_SHARES);
    let text = serde_json::to_string_pretty(&json)
        .map_err(|e| ExperimentError::run_failed(format!("cannot serialise the table: {e}")))?
        + "\n";
    let written = write_file(&path, &mut report.write_failures, observer, |out| {
        out.extend_from_slice(text.as_bytes());
        Ok(())
    })?;
    if written {
        report.wrote("the time table", &path);
    }
    report.interrupted =
        report.profiles.iter().any(|(_, p)| p.run.interrupted) || stop.load(Ordering::Relaxed);
    observer.event(Event::Finished);
    Ok(report)
}

/// The differential flamegraph of `a` against `b`, when both were profiled.
fn write_differential(
    cfg: &FlamegraphConfig,
    a: &str,
    b: &str,
    report: &mut FlamegraphReport,
    observer: &mut dyn Observer,
) {
    let find = |n: &str| report.profiles.iter().find(|(entry, _)| *entry == n).map(|(_, p)| p);
    let (Some(pa), Some(pb)) = (find(a), find(b)) else {
        return;
    };
    let w = &cfg.workload;
    let svg = cfg.out.join(diff_svg_name(a, b));
    let title = format!(
        "{a} against {b}: on-CPU, {} lock, {} threads, commit {}",
        w.lock, w.threads, report.provenance.commit
    );
    // Per request: a path that costs the same per request in both is neutral.
    let (ra, rb) = (pa.run.requests.completed, pb.run.requests.completed);
    let per_request = (ra > 0 && rb > 0).then(|| ra as f64 / rb as f64);
    let subtitle = format!(
        "width: {a}'s {} samples; blue: less CPU time per request in \
        {b} (what {b} removes), red: more in {b}",
        pa.folded.samples()
    );
    let mut failures = Vec::new();
    let draw = |out: &mut Vec<u8>| {
        profile::write_differential(&pa.folded, &pb.folded, per_request, &title, &subtitle, out)
    };
    let written = write_kept(&svg, &mut failures, observer, draw);
    report.write_failures.extend(failures);
    if let Ok((_, bytes)) = &written {
        report.svgs.push((title.clone(), String::from_utf8_lossy(bytes).into_owned()));
    }
    match written.map(|(w, _)| w) {
        Ok(true) => report.wrote(format!("{a} against {b}, differential"), &svg),
        Ok(false) => {}
        Err(e) => observer.event(Event::Warning(&format!("no differential flamegraph: {e}"))),
    }
}

/// What `--folded FILE` renders.
#[derive(Clone, Debug)]
pub struct FoldedConfig {
    pub input: PathBuf,
    /// Title of the flamegraph (default: the file's stem).
    pub title: Option<String>,
    /// What the file's counts are (samples, us, ...).
    pub count_name: String,
    pub out: PathBuf,
}

/// Draws a folded-stacks file as `DIR/<stem>.svg`; the line to print, or the write failure.
pub fn render_folded(
    cfg: &FoldedConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<String, ExperimentError> {
    let path = &cfg.input;
    check_dir(&cfg.out).map_err(ExperimentError::bad_input)?;
    let text = read_input(path, "folded-stacks file", caps::FOLDED, stop)?;
    let stem =
        path.file_stem().map_or_else(|| "folded".into(), |s| s.to_string_lossy().into_owned());
    let title = cfg.title.clone().unwrap_or(stem);
    let (count_name, shown) = (cfg.count_name.clone(), path.display().to_string());
    // Parsing and drawing a large file take seconds: on a thread of their own, so that a stop is
    // honoured meanwhile (nothing is written then).
    // Everything refused here is the file's fault: bad input, whatever the drawing's kind.
    let render = move || -> Result<Vec<u8>, ExperimentError> {
        let bad = |message: String| ExperimentError::bad_input(message);
        let folded = Folded::from_text(&text).map_err(|e| bad(format!("{shown}: {e}")))?;
        if folded.stacks.is_empty() {
            return Err(bad(format!("{shown} holds no stacks")));
        }
        let (samples, stacks) = (folded.samples(), folded.stacks.len());
        let subtitle = format!("{samples} {count_name} in {stacks} stacks, from {shown}");
        let mut bytes = Vec::new();
        profile::write_flamegraph_counting(&folded, &title, &subtitle, &count_name, &mut bytes)
            .map_err(|e| bad(e.message))?;
        Ok(bytes)
    };
    let rendered = until_stopped("folded-render", stop, render);
    let bytes = match rendered {
        Ok(Some(r)) => r?,
        Ok(None) => {
            let shown = path.display();
            let stopped = format!("stopped while drawing {shown}: nothing written");
            return Err(ExperimentError::stopped(stopped));
        }
        Err(e) => return Err(ExperimentError::bad_input(e.to_string())),
    };
    std::fs::create_dir_all(&cfg.out).map_err(|e| {
        ExperimentError::bad_input(format!("cannot create {}: {e}", cfg.out.display()))
    })?;
    let svg = cfg.out.join(folded_svg_name(path));
    let mut failures = Vec::new();
    let written = write_file(&svg, &mut failures, observer, |out| {
        out.extend_from_slice(&bytes);
        Ok(())
    })?;
    match failures.pop() {
        Some(told) if !written => Err(ExperimentError::output_failed(told).told()),
        _ => Ok(format!("{} -> {}", path.display(), svg.display())),
    }
}

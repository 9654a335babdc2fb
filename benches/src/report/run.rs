//! `schedlab run`'s report: the lines it prints for one run and the JSON it writes.

use crate::driver::workload::{RunResult, WorkloadConfig};
use crate::files::provenance::Provenance;
use crate::stats::Spread;
use schedlab_core::LockKind;
use serde::Serialize;
use std::fmt::Write;

/// One run as `run --json` writes it (field names are the file format: keep them).
#[derive(Serialize)]
pub struct RunJson<'a> {
    provenance: Provenance,
    variant: &'a str,
    threads: usize,
    lock: LockKind,
    /// `null` when no request completed (issue 43: it was 0.0 while the text said so).
    kiops: Option<f64>,
    per_thread_kiops: Option<&'a [f64]>,
    requests: schedlab_core::RequestCounters,
    consistent: bool,
    groups_live_after: usize,
    queues_live_after: usize,
    measured_s: f64,
    interrupted: bool,
    churn_removals: u64,
    /// Reads of every group's statistics during the run (`--stats-reads`).
    stats_reads: u64,
    /// Other processes' CPUs during the measured window (above a few tenths the jobs competed
    /// for CPUs), steal time, and this process's CPU busy %.
    other_cpus: Option<f64>,
    steal_cpus: Option<f64>,
    cpu_busy_pct: Option<f64>,
    /// Seconds the run was stopped by job control (SIGTSTP, SIGSTOP); `null` when it was not.
    stopped_s: Option<f64>,
    consistency: &'a schedlab_core::Consistency,
    config: &'a WorkloadConfig,
    /// The named locks' counters (empty without --lockstat).
    locks: &'a [schedlab_core::lockstat::LockSummary],
}

impl<'a> RunJson<'a> {
    /// The JSON of `r` (the signal, if one came, is the report envelope's: `report::contract`).
    pub fn of(r: &'a RunResult, config: &'a WorkloadConfig, provenance: &Provenance) -> Self {
        RunJson {
            provenance: provenance.clone(),
            variant: r.variant,
            threads: r.threads,
            lock: r.lock,
            kiops: (r.requests.completed > 0).then_some(r.kiops),
            per_thread_kiops: (r.requests.completed > 0).then_some(&r.per_thread_kiops[..]),
            requests: r.requests,
            consistent: r.consistent,
            groups_live_after: r.groups_live_after,
            queues_live_after: r.queues_live_after,
            measured_s: r.measured_s,
            interrupted: r.interrupted,
            churn_removals: r.churn_removals,
            stats_reads: r.stats_reads,
            other_cpus: r.other_cpus,
            steal_cpus: r.steal_cpus,
            cpu_busy_pct: r.cpu_busy_pct,
            stopped_s: r.stopped_s,
            consistency: &r.consistency,
            config,
            locks: &r.locks,
        }
    }
}

/// What `schedlab run` prints about a run: throughput and its per-thread spread, the request
/// counters and the end-of-run checks.
pub fn run_text(r: &RunResult) -> String {
    let per_thread = Spread::of(r.per_thread_kiops.clone());
    let mut out = String::new();
    if r.requests.completed == 0 {
        // Zeros would read as a measurement: say what happened instead.
        let _ = writeln!(out, "{}: no requests completed over {:.2} s ({} threads, {})", r.variant, r.measured_s, r.threads, r.lock);
    } else {
        let _ = writeln!(
            out,
            "{}: {:.1} KIOPS over {:.2} s ({} threads, {}); per-thread KIOPS min/median/max {:.1}/{:.1}/{:.1}",
            r.variant, r.kiops, r.measured_s, r.threads, r.lock, per_thread.min, per_thread.median, per_thread.max
        );
    }
    let c = &r.requests;
    let _ = writeln!(
        out,
        "requests: inserted {} dispatched {} merged {} completed {}; consistent: {}; groups live after teardown: {}; churn removals: {}",
        c.inserted, c.dispatched, c.merged, c.completed, r.consistent, r.groups_live_after, r.churn_removals
    );
    if r.stats_reads > 0 {
        let _ = writeln!(out, "statistics read {} times during the run (every group each time)", r.stats_reads);
    }
    if !r.consistent {
        let _ = writeln!(out, "consistency details: {:?}", r.consistency);
    }
    if r.interrupted {
        let _ = writeln!(out, "(interrupted: the numbers cover the part that ran)");
    }
    if let Some(s) = r.stopped_s {
        let why = "its figures measure the pause, not the variant";
        let _ = writeln!(out, "(stopped by SIGTSTP/SIGSTOP for {s:.1} s during the run: {why})");
    }
    out
}

/// `schedlab run`'s report: the run, its configuration, and the trace file when one was written.
pub struct RunReport {
    pub provenance: Provenance,
    pub result: RunResult,
    pub config: WorkloadConfig,
    /// The trace written, and what it covers.
    pub trace: Option<(std::path::PathBuf, String)>,
}

impl Serialize for RunReport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RunJson::of(&self.result, &self.config, &self.provenance).serialize(serializer)
    }
}

/// The report contract (`report::contract`): the run and its locks as tables; no chart.
impl super::contract::Report for RunReport {
    const COMMAND: &'static str = "run";
    const SCHEMA_VERSION: u32 = 1;
    const DRAWS: bool = false;

    fn provenance(&self) -> Provenance {
        self.provenance.clone()
    }

    fn text(&self, _view: super::contract::View) -> String {
        let mut text = run_text(&self.result);
        if self.config.lockstat {
            text.push_str(&super::compare::lockstat_table(&self.result.locks));
        }
        text
    }

    fn tables(&self) -> Vec<super::table::Table> {
        use super::table::{Cell, Table, Verdict};
        let r = &self.result;
        let mut t = Table::new(
            "The run",
            &[("variant", ""), ("lock", ""), ("threads", ""), ("KIOPS", "KIOPS"), ("per-thread min", "KIOPS"), ("per-thread max", "KIOPS"), ("completed", "requests"), ("measured", "s"), ("other processes", "CPUs"), ("CPU busy", "%"), ("checks", "")],
        );
        let done = r.requests.completed > 0;
        let per_thread = |f: fn(f64, f64) -> f64| r.per_thread_kiops.iter().copied().reduce(f);
        let kiops = |v: Option<f64>| if done { Cell::opt(v, 1) } else { Cell::missing("no requests completed") };
        let checked = r.consistent && r.groups_live_after == 0 && r.queues_live_after == 0;
        t.row(vec![
            Cell::text(r.variant),
            Cell::text(r.lock.name()),
            Cell::num(r.threads as f64, 0),
            kiops(Some(r.kiops)),
            kiops(per_thread(f64::min)),
            kiops(per_thread(f64::max)),
            Cell::num(r.requests.completed as f64, 0),
            Cell::num(r.measured_s, 2),
            Cell::opt(r.other_cpus, 2),
            Cell::opt(r.cpu_busy_pct, 0),
            if checked { Cell::judged(Verdict::Met, "passed") } else { Cell::judged(Verdict::Missed, "FAILED") },
        ]);
        vec![t]
    }

    fn prose(&self) -> Vec<(String, String)> {
        self.trace.iter().map(|(path, covers)| ("What the trace covers".to_string(), format!("{}: {covers}", path.display()))).collect()
    }

    fn trace(&self) -> Option<&std::path::Path> {
        self.trace.as_ref().map(|(path, _)| path.as_path())
    }

    fn outcome(&self) -> super::contract::Outcome {
        let r = &self.result;
        let checked = r.consistent && r.groups_live_after == 0 && r.queues_live_after == 0;
        super::contract::Outcome {
            interrupted: r.interrupted,
            disturbed: crate::driver::workload::disturbed(r).into_iter().collect(),
            failed_checks: if checked { vec![] } else { vec![format!("{}: the run failed its end-of-run checks (see the consistency details above)", r.variant)] },
            ..Default::default()
        }
    }
}

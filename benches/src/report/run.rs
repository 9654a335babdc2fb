//! `schedlab run`'s report: one run's tables (the run, its requests and groups, the CPUs, the
//! lock statistics with `--lockstat`), drawn the same in the terminal, on the page and from the
//! JSON it writes.

use super::table::{Cell, Table};
use crate::driver::workload::{RunResult, WorkloadConfig};
use crate::files::provenance::Provenance;
use crate::stats::Spread;
use schedlab_core::LockKind;
use serde::Serialize;

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
    /// The median of `per_thread_kiops` (the median job's, as the text shows it).
    per_thread_median_kiops: Option<f64>,
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
    /// The trace `--trace` wrote, if it did (set by [`RunReport`]'s JSON; `null` otherwise).
    trace: Option<&'a TraceWritten>,
}

/// The trace `run --trace` wrote: its file, and the window after the ramp-up it covers.
#[derive(Clone, Debug, Serialize)]
pub struct TraceWritten {
    /// Any bytes the name holds: written as text, lossily where it is not UTF-8.
    #[serde(serialize_with = "lossy_path")]
    pub path: std::path::PathBuf,
    pub window_ms: f64,
}

fn lossy_path<S: serde::Serializer>(path: &std::path::Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.to_string_lossy())
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
            per_thread_median_kiops: (r.requests.completed > 0)
                .then(|| Spread::of(r.per_thread_kiops.clone()).median),
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
            trace: None,
        }
    }
}

/// `schedlab run`'s report: the run, its configuration, and the trace file when one was written.
pub struct RunReport {
    pub provenance: Provenance,
    pub result: RunResult,
    pub config: WorkloadConfig,
    /// The trace written, and the window it covers.
    pub trace: Option<TraceWritten>,
}

impl Serialize for RunReport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let json = RunJson::of(&self.result, &self.config, &self.provenance);
        RunJson { trace: self.trace.as_ref(), ..json }.serialize(serializer)
    }
}

/// The report contract (`report::contract`): the run and its locks as tables; no chart.
impl super::contract::Report for RunReport {
    const COMMAND: &'static str = "run";
    /// 2: a figure its tables refuse is `null` here too (`contract::Report::json_in`).
    const SCHEMA_VERSION: u32 = 2;
    const DRAWS: bool = false;

    fn provenance(&self) -> Provenance {
        self.provenance.clone()
    }

    fn text(&self, view: super::contract::View) -> String {
        let tables = super::contract::text_of_tables(&self.tables_of(view.brief));
        format!("{tables}\n{}", super::contract::text_of_outcome(&self.outcome()))
    }

    fn tables(&self, _judge: super::contract::Judge) -> Vec<Table> {
        self.tables_of(false)
    }

    fn trace(&self) -> Option<&std::path::Path> {
        self.trace.as_ref().map(|t| t.path.as_path())
    }

    fn outcome(&self) -> super::contract::Outcome {
        let r = &self.result;
        let checked = r.consistent && r.groups_live_after == 0 && r.queues_live_after == 0;
        super::contract::Outcome {
            interrupted: r.interrupted,
            disturbed: crate::driver::workload::disturbed(r).into_iter().collect(),
            failed_checks: if checked {
                vec![]
            } else {
                vec![format!(
                    "{}: the run failed its end-of-run checks (see the consistency details)",
                    r.variant
                )]
            },
            ..Default::default()
        }
    }
}

/// The trace written: a table, so that the terminal, the page and the JSON say the same (it was
/// a line of prose on the page alone).
fn trace_table(trace: &TraceWritten) -> Table {
    let mut t = Table::new("The trace", &[("file", ""), ("window after the ramp-up", "ms")]);
    t.row(vec![Cell::text(trace.path.display().to_string()), Cell::num(trace.window_ms, 0)]);
    t.note(
        "not comparable with untraced KIOPS: every tracing site consulted the recorder during \
         the whole run",
    );
    t
}

impl RunReport {
    /// Whether the run passed its end-of-run checks and freed every group and queue.
    fn checked(&self) -> bool {
        let r = &self.result;
        r.consistent && r.groups_live_after == 0 && r.queues_live_after == 0
    }

    /// The tables: with `brief`, the lock statistics' summary without their detail.
    fn tables_of(&self, brief: bool) -> Vec<Table> {
        let mut tables = vec![self.run_table(), self.requests_table(), self.cpus_table()];
        if let Some(trace) = &self.trace {
            tables.push(trace_table(trace));
        }
        if !self.result.consistent {
            tables.push(self.consistency_table());
        }
        if self.config.lockstat {
            let set = super::locks::LockSet {
                key: vec![],
                label: String::new(),
                locks: &self.result.locks,
                stats_section: None,
            };
            let locks = super::locks::lock_tables(&[], &[set]);
            tables.push(locks.summary);
            if !brief {
                tables.extend(locks.detail);
            }
        }
        tables
    }

    fn run_table(&self) -> Table {
        let r = &self.result;
        let mut t = Table::new(
            "The run",
            &[
                ("variant", ""),
                ("lock", ""),
                ("jobs", ""),
                ("KIOPS", "KIOPS"),
                ("slowest job", "KIOPS"),
                ("median job", "KIOPS"),
                ("fastest job", "KIOPS"),
                ("measured", "s"),
                ("checks", ""),
            ],
        );
        let done = r.requests.completed > 0;
        let jobs = Spread::of(r.per_thread_kiops.clone());
        let kiops =
            |v: f64| if done { Cell::num(v, 1) } else { Cell::missing("no requests completed") };
        t.row(vec![
            Cell::text(r.variant),
            Cell::text(r.lock.name()),
            Cell::num(r.threads as f64, 0),
            kiops(r.kiops),
            kiops(jobs.min),
            kiops(jobs.median),
            kiops(jobs.max),
            Cell::num(r.measured_s, 2),
            // A check of correctness: it holds however disturbed the run was.
            Cell::check(self.checked(), if self.checked() { "passed" } else { "FAILED" }),
        ]);
        t.note(
            "checks: requests and statistics conserved, every group and queue freed at the end.",
        );
        if let Some(s) = r.stopped_s {
            t.note(format!(
                "stopped by SIGTSTP/SIGSTOP for {s:.1} s during the run: its figures \
                measure the pause, not the variant"
            ));
        }
        t
    }

    fn requests_table(&self) -> Table {
        let r = &self.result;
        let c = &r.requests;
        let mut t = Table::new("Requests and groups", &[("counter", ""), ("count", "")]);
        let rows = [
            ("inserted", c.inserted),
            ("dispatched", c.dispatched),
            ("merged", c.merged),
            ("completed", c.completed),
            ("churn removals", r.churn_removals),
            ("groups live after teardown", r.groups_live_after as u64),
            ("queues live after teardown", r.queues_live_after as u64),
            ("statistics reads during the run", r.stats_reads),
        ];
        for (name, count) in rows {
            t.row(vec![Cell::text(name), Cell::num(count as f64, 0)]);
        }
        t.note("statistics reads: each reads every group's statistics (`--stats-reads`).");
        t
    }

    fn cpus_table(&self) -> Table {
        let r = &self.result;
        let mut t = Table::new(
            "The CPUs during the run",
            &[("other processes", "CPUs"), ("steal", "CPUs"), ("CPU busy", "%"), ("stopped", "s")],
        );
        t.row(vec![
            Cell::opt(r.other_cpus, 2),
            Cell::opt(r.steal_cpus, 2),
            Cell::opt(r.cpu_busy_pct, 0),
            r.stopped_s.map_or_else(|| Cell::missing("not stopped"), |s| Cell::num(s, 1)),
        ]);
        t.note(
            "other processes, steal: CPUs' worth taken by other processes and the hypervisor \
            during the measured window; CPU busy: this process's CPU time ÷ (window × jobs).",
        );
        t
    }

    /// The end-of-run checks one by one, for a run that failed them.
    fn consistency_table(&self) -> Table {
        let c = &self.result.consistency;
        let mut t =
            Table::new("The end-of-run checks", &[("check", ""), ("found", ""), ("holds", "")]);
        let check = |ok: bool| Cell::check(ok, if ok { "yes" } else { "NO" });
        let io = c
            .io_serviced_sum
            .map_or_else(|| "not kept".to_string(), |s| format!("io_serviced sum {s}"));
        let rows = [
            (
                "requests balance",
                format!(
                    "{} queued, {} on the device, {} listed",
                    c.outstanding.0, c.outstanding.1, c.listed
                ),
                c.requests_balance,
            ),
            (
                "groups' queued back to 0",
                format!("{} groups not", c.groups_with_queued.len()),
                c.groups_with_queued.is_empty(),
            ),
            ("io_serviced = dispatched", io, c.io_serviced_matches),
            (
                "statistics charged to the right group",
                format!("{} groups not", c.groups_misattributed.len()),
                c.groups_misattributed.is_empty(),
            ),
            (
                "removed groups reclaimed",
                format!("{} awaiting", c.awaiting_reclamation),
                c.awaiting_reclamation == 0,
            ),
        ];
        for (name, found, ok) in rows {
            t.row(vec![Cell::text(name), Cell::text(found), check(ok)]);
        }
        t.note(format!(
            "In the JSON: `consistency`. All together: {}.",
            if c.ok { "hold" } else { "do not hold" }
        ));
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::contract::{text_within_contract, Report, View};
    use schedlab_core::sync::AtomicBool;

    /// `compare --baseline EXE` reads a child's `run --json` (`driver::child`): the newest
    /// version it reads is the one this build writes, so a bump here cannot leave this very
    /// build unable to serve as its own baseline (it did once, when the schema went to 2).
    #[test]
    fn the_child_reader_reads_the_run_schema_this_build_writes() {
        let newest = *crate::driver::child::RUN_SCHEMA_VERSIONS.end();
        assert_eq!(u64::from(<RunReport as Report>::SCHEMA_VERSION), newest);
    }

    fn run_with_lockstat() -> RunReport {
        let config = WorkloadConfig {
            threads: 2,
            duration: std::time::Duration::from_millis(50),
            lockstat: true,
            ..WorkloadConfig::default()
        };
        let result =
            crate::driver::workload::run_named("queue-lock", &config, &AtomicBool::new(false))
                .unwrap();
        RunReport { provenance: Provenance::collect(), result, config, trace: None }
    }

    /// Issue 44: what the trace covers was a line of prose on the page alone (132 columns in
    /// its `<pre>`), in neither the terminal text nor the JSON. Now it is a table like the others.
    #[test]
    fn the_trace_written_is_a_table_in_every_rendering() {
        let mut report = run_with_lockstat();
        report.trace = Some(TraceWritten { path: "t.json".into(), window_ms: 100.0 });
        let text = text_within_contract(&report, 0);
        let page = report.page(View::default()).render();
        for shown in ["The trace", "window after the ramp-up (ms)", "not comparable"] {
            assert!(text.contains(shown) && page.contains(shown), "{shown}:\n{text}");
        }
        assert!(!page.contains("What the trace covers"), "the prose is gone");
        let json: serde_json::Value = serde_json::from_str(&report.json(None).unwrap()).unwrap();
        assert_eq!(json["trace"]["window_ms"], 100.0, "{json}");
        assert_eq!(json["trace"]["path"], "t.json", "{json}");
    }

    #[test]
    fn run_says_each_figure_the_same_in_the_terminal_the_page_and_the_json() {
        let report = run_with_lockstat();
        let text = text_within_contract(&report, 0);
        // Issue 44: the page had no lock table although --lockstat was given.
        let page = report.page(View::default()).render();
        for title in [
            super::super::locks::SUMMARY,
            "Locks: holds",
            "Locks: where each path held and waited",
            "Requests and groups",
        ] {
            assert!(page.contains(title) && text.contains(title), "{title}:\n{text}");
        }
        assert!(
            text.contains("queue-lock")
                && text.contains("passed")
                && text.contains("churn removals"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&report.json(None).unwrap()).unwrap();
        assert!(json["locks"].as_array().is_some_and(|l| !l.is_empty()), "{json}");
    }

    #[test]
    fn run_judges_nothing_and_its_checks_stay_on_disturbed_runs() {
        use crate::report::contract::judged_only_when_undisturbed;
        let disturbed = View { disturbed: true, ..View::default() };
        let report = run_with_lockstat();
        assert_eq!(judged_only_when_undisturbed(&report, disturbed), Ok(0));
        assert!(report.text(disturbed).contains("passed"), "a check of correctness stays");
    }
}

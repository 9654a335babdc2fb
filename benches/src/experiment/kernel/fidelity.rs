//! The fidelity table: for each figure the model must earn, the kernel's value beside the
//! model's, model ÷ kernel, the goal band (issue 31) and whether the model is within it; and the
//! elevator's own cost, measured from the profiles.
//!
//! Figures (each at every point of the axis):
//!
//! | figure | kernel | model | band |
//! | --- | --- | --- | --- |
//! | bfq ÷ none, IOPS | median of within-round ratios | [`MODEL_BFQ`] ÷ `none`, likewise | within 10 % |
//! | mq-deadline ÷ none, IOPS | likewise | `deadline` (or its stand-in) ÷ `none` | within 10 % |
//! | groups ÷ no groups, IOPS | `bfq-groups` ÷ `bfq` | [`MODEL_BFQ`] at N groups ÷ at 0 | within 10 % |
//! | extra CPU per I/O of bfq over none, µs | the experiment's CPU per I/O, bfq − none | the model's CPU per request, likewise | within 25 % |
//! | scheduler-lock acquisitions per I/O | the kernel's code: one per site | lock statistics | equal (rounded) |
//! | contended acquisitions per I/O, total and per site | bpftrace's contention callers | lock statistics by path | within × 1.5 |
//! | statistics' share of the scheduler's work, % | perf profile | the model's profile | none set |
//!
//! The kernel's sites map to the model's paths by [`SITES`].

use super::rows::{KernelRow, KernelSched, Point, PointResult};
use crate::stats::median;
use serde::Serialize;

/// The model row that stands for today's kernel's BFQ: its two legacy counters per CPU at
/// submission, before the scheduler lock, inserting under it (`notes/kernel-map.md` §4).
pub const MODEL_BFQ: &str = "mainline";
/// The model's deadline reference row, and what stands in for it while the model has none.
pub const MODEL_DEADLINE: &str = "deadline";
pub const MODEL_DEADLINE_STAND_IN: &str = "no-stats";

/// The kernel functions that take BFQ's lock, as the contention recorder names their callers,
/// and the model's lock path of each.
pub const SITES: [(&[&str], &str); 5] = [
    (&["bfq_insert_requests", "bfq_insert_request"], "insert"),
    (&["bfq_dispatch_request", "__bfq_dispatch_request"], "dispatch"),
    (&["bfq_finish_requeue_request", "bfq_finish_request"], "completion"),
    (&["bfq_bio_merge"], "bio-merge"),
    // `bfqq_request_over_limit` takes the lock; inlined, the caller is `bfq_limit_depth`.
    (&["bfqq_request_over_limit", "bfq_limit_depth"], "limit-depth"),
];

/// The model's path for a kernel caller of BFQ's lock, if it is one of [`SITES`].
pub fn site_of(caller: &str) -> Option<&'static str> {
    SITES.iter().find(|(fns, _)| fns.contains(&caller)).map(|(_, path)| *path)
}

/// How close model ÷ kernel must be.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Band {
    /// |model ÷ kernel − 1| ≤ pct %.
    Within { pct: f64 },
    /// kernel ÷ factor ≤ model ≤ kernel × factor.
    Factor { factor: f64 },
    /// The same whole number.
    Equal,
    /// No band set: shown for the record.
    Unset,
}

impl Band {
    pub fn describe(&self) -> String {
        match self {
            Band::Within { pct } => format!("within {pct:.0} %"),
            Band::Factor { factor } => format!("within × {factor}"),
            Band::Equal => "equal".into(),
            Band::Unset => "none set".into(),
        }
    }

    /// Whether `model` is within the band around `kernel`; `None` when either is missing or no
    /// band is set. Both zero is within every band.
    pub fn judge(&self, kernel: Option<f64>, model: Option<f64>) -> Option<bool> {
        let (k, m) = (kernel?, model?);
        if !k.is_finite() || !m.is_finite() {
            return None;
        }
        match *self {
            Band::Unset => None,
            Band::Equal => Some(k.round() == m.round()),
            _ if k == 0.0 && m == 0.0 => Some(true),
            _ if k <= 0.0 => Some(false),
            Band::Within { pct } => Some((m / k - 1.0).abs() <= pct / 100.0 + 1e-12),
            Band::Factor { factor } => Some(m >= k / factor - 1e-12 && m <= k * factor + 1e-12),
        }
    }
}

/// One figure of the table, at one point.
#[derive(Clone, Debug, Serialize)]
pub struct FidelityRow {
    pub point: Point,
    pub figure: String,
    pub unit: &'static str,
    pub kernel: Option<f64>,
    pub model: Option<f64>,
    pub model_over_kernel: Option<f64>,
    pub band: Band,
    pub within: Option<bool>,
    /// Where each side's figure comes from, and what stands in for what.
    pub source: String,
}

impl FidelityRow {
    fn new(point: Point, figure: impl Into<String>, unit: &'static str, kernel: Option<f64>, model: Option<f64>, band: Band, source: impl Into<String>) -> FidelityRow {
        FidelityRow {
            point,
            figure: figure.into(),
            unit,
            kernel,
            model,
            model_over_kernel: kernel.zip(model).filter(|(k, _)| *k != 0.0).map(|(k, m)| m / k),
            band,
            within: band.judge(kernel, model),
            source: source.into(),
        }
    }
}

fn row_of(kernel: &[KernelRow], c: KernelSched) -> Option<&KernelRow> {
    kernel.iter().find(|r| r.config == c && !r.runs.is_empty())
}

/// Median of within-round ratios a ÷ b (rounds where both ran); the ratio of medians when no
/// round has both.
fn within_round(a: &[(usize, f64)], b: &[(usize, f64)]) -> Option<f64> {
    let v: Vec<f64> = a.iter().filter_map(|&(ra, x)| b.iter().find(|&&(rb, _)| rb == ra).filter(|(_, y)| *y > 0.0).map(|&(_, y)| x / y)).collect();
    if !v.is_empty() {
        return Some(median(&v));
    }
    let (ma, mb) = (median(&a.iter().map(|x| x.1).collect::<Vec<_>>()), median(&b.iter().map(|x| x.1).collect::<Vec<_>>()));
    (!a.is_empty() && mb > 0.0).then(|| ma / mb)
}

fn kernel_rounds(r: &KernelRow) -> Vec<(usize, f64)> {
    r.runs.iter().map(|x| (x.round, x.iops / 1e3)).collect()
}

/// BFQ's lock sites in a kernel release, from the code: the bio merge, insert, dispatch and
/// finish since BFQ entered blk-mq (4.12); the depth limit's `bfqq_request_over_limit` since 5.18.
/// `None` for a release it cannot read.
pub fn kernel_sites(release: &str) -> Option<usize> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit()).filter(|p| !p.is_empty()).map(|p| p.parse::<u32>().ok());
    let (major, minor) = (parts.next()??, parts.next()??);
    // NOTE: the release that added the lock in the depth limit is read from the kernel's history
    // (Jan Kara's "bfq: Limit number of requests consumed by each cgroup", v5.18), not measured.
    Some(if (major, minor) >= (5, 18) { 5 } else { 4 })
}

/// Contended acquisitions of BFQ's lock per I/O by model path, from a kernel row's recorded runs
/// (median over runs; callers outside [`SITES`] under "other").
pub fn kernel_sites_per_io(row: &KernelRow, ramp_s: f64) -> Vec<(&'static str, f64)> {
    let mut names: Vec<&'static str> = SITES.iter().map(|(_, p)| *p).collect();
    names.push("other");
    names
        .into_iter()
        .map(|site| {
            let v: Vec<f64> = row
                .recorded
                .iter()
                .filter(|r| r.ios > 0 && r.runtime_s > 0.0)
                .filter_map(|r| {
                    let c = r.contention.as_ref()?;
                    let n: u64 = c.scheduler_callers.iter().filter(|(f, _)| site_of(f).unwrap_or("other") == site).map(|(_, c)| c.contentions).sum();
                    // As `kernel_row`: the recorder covers the ramp too.
                    Some(n as f64 / (r.ios as f64 * (r.runtime_s + ramp_s) / r.runtime_s))
                })
                .collect();
            (site, if v.is_empty() { f64::NAN } else { median(&v) })
        })
        .filter(|(_, v)| v.is_finite())
        .collect()
}

/// The table's rows for one point.
pub fn rows(r: &PointResult, groups: usize, kernel_release: &str, ramp_s: f64) -> Vec<FidelityRow> {
    let point = r.point;
    let k = |c| row_of(&r.kernel, c);
    let m = |e: &str, g: usize| r.model.iter().find(|m| m.entry == e && m.groups == g && !m.kiops.runs.is_empty());
    let kr = |a, b| k(a).zip(k(b)).and_then(|(a, b)| within_round(&kernel_rounds(a), &kernel_rounds(b)));
    let mr = |a: &str, ga, b: &str, gb| m(a, ga).zip(m(b, gb)).and_then(|(a, b)| within_round(&a.kiops_by_round, &b.kiops_by_round));
    let mut out = Vec::new();
    let ratio_band = Band::Within { pct: 10.0 };
    out.push(FidelityRow::new(
        point,
        "bfq ÷ none, IOPS",
        "×",
        kr(KernelSched::Bfq, KernelSched::None),
        mr(MODEL_BFQ, 0, "none", 0),
        ratio_band,
        format!("median of within-round ratios; model {MODEL_BFQ} ÷ none"),
    ));
    let deadline = if m(MODEL_DEADLINE, 0).is_some() { MODEL_DEADLINE } else { MODEL_DEADLINE_STAND_IN };
    out.push(FidelityRow::new(
        point,
        "mq-deadline ÷ none, IOPS",
        "×",
        kr(KernelSched::MqDeadline, KernelSched::None),
        mr(deadline, 0, "none", 0),
        ratio_band,
        if deadline == MODEL_DEADLINE {
            format!("model {MODEL_DEADLINE} ÷ none")
        } else {
            format!("model {MODEL_DEADLINE_STAND_IN} ÷ none: a stand-in, the model has no `{MODEL_DEADLINE}` row")
        },
    ));
    if groups > 0 {
        out.push(FidelityRow::new(
            point,
            format!("{groups} groups ÷ no groups, IOPS"),
            "×",
            kr(KernelSched::BfqGroups, KernelSched::Bfq),
            mr(MODEL_BFQ, groups, MODEL_BFQ, 0),
            ratio_band,
            format!("kernel bfq in {groups} cgroups ÷ bfq; model {MODEL_BFQ} at {groups} groups ÷ at 0"),
        ));
    }
    let experiment = r.elevator.as_ref().is_some_and(|e| e.basis == "experiment");
    let kcpu = |c| k(c).and_then(|row| if experiment { row.experiment_cpu_per_io_us.as_ref().map(|s| s.median) } else { Some(row.cpu_per_io_us.median) }).filter(|v| *v > 0.0);
    let mcpu = |e| m(e, 0).map(|row| row.cpu_per_io_us.median).filter(|v| *v > 0.0);
    out.push(FidelityRow::new(
        point,
        "extra CPU per I/O of bfq over none",
        "µs",
        kcpu(KernelSched::Bfq).zip(kcpu(KernelSched::None)).map(|(a, b)| a - b),
        mcpu(MODEL_BFQ).zip(mcpu("none")).map(|(a, b)| a - b),
        Band::Within { pct: 25.0 },
        format!(
            "kernel: {} CPU per I/O; model: its CPU per request, {MODEL_BFQ} − none (an elevator cost the model pays comes from this point's profile: not an independent check)",
            if experiment { "the experiment's" } else { "all CPUs'" }
        ),
    ));
    let bfq_model = m(MODEL_BFQ, 0);
    out.push(FidelityRow::new(
        point,
        "scheduler-lock acquisitions per I/O",
        "per I/O",
        kernel_sites(kernel_release).map(|n| n as f64),
        bfq_model.and_then(|row| row.sched_acquisitions_per_io),
        Band::Equal,
        format!(
            "kernel: its code, one per site ({kernel_release}), not measured: uncontended acquisitions leave no tracepoint without lockdep, and this machine kind's kernel has no kprobes; model: {MODEL_BFQ}'s lock statistics"
        ),
    ));
    let kbfq = k(KernelSched::Bfq);
    out.push(FidelityRow::new(
        point,
        "contended acquisitions per I/O, all sites",
        "per I/O",
        kbfq.and_then(|row| row.sched_contentions_per_io.as_ref()).map(|s| s.median),
        bfq_model.and_then(|row| row.sched_contentions_per_io.as_ref()).map(|s| s.median),
        Band::Factor { factor: 1.5 },
        format!("kernel: bpftrace's contention tracepoints (recorded runs); model: {MODEL_BFQ}'s lock statistics"),
    ));
    let ksites = kbfq.map(|row| kernel_sites_per_io(row, ramp_s)).unwrap_or_default();
    for (fns, path) in SITES {
        // A model that ran with lock statistics but has no such path contends there 0 times.
        let model = bfq_model.filter(|row| row.sched_acquisitions_per_io.is_some()).map(|row| row.sched_by_path.iter().find(|(p, _, _)| p == path).map_or(0.0, |(_, _, c)| *c));
        out.push(FidelityRow::new(
            point,
            format!("contended acquisitions per I/O at {path}"),
            "per I/O",
            (!ksites.is_empty()).then(|| ksites.iter().find(|(s, _)| *s == path).map_or(0.0, |(_, v)| *v)),
            model,
            Band::Factor { factor: 1.5 },
            format!("kernel: callers {}; model: path `{path}`", fns.join(", ")),
        ));
    }
    out.push(FidelityRow::new(
        point,
        "statistics' share of the scheduler's work",
        "%",
        kbfq.and_then(|row| row.profile.as_ref()).and_then(|p| p.stats_share_of_scheduler_pct),
        bfq_model.and_then(|row| row.stats_share_of_scheduler_pct),
        Band::Unset,
        format!("perf profile of kernel bfq; the model's profile of {MODEL_BFQ}"),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_judge_model_against_kernel() {
        let w = Band::Within { pct: 10.0 };
        assert_eq!(w.judge(Some(0.60), Some(0.65)), Some(true));
        assert_eq!(w.judge(Some(0.60), Some(0.85)), Some(false));
        assert_eq!(w.judge(None, Some(1.0)), None);
        let f = Band::Factor { factor: 1.5 };
        assert_eq!(f.judge(Some(0.56), Some(0.38)), Some(true));
        assert_eq!(f.judge(Some(0.56), Some(0.16)), Some(false));
        assert_eq!(f.judge(Some(0.56), Some(0.85)), Some(false));
        assert_eq!(f.judge(Some(0.0), Some(0.0)), Some(true));
        assert_eq!(f.judge(Some(0.0), Some(0.1)), Some(false));
        assert_eq!(Band::Equal.judge(Some(5.0), Some(5.2)), Some(true));
        assert_eq!(Band::Equal.judge(Some(5.0), Some(3.0)), Some(false));
        assert_eq!(Band::Unset.judge(Some(2.2), Some(25.0)), None);
    }

    #[test]
    fn kernel_callers_map_to_the_model_paths() {
        assert_eq!(site_of("bfq_insert_requests"), Some("insert"));
        assert_eq!(site_of("bfq_dispatch_request"), Some("dispatch"));
        assert_eq!(site_of("bfq_finish_requeue_request"), Some("completion"));
        assert_eq!(site_of("bfq_bio_merge"), Some("bio-merge"));
        assert_eq!(site_of("bfqq_request_over_limit"), Some("limit-depth"));
        assert_eq!(site_of("blk_mq_submit_bio"), None);
        assert_eq!(kernel_sites("6.18.44-fc-v1045"), Some(5));
        assert_eq!(kernel_sites("4.14.0"), Some(4));
        assert_eq!(kernel_sites("weird"), None);
    }

    #[test]
    fn within_round_ratios_pair_rounds() {
        // Round 1 has no partner: left out.
        let a = [(0, 60.0), (1, 50.0), (2, 66.0)];
        let b = [(0, 100.0), (2, 100.0)];
        assert!((within_round(&a, &b).unwrap() - 0.63).abs() < 1e-9);
        assert_eq!(within_round(&[], &b), None);
    }
}

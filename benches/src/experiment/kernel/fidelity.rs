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
//!
//! ## What makes a figure evidence (issue 40)
//!
//! - **Controls.** Beside the model, every figure is computed for a *null model* (the model's
//!   calibrated spin per request, outside work plus elevator cost, with no scheduler, no lock and
//!   no groups: CPU-bound, so its IOPS ratio is its ratio of CPU per I/O) and, where one fits, a
//!   *constant answer* (groups ÷ no groups = 1). A figure is **evidence** only where the model is
//!   within its band and no control is ([`Verdict::Evidence`]); where a control is within too,
//!   the figure says nothing the calibration did not ([`Verdict::ControlWithin`]).
//! - **Fitting in the types.** Every calibrated model input is a [`Calibrated`] that names the
//!   kernel [`Figure`]s it was computed from; a row whose figure an input was computed from is
//!   [`Verdict::Fitted`] and is not counted ([`verdict`]).
//! - **Honest bands.** A throughput band is at least the kernel's own round-to-round spread of
//!   the ratio; a throughput figure at a point where the kernel's CPUs were not busy
//!   ([`CPU_BOUND_PCT`]) is not judged (the kernel waits on its device there, the model does not);
//!   a contention figure below [`CONTENTION_FLOOR`] per I/O is judged by absolute difference.
//! - **An interval on the model's ratios** (issue 42). A throughput ratio of the model's rows is
//!   taken within each round and carries the 95 % bootstrap interval over rounds of its median
//!   ([`FidelityRow::with_model_rounds`]); such a row is judged on that interval: within when the
//!   whole interval is inside the band, outside when the whole interval is out of it,
//!   [`Verdict::Inconclusive`] when it reaches across a bound, and not judged without an
//!   interval (fewer than 6 rounds).

use super::rows::{KernelRow, KernelSched, Point, PointResult};
use crate::stats::{
    judge_within, median, ratio_interval, GoalVerdict, Interval, NoInterval, Spread,
};
use serde::Serialize;

/// The model row that stands for today's kernel's BFQ: its two legacy counters per CPU at
/// submission, before the scheduler lock, inserting under it (`notes/kernel-map.md` §4).
pub const MODEL_BFQ: &str = "mainline";
/// The model's deadline reference row, and what stands in for it while the model has none.
pub const MODEL_DEADLINE: &str = "deadline";
pub const MODEL_DEADLINE_STAND_IN: &str = "no-stats";

// The kernel's lock sites and their callers live with the site calibration (`sites.rs`), which
// the rows hold; the table reads them from there.
pub use super::sites::{site_of, SITES};

/// What a figure of the table is: the key by which model inputs name what they were computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Figure {
    BfqOverNoneIops,
    DeadlineOverNoneIops,
    GroupsOverNoGroupsIops,
    ExtraCpuPerIo,
    Acquisitions,
    ContendedAll,
    /// At one of [`SITES`]' model paths.
    ContendedAt(&'static str),
    StatsShare,
    /// Not in the table: the kernel's CPU per I/O under `none` and under mq-deadline, and the
    /// kernel's time inside BFQ's lock per site and waited there (the model's inputs come from
    /// these).
    NoneCpuPerIo,
    DeadlineCpuPerIo,
    SiteHold(&'static str),
    /// Waited time per I/O at a site, from the site calibration's recorded run (`sites.rs`).
    SiteWait(&'static str),
}

/// A model input computed from kernel figures: its value and what it was computed from.
#[derive(Clone, Debug, Serialize)]
pub struct Calibrated {
    pub input: String,
    pub value: f64,
    pub unit: &'static str,
    pub from: Vec<Figure>,
}

/// The kernel's CPUs must have been at least this busy (% of all) for a throughput ratio to be
/// judged: below it the kernel waits on its device (the loop worker, one request in flight) and
/// the model, which has no device latency, cannot be compared on throughput.
pub const CPU_BOUND_PCT: f64 = 80.0;
/// Contended acquisitions per I/O below which a contention figure is judged by absolute
/// difference (|model − kernel| ≤ this), not by ratio.
pub const CONTENTION_FLOOR: f64 = 0.05;
/// Rounds below which the kernel's spread is too few to widen a band on (said in the source).
pub const SPREAD_ROUNDS: usize = 5;

/// How a row counts.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Verdict {
    /// The model is within its band and no control is: the figure is evidence.
    Evidence,
    /// The model is within, and so is a control (the null model or a constant): no evidence.
    ControlWithin { control: &'static str },
    /// The model is outside its band.
    Outside,
    /// A model input was computed from this very figure: not counted.
    Fitted { input: String },
    /// The model's interval reaches across a bound of the band: the rounds cannot tell.
    Inconclusive { why: String },
    /// Not judged, and why.
    NotJudged { why: String },
}

impl Verdict {
    pub fn label(&self) -> String {
        match self {
            Verdict::Evidence => "yes (evidence)".into(),
            Verdict::ControlWithin { control } => format!("yes, {control} too"),
            Verdict::Outside => "NO".into(),
            Verdict::Fitted { .. } => "fitted".into(),
            Verdict::Inconclusive { why } => format!("inconclusive: {why}"),
            Verdict::NotJudged { why } => format!("not judged: {why}"),
        }
    }
}

/// Why a row with no judgement is not judged.
const NO_FIGURE: &str = "a side has no figure or no band is set";

/// A row's verdict from the model's and the controls' judgements and the model's inputs.
pub fn verdict(
    id: Figure,
    within: Option<bool>,
    null_within: Option<bool>,
    constant_within: Option<bool>,
    inputs: &[Calibrated],
    not_judged: Option<String>,
) -> Verdict {
    if let Some(input) = inputs.iter().find(|i| i.from.contains(&id)) {
        return Verdict::Fitted { input: input.input.clone() };
    }
    if let Some(why) = not_judged {
        return Verdict::NotJudged { why };
    }
    match within {
        None => Verdict::NotJudged { why: NO_FIGURE.into() },
        Some(false) => Verdict::Outside,
        Some(true) if null_within == Some(true) => Verdict::ControlWithin { control: "null model" },
        Some(true) if constant_within == Some(true) => {
            Verdict::ControlWithin { control: "constant" }
        }
        Some(true) => Verdict::Evidence,
    }
}

/// How close model ÷ kernel must be.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Band {
    /// |model ÷ kernel − 1| ≤ pct %.
    Within { pct: f64 },
    /// kernel ÷ factor ≤ model ≤ kernel × factor; below `floor` (kernel's figure),
    /// |model − kernel| ≤ floor.
    Factor { factor: f64, floor: f64 },
    /// The same whole number.
    Equal,
    /// No band set: shown for the record.
    Unset,
}

impl Band {
    pub fn describe(&self) -> String {
        match self {
            Band::Within { pct } => format!("within {pct:.0} %"),
            Band::Factor { factor, floor } if *floor > 0.0 => {
                format!("× {factor} (±{floor} below {floor})")
            }
            Band::Factor { factor, .. } => format!("within × {factor}"),
            Band::Equal => "equal".into(),
            Band::Unset => "none set".into(),
        }
    }

    /// Whether an interval of the model's figure is within the band around `kernel`: met when
    /// the whole interval is inside, missed when it is wholly outside, inconclusive when it
    /// reaches across a bound ([`judge_within`]); `None` without a kernel figure, or for a band
    /// other than [`Band::Within`] (the only one a ratio over rounds is judged by).
    pub fn judge_interval(&self, kernel: Option<f64>, model: Interval) -> Option<GoalVerdict> {
        let k = kernel.filter(|k| k.is_finite() && *k > 0.0)?;
        match *self {
            Band::Within { pct } => {
                let band = (k * (1.0 - pct / 100.0), k * (1.0 + pct / 100.0));
                Some(judge_within(model, band))
            }
            _ => None,
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
            Band::Factor { floor, .. } if floor > 0.0 && k < floor => {
                Some((m - k).abs() <= floor + 1e-12)
            }
            _ if k == 0.0 && m == 0.0 => Some(true),
            _ if k <= 0.0 => Some(false),
            Band::Within { pct } => Some((m / k - 1.0).abs() <= pct / 100.0 + 1e-12),
            Band::Factor { factor, .. } => Some(m >= k / factor - 1e-12 && m <= k * factor + 1e-12),
        }
    }
}

/// One figure of the table, at one point.
#[derive(Clone, Debug, Serialize)]
pub struct FidelityRow {
    pub point: Point,
    /// What the figure is (model inputs name these).
    pub id: Figure,
    pub figure: String,
    pub unit: &'static str,
    pub kernel: Option<f64>,
    pub model: Option<f64>,
    pub model_over_kernel: Option<f64>,
    pub band: Band,
    /// The model's point figure within the band (the verdict of a ratio over rounds is taken on
    /// `within_interval` instead).
    pub within: Option<bool>,
    /// The model's per-round ratios (a throughput ratio taken within each round): median, min,
    /// max over rounds; `null` for a figure that is not one.
    pub model_rounds: Option<Spread>,
    /// Their 95 % bootstrap interval over rounds ([`crate::stats::ratio_interval`]).
    pub model_interval: Option<Interval>,
    /// Why `model_interval` is null ("no interval: fewer than 6 rounds", "not a ratio over
    /// rounds").
    pub model_no_interval: Option<String>,
    /// The model's interval against the band: met (within), missed (outside), inconclusive.
    pub within_interval: Option<GoalVerdict>,
    /// The null model's figure (calibrated spin, no scheduler, no lock), and whether it is
    /// within the same band.
    pub null_model: Option<f64>,
    pub null_within: Option<bool>,
    /// A constant answer, where one fits (groups ÷ no groups = 1), and whether it is within.
    pub constant: Option<f64>,
    pub constant_within: Option<bool>,
    /// How the row counts ([`verdict`]).
    pub verdict: Verdict,
    /// Where each side's figure comes from, and what stands in for what.
    pub source: String,
}

impl FidelityRow {
    /// A row with no control and no verdict yet ([`FidelityRow::judge`] sets them).
    pub fn new(
        point: Point,
        id: Figure,
        figure: impl Into<String>,
        unit: &'static str,
        kernel: Option<f64>,
        model: Option<f64>,
        band: Band,
        source: impl Into<String>,
    ) -> FidelityRow {
        FidelityRow {
            point,
            id,
            figure: figure.into(),
            unit,
            kernel,
            model,
            model_over_kernel: kernel.zip(model).filter(|(k, _)| *k != 0.0).map(|(k, m)| m / k),
            band,
            within: band.judge(kernel, model),
            model_rounds: None,
            model_interval: None,
            model_no_interval: Some("not a ratio over rounds".into()),
            within_interval: None,
            null_model: None,
            null_within: None,
            constant: None,
            constant_within: None,
            verdict: Verdict::NotJudged { why: "not yet judged".into() },
            source: source.into(),
        }
    }

    /// Makes the row a ratio over rounds: `ratios` are the model's per-round ratios, and the
    /// row is judged on their interval ([`FidelityRow::judge`]).
    pub fn with_model_rounds(mut self, ratios: Vec<f64>) -> FidelityRow {
        let rounds = (!ratios.is_empty()).then(|| Spread::of(ratios));
        let interval = match &rounds {
            Some(r) => ratio_interval(r),
            None => Err(NoInterval::NoPairedRound("ran both model rows")),
        };
        self.model_interval = interval.as_ref().ok().copied();
        self.model_no_interval = interval.err().map(|why| why.to_string());
        let (kernel, band) = (self.kernel, &self.band);
        self.within_interval = self.model_interval.and_then(|i| band.judge_interval(kernel, i));
        self.model_rounds = rounds;
        self
    }

    /// Sets the controls and the verdict. A ratio over rounds is judged on its interval: not
    /// judged without one, [`Verdict::Inconclusive`] when it reaches across the band.
    fn judge(
        mut self,
        null_model: Option<f64>,
        constant: Option<f64>,
        inputs: &[Calibrated],
        not_judged: Option<String>,
    ) -> FidelityRow {
        self.null_model = null_model;
        self.null_within = self.band.judge(self.kernel, null_model);
        self.constant = constant;
        self.constant_within = constant.and_then(|c| self.band.judge(self.kernel, Some(c)));
        let (within, not_judged) = match (&self.model_rounds, self.within_interval) {
            (None, _) => (self.within, not_judged),
            (Some(_), Some(GoalVerdict::Met)) => (Some(true), not_judged),
            (Some(_), Some(GoalVerdict::Missed)) => (Some(false), not_judged),
            (Some(_), Some(GoalVerdict::Inconclusive)) => (None, not_judged),
            (Some(_), None) => (None, not_judged.or_else(|| self.model_no_interval.clone())),
        };
        let straddles = self.within_interval == Some(GoalVerdict::Inconclusive);
        let (null_within, constant_within) = (self.null_within, self.constant_within);
        let judged = verdict(self.id, within, null_within, constant_within, inputs, not_judged);
        self.verdict = match judged {
            Verdict::NotJudged { why } if straddles && why == NO_FIGURE => {
                let i = self.model_interval.unwrap_or(Interval { lo: f64::NAN, hi: f64::NAN });
                let (lo, hi) = (i.lo, i.hi);
                let why =
                    format!("the model's interval [{lo:.2}, {hi:.2}] reaches across the band");
                Verdict::Inconclusive { why }
            }
            v => v,
        };
        self
    }
}

/// How many rows are evidence, how many judged (not fitted, not "not judged"), and how many the
/// model is within.
pub fn summary(rows: &[FidelityRow]) -> (usize, usize, usize) {
    let judged = rows
        .iter()
        .filter(|r| {
            matches!(
                r.verdict,
                Verdict::Evidence | Verdict::ControlWithin { .. } | Verdict::Outside
            )
        })
        .count();
    let within = rows
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Evidence | Verdict::ControlWithin { .. }))
        .count();
    let evidence = rows.iter().filter(|r| r.verdict == Verdict::Evidence).count();
    (evidence, judged, within)
}

/// The summary line every rendering prints.
pub fn summary_line(rows: &[FidelityRow]) -> String {
    let (evidence, judged, within) = summary(rows);
    let fitted = rows.iter().filter(|r| matches!(r.verdict, Verdict::Fitted { .. })).count();
    let inconclusive = rows.iter().filter(|r| matches!(r.verdict, Verdict::Inconclusive { .. }));
    let inconclusive = inconclusive.count();
    format!(
        "{evidence} figures where the model is within and the null model is not (of {judged} \
         judged; the model within at {within}); {fitted} fitted, not counted; \
         {inconclusive} inconclusive (the model's interval over rounds reaches across the band)"
    )
}

fn row_of(kernel: &[KernelRow], c: KernelSched) -> Option<&KernelRow> {
    kernel.iter().find(|r| r.config == c && !r.runs.is_empty())
}

/// Within-round ratios a ÷ b (rounds where both ran).
fn round_ratios(a: &[(usize, f64)], b: &[(usize, f64)]) -> Vec<f64> {
    a.iter()
        .filter_map(|&(ra, x)| {
            b.iter().find(|&&(rb, _)| rb == ra).filter(|(_, y)| *y > 0.0).map(|&(_, y)| x / y)
        })
        .collect()
}

/// Median of within-round ratios a ÷ b (rounds where both ran); the ratio of medians when no
/// round has both.
fn within_round(a: &[(usize, f64)], b: &[(usize, f64)]) -> Option<f64> {
    let v = round_ratios(a, b);
    if !v.is_empty() {
        return Some(median(&v));
    }
    let (ma, mb) = (
        median(&a.iter().map(|x| x.1).collect::<Vec<_>>()),
        median(&b.iter().map(|x| x.1).collect::<Vec<_>>()),
    );
    (!a.is_empty() && mb > 0.0).then(|| ma / mb)
}

/// A throughput band: `nominal` % or the kernel's own round-to-round spread of the ratio (half
/// its range over its median, %), whichever is wider; and the words that say which.
fn throughput_band(nominal: f64, kernel_ratios: &[f64]) -> (Band, String) {
    if kernel_ratios.len() < 2 {
        return (
            Band::Within { pct: nominal },
            format!("band {nominal:.0} %: one kernel round, no spread"),
        );
    }
    let (lo, hi) = kernel_ratios
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| (l.min(x), h.max(x)));
    let spread = 100.0 * (hi - lo) / 2.0 / median(kernel_ratios);
    let pct = nominal.max(spread);
    let few = if kernel_ratios.len() < SPREAD_ROUNDS {
        format!(" (only {} rounds: fewer than {SPREAD_ROUNDS})", kernel_ratios.len())
    } else {
        String::new()
    };
    (Band::Within { pct: pct.round() }, format!("band: the larger of {nominal:.0} % and the kernel's spread {spread:.0} % over {} rounds{few}", kernel_ratios.len()))
}

/// How busy the kernel's CPUs were in a row's rounds, % of all CPUs: KIOPS × CPU per I/O.
fn busy_pct(row: &KernelRow, cpus: usize) -> Option<f64> {
    let cpu_us =
        row.experiment_cpu_per_io_us.as_ref().map_or(row.cpu_per_io_us.median, |s| s.median);
    (cpu_us > 0.0 && cpus > 0).then(|| 100.0 * row.kiops.median * cpu_us / 1e3 / cpus as f64)
}

/// The model's inputs at a point that were computed from the kernel: what each is and which
/// kernel figures it was computed from. `outside_from_kernel` / `elevator_from_kernel`: whether
/// the run took them from the kernel (`--model-outside-ns kernel`, `--model-elevator-ns kernel`).
pub fn model_inputs(
    r: &PointResult,
    outside_from_kernel: bool,
    elevator_from_kernel: bool,
    kernel_release: &str,
) -> Vec<Calibrated> {
    let mut v = Vec::new();
    if outside_from_kernel {
        v.push(Calibrated {
            input: "outside work per request".into(),
            value: r.model_outside_ns as f64,
            unit: "ns",
            from: vec![Figure::NoneCpuPerIo],
        });
    }
    if elevator_from_kernel && r.model_elevator_ns > 0 {
        // bfq's CPU per I/O over none's, less BFQ's own functions: the extra-CPU figure itself.
        v.push(Calibrated {
            input: "elevator cost, bfq rows".into(),
            value: r.model_elevator_ns as f64,
            unit: "ns",
            from: vec![Figure::ExtraCpuPerIo, Figure::NoneCpuPerIo],
        });
    }
    if let Some(dd) =
        r.elevator.as_ref().and_then(|e| e.mq_deadline.as_ref()).filter(|_| elevator_from_kernel)
    {
        v.push(Calibrated {
            input: "elevator cost, deadline row".into(),
            // Not estimable (below 0): the model ran without one (`super::run`'s pads).
            value: dd.elevator_us.unwrap_or(0.0) * 1e3,
            unit: "ns",
            from: vec![Figure::DeadlineCpuPerIo, Figure::NoneCpuPerIo],
        });
    }
    if let Some(c) = &r.sites {
        for (i, t) in c.sites.iter().enumerate() {
            let site = SITES.iter().map(|(_, p)| *p).find(|p| *p == t.site).unwrap_or("other");
            // The hold comes from the locked time less the waited time of a recorded run of its
            // own (not the rounds' runs, whose contention counts are judged).
            let mut from = vec![Figure::SiteHold(site)];
            if t.wait_us.is_some() {
                from.push(Figure::SiteWait(site));
            }
            v.push(Calibrated {
                input: format!("hold pad at {site}"),
                value: c.pads.hold_ns[i] as f64,
                unit: "ns",
                from,
            });
        }
        v.push(Calibrated {
            input: "gaps between the sites".into(),
            value: c.pads.gaps() as f64,
            unit: "ns",
            from: vec![Figure::NoneCpuPerIo],
        });
    }
    if let Some(n) = kernel_sites(kernel_release) {
        // The model's kernel profile (its lock sites) is chosen by the release's site count.
        v.push(Calibrated {
            input: "lock sites per request (kernel profile)".into(),
            value: n as f64,
            unit: "per I/O",
            from: vec![Figure::Acquisitions],
        });
    }
    v
}

/// The null model's throughput ratio against `none`: a calibrated spin of `outside` ns per
/// request, and of `outside + elevator` in the scheduler row, CPU-bound on both sides.
fn null_ratio(outside_ns: u64, elevator_ns: f64) -> Option<f64> {
    (outside_ns > 0).then(|| outside_ns as f64 / (outside_ns as f64 + elevator_ns))
}

fn kernel_rounds(r: &KernelRow) -> Vec<(usize, f64)> {
    r.runs.iter().map(|x| (x.round, x.iops / 1e3)).collect()
}

/// BFQ's lock sites in a kernel release, from the code: the bio merge, insert, dispatch and
/// finish since BFQ entered blk-mq (4.12); the depth limit's `bfqq_request_over_limit` since 5.18.
/// `None` for a release it cannot read.
pub fn kernel_sites(release: &str) -> Option<usize> {
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<u32>().ok());
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
                    // Summed wider (issue 43): a ratio needs no error, and a u128 cannot wrap.
                    let n: u128 = c
                        .scheduler_callers
                        .iter()
                        .filter(|(f, _)| site_of(f).unwrap_or("other") == site)
                        .map(|(_, c)| u128::from(c.contentions))
                        .sum();
                    // As `kernel_row`: the recorder covers the ramp too.
                    Some(n as f64 / (r.ios as f64 * (r.runtime_s + ramp_s) / r.runtime_s))
                })
                .collect();
            (site, if v.is_empty() { f64::NAN } else { median(&v) })
        })
        .filter(|(_, v)| v.is_finite())
        .collect()
}

/// The table's rows for one point, judged against the controls and the model's `inputs`
/// ([`model_inputs`]); `cpus`: the machine's CPUs (for the kernel's busy share).
pub fn rows(
    r: &PointResult,
    groups: usize,
    kernel_release: &str,
    ramp_s: f64,
    inputs: &[Calibrated],
    cpus: usize,
) -> Vec<FidelityRow> {
    let point = r.point;
    let k = |c| row_of(&r.kernel, c);
    let m = |e: &str, g: usize| {
        r.model.iter().find(|m| m.entry == e && m.groups == g && !m.kiops.runs.is_empty())
    };
    let kratios = |a, b| {
        k(a).zip(k(b))
            .map(|(a, b)| round_ratios(&kernel_rounds(a), &kernel_rounds(b)))
            .unwrap_or_default()
    };
    let kr =
        |a, b| k(a).zip(k(b)).and_then(|(a, b)| within_round(&kernel_rounds(a), &kernel_rounds(b)));
    let mr = |a: &str, ga, b: &str, gb| {
        m(a, ga).zip(m(b, gb)).and_then(|(a, b)| within_round(&a.kiops_by_round, &b.kiops_by_round))
    };
    // The model's per-round ratios, for the interval its throughput rows are judged on.
    let mratios = |a: &str, ga, b: &str, gb| {
        let rows = m(a, ga).zip(m(b, gb));
        rows.map(|(a, b)| round_ratios(&a.kiops_by_round, &b.kiops_by_round)).unwrap_or_default()
    };
    // A throughput ratio is judged only where both kernel rows kept the CPUs busy.
    let not_cpu_bound = |a, b| {
        let busy = [k(a), k(b)]
            .into_iter()
            .map(|row| row.and_then(|row| busy_pct(row, cpus)))
            .collect::<Option<Vec<f64>>>()?;
        let least = busy.iter().copied().fold(f64::INFINITY, f64::min);
        (least < CPU_BOUND_PCT).then(|| format!("not CPU-bound (CPU busy {least:.0} %)"))
    };
    let elevator_of =
        |c: &dyn Fn(&super::rows::ElevatorCost) -> Option<&super::rows::SchedulerCost>| {
            r.elevator.as_ref().and_then(c).map(|s| s.elevator_us.unwrap_or(0.0) * 1e3)
        };
    let bfq_elevator = elevator_of(&|e| e.bfq.as_ref()).unwrap_or(r.model_elevator_ns as f64);
    let dd_elevator = elevator_of(&|e| e.mq_deadline.as_ref()).unwrap_or(0.0);
    // A throughput ratio: the kernel's a ÷ b beside the model's (entry, groups) ÷ (entry,
    // groups), within-round; its band from the kernel's own rounds (`how` is told why), judged
    // on the model's per-round interval, and only where the kernel kept the CPUs busy.
    let throughput_row = |figure: Figure,
                          label: String,
                          (ka, kb): (KernelSched, KernelSched),
                          (ma, ga, mb, gb): (&str, usize, &str, usize),
                          how: &dyn Fn(&str) -> String,
                          (null, constant): (Option<f64>, Option<f64>)| {
        let (band, why) = throughput_band(10.0, &kratios(ka, kb));
        FidelityRow::new(point, figure, label, "×", kr(ka, kb), mr(ma, ga, mb, gb), band, how(&why))
            .with_model_rounds(mratios(ma, ga, mb, gb))
            .judge(null, constant, inputs, not_cpu_bound(ka, kb))
    };
    let mut out = vec![throughput_row(
        Figure::BfqOverNoneIops,
        "bfq ÷ none, IOPS".into(),
        (KernelSched::Bfq, KernelSched::None),
        (MODEL_BFQ, 0, "none", 0),
        &|why| format!("median of within-round ratios; model {MODEL_BFQ} ÷ none; {why}"),
        (null_ratio(r.model_outside_ns, bfq_elevator), None),
    )];
    let deadline =
        if m(MODEL_DEADLINE, 0).is_some() { MODEL_DEADLINE } else { MODEL_DEADLINE_STAND_IN };
    out.push(throughput_row(
        Figure::DeadlineOverNoneIops,
        "mq-deadline ÷ none, IOPS".into(),
        (KernelSched::MqDeadline, KernelSched::None),
        (deadline, 0, "none", 0),
        &|why| {
            if deadline == MODEL_DEADLINE {
                format!("model {MODEL_DEADLINE} ÷ none; {why}")
            } else {
                format!("model {MODEL_DEADLINE_STAND_IN} ÷ none: a stand-in, the model has no `{MODEL_DEADLINE}` row; {why}")
            }
        },
        (null_ratio(r.model_outside_ns, dd_elevator), None),
    ));
    if groups > 0 {
        out.push(throughput_row(
            Figure::GroupsOverNoGroupsIops,
            format!("{groups} groups ÷ no groups, IOPS"),
            (KernelSched::BfqGroups, KernelSched::Bfq),
            (MODEL_BFQ, groups, MODEL_BFQ, 0),
            &|why| format!("kernel bfq in {groups} cgroups ÷ bfq; model {MODEL_BFQ} at {groups} groups ÷ at 0; {why}"),
            // The null model has no groups: its ratio is 1, as the constant answer's.
            (Some(1.0), Some(1.0)),
        ));
    }
    let experiment = r.elevator.as_ref().is_some_and(|e| e.basis == "experiment");
    let kcpu = |c| {
        k(c).and_then(|row| {
            if experiment {
                row.experiment_cpu_per_io_us.as_ref().map(|s| s.median)
            } else {
                Some(row.cpu_per_io_us.median)
            }
        })
        .filter(|v| *v > 0.0)
    };
    let mcpu = |e| m(e, 0).map(|row| row.cpu_per_io_us.median).filter(|v| *v > 0.0);
    out.push(
        FidelityRow::new(
            point,
            Figure::ExtraCpuPerIo,
            "extra CPU per I/O of bfq over none",
            "µs",
            // bfq does all that none does and more: a negative difference is what the CPU
            // accounting cannot resolve, not a figure (issue 44: −51.90 µs was judged).
            kcpu(KernelSched::Bfq).zip(kcpu(KernelSched::None)).map(|(a, b)| a - b).filter(|d| *d >= 0.0),
            mcpu(MODEL_BFQ).zip(mcpu("none")).map(|(a, b)| a - b).filter(|d| *d >= 0.0),
            Band::Within { pct: 25.0 },
            format!(
                "kernel: {} CPU per I/O; model: its CPU per request, {MODEL_BFQ} − none; a negative difference is not estimable",
                if experiment { "the experiment's" } else { "all CPUs'" }
            ),
        )
        // The null model spends the elevator cost and nothing else.
        .judge(Some(bfq_elevator / 1e3), None, inputs, None),
    );
    let bfq_model = m(MODEL_BFQ, 0);
    out.push(
        FidelityRow::new(
            point,
            Figure::Acquisitions,
            "scheduler-lock acquisitions per I/O",
            "per I/O",
            kernel_sites(kernel_release).map(|n| n as f64),
            bfq_model.and_then(|row| row.sched_acquisitions_per_io),
            Band::Equal,
            format!(
                "kernel: its code, one per site ({kernel_release}), not measured: uncontended acquisitions leave no tracepoint without lockdep, and this machine kind's kernel has no kprobes; model: {MODEL_BFQ}'s lock statistics"
            ),
        )
        .judge(Some(0.0), None, inputs, None),
    );
    let kbfq = k(KernelSched::Bfq);
    let contention_band = Band::Factor { factor: 1.5, floor: CONTENTION_FLOOR };
    out.push(
        FidelityRow::new(
            point,
            Figure::ContendedAll,
            "contended acquisitions per I/O, all sites",
            "per I/O",
            kbfq.and_then(|row| row.sched_contentions_per_io.as_ref()).map(|s| s.median),
            bfq_model.and_then(|row| row.sched_contentions_per_io.as_ref()).map(|s| s.median),
            contention_band,
            format!("kernel: bpftrace's contention tracepoints (recorded runs); model: {MODEL_BFQ}'s lock statistics"),
        )
        .judge(Some(0.0), None, inputs, None),
    );
    let ksites = kbfq.map(|row| kernel_sites_per_io(row, ramp_s)).unwrap_or_default();
    for (fns, path) in SITES {
        // A model that ran with lock statistics but has no such path contends there 0 times.
        let model = bfq_model.filter(|row| row.sched_acquisitions_per_io.is_some()).map(|row| {
            row.sched_by_path.iter().find(|(p, _, _)| p == path).map_or(0.0, |(_, _, c)| *c)
        });
        out.push(
            FidelityRow::new(
                point,
                Figure::ContendedAt(path),
                format!("contended acquisitions per I/O at {path}"),
                "per I/O",
                (!ksites.is_empty())
                    .then(|| ksites.iter().find(|(s, _)| *s == path).map_or(0.0, |(_, v)| *v)),
                model,
                contention_band,
                format!("kernel: callers {}; model: path `{path}`", fns.join(", ")),
            )
            .judge(Some(0.0), None, inputs, None),
        );
    }
    out.push(
        FidelityRow::new(
            point,
            Figure::StatsShare,
            "statistics' share of the scheduler's work",
            "%",
            kbfq.and_then(|row| row.profile.as_ref()).and_then(|p| p.stats_share_of_scheduler_pct),
            bfq_model.and_then(|row| row.stats_share_of_scheduler_pct),
            Band::Unset,
            format!("perf profile of kernel bfq; the model's profile of {MODEL_BFQ}"),
        )
        .judge(Some(0.0), None, inputs, None),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two callers of one site (here "other") whose contentions add up past u64::MAX: summed
    /// wider, the site's figure is their whole, not what a wrapped sum left (issue 43).
    #[test]
    fn contentions_of_one_site_past_the_largest_count_are_summed_wider() {
        use super::super::contention::{Contention, ContentionSummary};
        let caller = |name: &str, n: u64| {
            (name.to_string(), Contention { contentions: n, ..Contention::default() })
        };
        let run = super::super::rows::KernelRun {
            round: 0,
            iops: 1.0,
            ios: 1,
            runtime_s: 1.0,
            cpu_per_io_us: None,
            fio_cpu_per_io_us: None,
            experiment_cpu_per_io_us: None,
            other_cpus: None,
            contention: Some(ContentionSummary {
                scheduler_callers: vec![caller("x_unlisted", u64::MAX), caller("y_unlisted", 2)],
                ..ContentionSummary::default()
            }),
            stopped_s: None,
            reruns_stopped: 0,
        };
        let row = KernelRow {
            config: KernelSched::Bfq,
            runs: Vec::new(),
            recorded: vec![run],
            kiops: Default::default(),
            cpu_per_io_us: Default::default(),
            experiment_cpu_per_io_us: None,
            sched_contentions_per_io: None,
            other_contentions_per_io: None,
            sched_wait_avg_ns: None,
            sched_wait_max_ns: None,
            recording_cost_pct: None,
            profile: None,
            profile_run: None,
            flamegraph: None,
        };
        let per_io = kernel_sites_per_io(&row, 0.0);
        let other = per_io.iter().find(|(s, _)| *s == "other").map(|(_, v)| *v);
        assert!(other.is_some_and(|v| v >= u64::MAX as f64), "{per_io:?}");
    }

    #[test]
    fn bands_judge_model_against_kernel() {
        let w = Band::Within { pct: 10.0 };
        assert_eq!(w.judge(Some(0.60), Some(0.65)), Some(true));
        assert_eq!(w.judge(Some(0.60), Some(0.85)), Some(false));
        assert_eq!(w.judge(None, Some(1.0)), None);
        let f = Band::Factor { factor: 1.5, floor: 0.0 };
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
    fn below_the_floor_contention_is_judged_by_difference() {
        let f = Band::Factor { factor: 1.5, floor: 0.05 };
        // 0.01 against 0.04: four times apart, within 0.05 of each other.
        assert_eq!(f.judge(Some(0.01), Some(0.04)), Some(true));
        assert_eq!(f.judge(Some(0.01), Some(0.07)), Some(false));
        // Above the floor the factor rules.
        assert_eq!(f.judge(Some(0.30), Some(0.10)), Some(false));
        assert_eq!(f.judge(Some(0.30), Some(0.40)), Some(true));
    }

    #[test]
    fn a_figure_an_input_was_computed_from_is_fitted_and_not_counted() {
        let point = Point { threads: 2, iodepth: 32, ioengine: "io_uring" };
        let elevator = Calibrated {
            input: "elevator".into(),
            value: 5000.0,
            unit: "ns",
            from: vec![Figure::ExtraCpuPerIo],
        };
        let row = |id| {
            FidelityRow::new(
                point,
                id,
                "f",
                "µs",
                Some(7.0),
                Some(7.1),
                Band::Within { pct: 25.0 },
                "",
            )
        };
        // The extra CPU the elevator cost was computed from: fitted, whatever the model says.
        let fitted = row(Figure::ExtraCpuPerIo).judge(
            Some(1.0),
            None,
            std::slice::from_ref(&elevator),
            None,
        );
        assert_eq!(fitted.verdict, Verdict::Fitted { input: "elevator".into() });
        // Another figure with the same numbers is judged: evidence (the null model's 1.0 is out).
        let judged = row(Figure::BfqOverNoneIops).judge(
            Some(1.0),
            None,
            std::slice::from_ref(&elevator),
            None,
        );
        assert_eq!(judged.verdict, Verdict::Evidence);
        // A null model within the band too: no evidence.
        let control = row(Figure::BfqOverNoneIops).judge(Some(7.0), None, &[], None);
        assert_eq!(control.verdict, Verdict::ControlWithin { control: "null model" });
        // A constant within: no evidence either.
        let constant = row(Figure::GroupsOverNoGroupsIops).judge(Some(1.0), Some(7.0), &[], None);
        assert_eq!(constant.verdict, Verdict::ControlWithin { control: "constant" });
        let rows = [fitted, judged, control, constant];
        assert_eq!(summary(&rows), (1, 3, 3));
    }

    /// Issue 42: a throughput ratio of the model's rows is judged on its interval over rounds.
    #[test]
    fn a_model_ratio_over_rounds_is_judged_on_its_interval() {
        let point = Point { threads: 2, iodepth: 32, ioengine: "io_uring" };
        // The kernel's bfq ÷ none is 0.80, the band ±10 % (0.72–0.88); the null model's 1.0 is
        // outside it. The model's median ratio is 0.80 in every case below.
        let band = || Band::Within { pct: 10.0 };
        let id = Figure::BfqOverNoneIops;
        let row = |m| FidelityRow::new(point, id, "f", "×", Some(0.80), Some(m), band(), "");
        let judged = |ratios: Vec<f64>| {
            let with_rounds = row(median(&ratios)).with_model_rounds(ratios);
            with_rounds.judge(Some(1.0), None, &[], None)
        };
        let tight = judged(vec![0.79, 0.80, 0.81, 0.80, 0.80, 0.81]);
        let i = tight.model_interval.expect("six rounds");
        assert!(i.lo >= 0.79 && i.hi <= 0.81, "{i:?}");
        assert_eq!(tight.within_interval, Some(GoalVerdict::Met));
        assert_eq!(tight.verdict, Verdict::Evidence);
        // The same median, rounds from 0.60 to 1.00: the interval straddles both bounds.
        let wide = judged(vec![0.60, 0.80, 1.00, 0.62, 0.98, 0.80, 0.80]);
        let interval = wide.model_interval;
        assert_eq!(wide.within_interval, Some(GoalVerdict::Inconclusive), "{interval:?}");
        assert!(matches!(wide.verdict, Verdict::Inconclusive { .. }), "{:?}", wide.verdict);
        let counts = summary(std::slice::from_ref(&wide));
        assert_eq!(counts, (0, 0, 0), "inconclusive is not counted as judged");
        // Wholly above the band: outside.
        let high = judged(vec![1.19, 1.2, 1.21, 1.2, 1.19, 1.21]);
        assert_eq!(high.within_interval, Some(GoalVerdict::Missed));
        assert_eq!(high.verdict, Verdict::Outside);
        // Five rounds: no interval, not judged, and why; the point figure alone would be within.
        let five = judged(vec![0.80; 5]);
        assert_eq!(
            (five.model_interval, five.within, five.within_interval),
            (None, Some(true), None)
        );
        let why = "no interval: fewer than 6 rounds".to_string();
        assert_eq!(five.verdict, Verdict::NotJudged { why });
        let json = serde_json::to_value(&five).unwrap();
        assert!(json["model_interval"].is_null(), "{json}");
        assert!(json["model_no_interval"].is_string(), "{json}");
    }

    #[test]
    fn the_model_inputs_name_the_figures_they_come_from() {
        // Every input the kernel peer calibrates from the kernel names its figures, and the two
        // that are judged figures themselves (the elevator cost from the extra CPU, the kernel
        // profile from the site count) make those rows fitted.
        let point = Point { threads: 2, iodepth: 32, ioengine: "io_uring" };
        let r = PointResult {
            point,
            model_outside_ns: 7000,
            model_elevator_ns: 5000,
            kernel: vec![],
            model: vec![],
            side_by_side: vec![],
            elevator: None,
            sites: None,
        };
        let inputs = model_inputs(&r, true, true, "6.18.44");
        let names: Vec<&str> = inputs.iter().map(|i| i.input.as_str()).collect();
        assert_eq!(
            names,
            [
                "outside work per request",
                "elevator cost, bfq rows",
                "lock sites per request (kernel profile)"
            ]
        );
        let table = rows(&r, 0, "6.18.44", 0.0, &inputs, 2);
        let verdict_of = |id| table.iter().find(|row| row.id == id).map(|row| row.verdict.clone());
        assert!(matches!(verdict_of(Figure::ExtraCpuPerIo), Some(Verdict::Fitted { .. })));
        assert!(matches!(verdict_of(Figure::Acquisitions), Some(Verdict::Fitted { .. })));
        assert!(!matches!(verdict_of(Figure::BfqOverNoneIops), Some(Verdict::Fitted { .. })));
        // With fixed inputs nothing is fitted but the site count.
        let fixed = model_inputs(&r, false, false, "6.18.44");
        assert_eq!(fixed.len(), 1);
    }

    #[test]
    fn throughput_bands_widen_to_the_kernels_spread() {
        let (band, _) = throughput_band(10.0, &[0.45, 0.55, 0.50, 0.60, 0.40]);
        // Range 0.20, half 0.10, median 0.50: 20 %.
        assert_eq!(band, Band::Within { pct: 20.0 });
        let (band, _) = throughput_band(10.0, &[0.50, 0.51, 0.50, 0.49, 0.50]);
        assert_eq!(band, Band::Within { pct: 10.0 });
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
        assert_eq!(round_ratios(&a, &b).len(), 2);
        assert_eq!(within_round(&[], &b), None);
    }
}

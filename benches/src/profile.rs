//! On-CPU profiles of the workload: pprof-rs samples folded into stacks, flamegraphs and
//! differential flamegraphs (inferno, through pprof), where the time goes as a table, and a
//! criterion profiler.
//!
//! pprof-rs arms `ITIMER_PROF`: the kernel sends `SIGPROF` after every 1/frequency seconds of CPU
//! time the *process* uses, and the handler records the interrupted thread's stack. So the samples
//! are on-CPU time: a spinning waiter shows up, a thread parked in a futex or sleeping does not
//! (notes/flamegraphs.md gives the `perf` command for off-CPU time).
//!
//! Only one profiler can run in a process (the timer and the signal handler are process-wide):
//! [`Sampling::start`] takes a process-wide mutex, so callers on several threads (tests) queue up.
//! Everything else the process does while it samples is in the profile too.
//!
//! Samples whose interrupted instruction lies in libc, libgcc, libpthread or the vDSO are dropped
//! (pprof's blocklist: unwinding from inside them can deadlock). [`Folded::unsampled_share`] says
//! how much CPU time that and timer coalescing left out.

use crate::workload::{run_named, RunResult, WorkloadConfig};
use schedlab_core::sync::AtomicBool;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// Default sampling frequency, Hz: under the machine's 250 Hz tick (process CPU timers are checked
/// on ticks, so faster asks are coalesced), and not a divisor of it, so sampling does not lock
/// step with tick-driven activity.
pub const DEFAULT_FREQUENCY: i32 = 199;

/// Shared objects in which a sample is dropped rather than unwound.
pub const BLOCKLIST: [&str; 4] = ["libc", "libgcc", "pthread", "vdso"];

/// One pprof profiler per process.
static ONE_PROFILER: Mutex<()> = Mutex::new(());

/// Process CPU time (user + system, every thread, live or exited), seconds, from /proc/self/stat.
fn process_cpu_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at field 3 (state); utime and
    // stime are fields 14 and 15, in clock ticks (USER_HZ, 100 on Linux).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

/// A running profiler. [`Sampling::finish`] stops it and folds what it saw.
pub struct Sampling {
    // Dropped before `_one`: the profiler stops before the next caller may start one.
    guard: pprof::ProfilerGuard<'static>,
    _one: MutexGuard<'static, ()>,
    frequency: i32,
    started: Instant,
    cpu_start: Option<f64>,
}

impl std::fmt::Debug for Sampling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampling").field("frequency", &self.frequency).finish_non_exhaustive()
    }
}

impl Sampling {
    /// Starts sampling the whole process at `frequency` Hz (waits for any other profiler in this
    /// process to finish first).
    pub fn start(frequency: i32) -> Result<Sampling, String> {
        if !(1..=1000).contains(&frequency) {
            return Err(format!("sampling frequency must be 1..=1000 Hz, got {frequency}"));
        }
        // A panic while profiling poisons the mutex; the profiler itself was stopped by the
        // guard's drop during unwinding, so the next caller may go on.
        let one = ONE_PROFILER.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let guard = pprof::ProfilerGuardBuilder::default()
            .frequency(frequency)
            .blocklist(&BLOCKLIST)
            .build()
            .map_err(|e| format!("cannot start the profiler: {e}"))?;
        Ok(Sampling { guard, _one: one, frequency, started: Instant::now(), cpu_start: process_cpu_s() })
    }

    /// Stops sampling and folds the stacks (every thread merged, root first).
    pub fn finish(self) -> Result<Folded, String> {
        let wall_s = self.started.elapsed().as_secs_f64();
        let cpu_s = match (self.cpu_start, process_cpu_s()) {
            (Some(a), Some(b)) => Some(b - a),
            _ => None,
        };
        // The report must be built before the guard drops: stopping clears the samples.
        let report = self.guard.report().build_unresolved().map_err(|e| format!("cannot read the profile: {e}"))?;
        drop(self.guard);
        let mut stacks = BTreeMap::new();
        for (frames, &count) in &report.data {
            if count <= 0 {
                continue;
            }
            let mut names = Vec::new();
            // Sampled frame first, out to the thread's start; within one frame the symbols run
            // from the innermost inlined function out, so both are reversed for a root-first stack.
            for symbols in resolve_sample(&frames.frames).iter().rev() {
                for (name, file) in symbols.iter().rev() {
                    names.push(frame_name(name, file.as_deref()));
                }
            }
            // Drop what runs before the workbench's own code (thread start, std's spawn closures):
            // a dozen frames of the same width at the root of every stack.
            if let Some(first) = names.iter().position(|n| n.starts_with("schedlab") || n.starts_with("<schedlab")) {
                names.drain(..first);
            }
            if names.is_empty() {
                names.push("[unknown]".to_string());
            }
            *stacks.entry(names.join(";")).or_insert(0) += count as u64;
        }
        Ok(Folded { stacks, frequency: self.frequency, wall_s, cpu_s })
    }
}

/// One sample's frames as (symbol, source file) lists, sampled frame first.
///
/// pprof's own resolution looks every address up at `ip - 1`, right for a return address (it
/// lands in the call instruction) but wrong for the interrupted instruction itself: a sample on
/// the first instruction of a function was charged to the last bytes of whatever function lies
/// before it in the binary. Measured: `no-stats` profiles showed `emit<SchedLock>` →
/// `apply_locked` once in about ten runs, the tail of the function placed before no-stats'
/// `SchedState::expire`. So the frames below the signal handler are resolved here: the
/// interrupted one at its own address, the callers at `ip - 1`.
fn resolve_sample(frames: &[backtrace::Frame]) -> Vec<Vec<(String, Option<std::path::PathBuf>)>> {
    // `backtrace::resolve(addr)` looks up `addr - 1` (its adjustment for return addresses).
    let symbols_at = |lookup: usize| {
        let mut symbols = Vec::new();
        backtrace::resolve((lookup + 1) as *mut std::ffi::c_void, |symbol| {
            let name = symbol.name().map_or_else(String::new, |n| n.to_string());
            symbols.push((name, symbol.filename().map(Path::to_path_buf)));
        });
        symbols
    };
    let resolved: Vec<_> = frames.iter().map(|f| symbols_at((f.ip() as usize).saturating_sub(1))).collect();
    // As pprof does: drop the handler's frame and the signal trampoline after it.
    let handler = resolved.iter().position(|symbols| symbols.iter().any(|(name, _)| name.contains("perf_signal_handler")));
    let mut out = Vec::new();
    for (i, symbols) in resolved.into_iter().enumerate() {
        let symbols = match handler {
            Some(h) if i == h || i == h + 1 => continue,
            // The interrupted instruction: its own address.
            Some(h) if i == h + 2 => symbols_at(frames[i].ip() as usize),
            _ => symbols,
        };
        if !symbols.is_empty() {
            out.push(symbols);
        }
    }
    out
}

/// The module path of a source file, from where it lies: `/rustc/<hash>/library/core/src/ptr/mod.rs`
/// → `core::ptr`, `.../registry/src/<index>/parking_lot-0.12.3/src/raw_mutex.rs` →
/// `parking_lot::raw_mutex`, `<workspace>/core/src/stats.rs` → `schedlab_core::stats`,
/// `<workspace>/variants/src/sched-lock.rs` → `schedlab_variants::sched_lock`.
fn module_of(file: &Path) -> Option<String> {
    let parts = |p: &Path| -> Vec<String> { p.iter().filter_map(|c| c.to_str()).map(str::to_string).collect() };
    // The workspace root: this crate's manifest directory's parent.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    let (krate, rest) = if let Ok(rel) = file.strip_prefix(workspace) {
        let rel = parts(rel);
        match rel.as_slice() {
            [src, rest @ ..] if src == "src" => ("schedlab".to_string(), rest.to_vec()),
            [dir, src, rest @ ..] if src == "src" => (format!("schedlab_{dir}"), rest.to_vec()),
            _ => return None,
        }
    } else {
        let all = parts(file);
        let src = all.iter().rposition(|c| c == "src").filter(|&i| i > 0)?;
        let dir = &all[src - 1];
        let krate = if src >= 2 && all[src - 2] == "library" {
            dir.clone()
        } else {
            // A registry crate: `name-1.2.3`.
            match dir.rfind('-') {
                Some(i) if dir[i + 1..].starts_with(|c: char| c.is_ascii_digit()) => dir[..i].to_string(),
                _ => dir.clone(),
            }
        };
        (krate, all[src + 1..].to_vec())
    };
    let mut path = vec![krate.replace('-', "_")];
    for (i, part) in rest.iter().enumerate() {
        let part = if i + 1 == rest.len() { part.strip_suffix(".rs").unwrap_or(part) } else { part };
        if i + 1 == rest.len() && matches!(part, "lib" | "main" | "mod") {
            continue;
        }
        path.push(part.replace('-', "_"));
    }
    Some(path.join("::"))
}

/// A symbol as a flamegraph frame: demangled, no `::h<hash>` suffix, no `;` (the folded format's
/// separator). Inlined functions come out of line-tables-only debug info with their bare name
/// (`sum`); those get the module path of their source file (`schedlab_core::stats::sum`).
fn frame_name(name: &str, file: Option<&Path>) -> String {
    let name = name.trim();
    let name = match name.rfind("::h") {
        Some(i) if name.len() - i == 19 && name[i + 3..].bytes().all(|b| b.is_ascii_hexdigit()) => &name[..i],
        _ => name,
    };
    if name.is_empty() || name == "Unknown" {
        return "[unknown]".to_string();
    }
    let head = &name[..name.find('<').unwrap_or(name.len())];
    let qualified = name.starts_with('<') || head.contains("::");
    let name = match file.filter(|_| !qualified).and_then(module_of) {
        Some(module) => format!("{module}::{name}"),
        None => name.to_string(),
    };
    name.replace(';', ":")
}

/// Folded stacks: "root;...;leaf" → samples, as flamegraph tools read them.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Folded {
    pub stacks: BTreeMap<String, u64>,
    /// Sampling frequency, Hz.
    pub frequency: i32,
    /// Seconds sampled.
    pub wall_s: f64,
    /// Process CPU seconds used while sampling, if /proc told.
    pub cpu_s: Option<f64>,
}

impl Folded {
    pub fn samples(&self) -> u64 {
        self.stacks.values().sum()
    }

    /// Share of the process's CPU time (0..1) that left no sample: dropped in blocklisted code,
    /// or lost when timer expiries coalesced. `None` without a CPU-time reading.
    pub fn unsampled_share(&self) -> Option<f64> {
        let expected = self.cpu_s? * self.frequency as f64;
        (expected >= 1.0).then(|| (1.0 - self.samples() as f64 / expected).max(0.0))
    }

    /// Samples whose stack holds a frame whose name contains `pattern`.
    pub fn samples_with(&self, pattern: &str) -> u64 {
        self.stacks.iter().filter(|(s, _)| s.split(';').any(|f| f.contains(pattern))).map(|(_, n)| n).sum()
    }

    /// The folded text: one "stack count" line per stack, sorted.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (stack, n) in &self.stacks {
            out.push_str(stack);
            out.push(' ');
            out.push_str(&n.to_string());
            out.push('\n');
        }
        out
    }

    /// Reads folded text ("stack count" lines; blank lines skipped).
    pub fn from_text(text: &str) -> Result<Folded, String> {
        let mut stacks = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let (stack, n) = line.rsplit_once(' ').ok_or_else(|| format!("line {}: no sample count", i + 1))?;
            let n: u64 = n.parse().map_err(|_| format!("line {}: bad sample count `{n}`", i + 1))?;
            *stacks.entry(stack.to_string()).or_insert(0) += n;
        }
        Ok(Folded { stacks, ..Folded::default() })
    }
}

fn flamegraph_options<'a>(title: &str, subtitle: &str) -> pprof::flamegraph::Options<'a> {
    let mut opt = pprof::flamegraph::Options::default();
    opt.title = title.to_string();
    opt.subtitle = Some(subtitle.to_string());
    opt.count_name = "samples".to_string();
    opt.colors = pprof::flamegraph::Palette::Multi(pprof::flamegraph::color::MultiPalette::Rust);
    // Same name, same colour, in every graph: variants can be compared side by side.
    opt.hash = true;
    opt.deterministic = true;
    // Keep one-sample frames: a frame's absence is a result here.
    opt.min_width = 0.0;
    opt
}

/// Writes an on-CPU flamegraph (SVG).
pub fn write_flamegraph(folded: &Folded, title: &str, subtitle: &str, out: impl Write) -> Result<(), String> {
    write_flamegraph_counting(folded, title, subtitle, "samples", out)
}

/// Writes a flamegraph (SVG) whose counts are `count_name` (samples, us, ...).
pub fn write_flamegraph_counting(folded: &Folded, title: &str, subtitle: &str, count_name: &str, out: impl Write) -> Result<(), String> {
    if folded.stacks.is_empty() {
        return Err("no samples were taken (is the run too short?)".into());
    }
    let text = folded.to_text();
    let mut opt = flamegraph_options(title, subtitle);
    opt.count_name = count_name.to_string();
    pprof::flamegraph::from_lines(&mut opt, text.lines(), out).map_err(|e| format!("cannot write the flamegraph: {e}"))
}

/// A stack with the variant's type written `P` (`job_loop<schedlab_variants::sched_lock::SchedLock>`
/// → `job_loop<P>`, `schedlab_variants::epoch::run_deferred` → `P::run_deferred`), so that the
/// same path in two variants is the same stack.
fn variant_neutral(stack: &str) -> String {
    const PREFIX: &str = "schedlab_variants::";
    let mut out = String::with_capacity(stack.len());
    let mut rest = stack;
    while let Some(i) = rest.find(PREFIX) {
        out.push_str(&rest[..i]);
        let after = &rest[i + PREFIX.len()..];
        let ident = |s: &str| s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
        let module = ident(after);
        match after[module..].strip_prefix("::") {
            Some(tail) if module > 0 => {
                let item = ident(tail);
                if tail.starts_with(|c: char| c.is_ascii_uppercase()) {
                    out.push('P'); // the policy type
                    rest = &tail[item..];
                } else {
                    out.push_str("P::"); // a function of the variant's module
                    rest = tail;
                }
            }
            _ => {
                out.push_str(PREFIX);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Writes a differential flamegraph of `a` against `b` (SVG): frame widths are `a`'s samples;
/// a frame is blue where `b` has fewer samples there (what `b` removes), red where it has more,
/// the deeper the colour the larger the change. `b`'s counts are multiplied by `b_scale` first:
/// with `requests(a) / requests(b)` the colours compare CPU time per request (what `b` removes
/// shows blue, what it keeps neutral); with `None`, `b` is scaled to `a`'s sample total and the
/// colours compare shares. The variant's type is written `P` in both, so the same path matches.
/// A stack only `b` has is drawn with zero width.
pub fn write_differential(a: &Folded, b: &Folded, b_scale: Option<f64>, title: &str, subtitle: &str, out: impl Write) -> Result<(), String> {
    let (ta, tb) = (a.samples(), b.samples());
    if ta == 0 || tb == 0 {
        return Err("no samples were taken (is the run too short?)".into());
    }
    let scale = b_scale.filter(|s| s.is_finite() && *s > 0.0).unwrap_or(ta as f64 / tb as f64);
    let neutral = |f: &Folded| {
        let mut m: BTreeMap<String, u64> = BTreeMap::new();
        for (stack, n) in &f.stacks {
            *m.entry(variant_neutral(stack)).or_insert(0) += n;
        }
        m
    };
    let (a, b) = (neutral(a), neutral(b));
    let mut lines = Vec::new();
    let stacks: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for stack in stacks {
        let na = a.get(stack).copied().unwrap_or(0);
        let nb = (b.get(stack).copied().unwrap_or(0) as f64 * scale).round() as u64;
        // inferno's differential input is "stack before after": width from `after`, colour from
        // after − before. Feeding (b, a) and negating gives width from `a`, colour from b − a.
        lines.push(format!("{stack} {nb} {na}"));
    }
    let mut opt = flamegraph_options(title, subtitle);
    opt.negate_differentials = true;
    pprof::flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), out)
        .map_err(|e| format!("cannot write the differential flamegraph: {e}"))
}

/// Where a sample's time went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// The scheduler's own work: paths, service trees, requests, queues, the clock.
    Core,
    /// Inside a `bfqg_stats_*` function (with the counters' own locks and all-slot sums), or the
    /// variant's deferral of the updates (batching, `run_deferred`, epoch pins).
    Stats,
    /// Taking, spinning on, yielding for, parking on or releasing the scheduler lock, the queue
    /// lock or any other lock, outside the statistics functions.
    Lock,
    /// The workload's simulated work outside the scheduler (`spin_for`, `--outside-ns`).
    Outside,
    /// Everything else: the job loop itself, request generation, thread start, unresolved frames.
    Other,
}

impl Category {
    pub const ALL: [Category; 5] = [Category::Core, Category::Stats, Category::Lock, Category::Outside, Category::Other];

    pub fn name(self) -> &'static str {
        match self {
            Category::Core => "core",
            Category::Stats => "stats",
            Category::Lock => "lock",
            Category::Outside => "outside",
            Category::Other => "other",
        }
    }
}

/// A `bfqg_stats_*` function or what runs inside one (the stats proper).
fn is_stats_function(frame: &str) -> bool {
    frame.starts_with("schedlab_core::stats::")
        || frame.starts_with("schedlab_core::policy::StatUpdate::apply_to")
        || frame.starts_with("schedlab_core::policy::apply_to")
        || frame.starts_with("schedlab_core::scheduler::apply_locked")
}

/// The last path segment of a frame, generic arguments dropped: `lock<T>` → `lock`,
/// `<X as Y>::route` → `route`.
fn leaf_name(frame: &str) -> &str {
    let mut end = frame.len();
    if frame.ends_with('>') {
        let mut depth = 0i32;
        for (i, c) in frame.char_indices().rev() {
            match c {
                '>' => depth += 1,
                '<' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    let name = &frame[..end];
    name.rsplit("::").next().unwrap_or(name)
}

/// The variants' deferral of updates: their hooks (not `route`, a constant the scheduler asks on
/// every update, even for `no-stats`), batching, epoch pins.
fn is_stats_machinery(frame: &str) -> bool {
    let leaf = leaf_name(frame);
    // A variant's code lives in its module (`schedlab_variants::queue_lock::...`, or a trait
    // impl `<schedlab_variants::...>`); the crate root is the registry (`schedlab_variants::visit`
    // on the thread that starts a run), not statistics.
    let head = &frame[..frame.find('<').unwrap_or(frame.len())];
    let in_variant = frame.starts_with("<schedlab_variants::")
        || (frame.starts_with("schedlab_variants::") && head.matches("::").count() >= 2);
    (in_variant && leaf != "route")
        || frame.starts_with("crossbeam_epoch::")
        || leaf == "run_deferred"
        || (frame.starts_with("schedlab_core::policy::") && leaf == "push")
}

fn is_lock(frame: &str) -> bool {
    (frame.starts_with("schedlab_core::sync::") && leaf_name(frame).contains("lock"))
        || frame.contains("lock_api::")
        || frame.contains("parking_lot")
}

fn is_outside(frame: &str) -> bool {
    frame.starts_with("schedlab_benches::workload::spin_for")
}

fn is_sum(frame: &str) -> bool {
    frame.starts_with("schedlab_core::stats::") && leaf_name(frame) == "sum"
}

/// The category of one folded stack, and whether it is inside an all-slot sum
/// (`PerCpuCounters::sum`, `percpu_counter_sum`).
///
/// Precedence, first match over the whole stack: a statistics function (so the counters' own
/// locks count as stats, as in a profile's "children" of `bfqg_stats_*`); then a lock; then the
/// variant's stats machinery (so a queue lock taken by `run_deferred` counts as lock); then
/// `spin_for`; then any other `schedlab_core` frame; else other.
pub fn classify(stack: &str) -> (Category, bool) {
    let frames = || stack.split(';');
    if frames().any(is_stats_function) {
        return (Category::Stats, frames().any(is_sum));
    }
    let category = if frames().any(is_lock) {
        Category::Lock
    } else if frames().any(is_stats_machinery) {
        Category::Stats
    } else if frames().any(is_outside) {
        Category::Outside
    } else if frames().any(|f| f.starts_with("schedlab_core::") || f.starts_with("<schedlab_core::")) {
        Category::Core
    } else {
        Category::Other
    };
    (category, false)
}

/// Samples per category: where the time goes.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TimeShares {
    pub samples: u64,
    /// Per [`Category::ALL`], in that order.
    pub counts: [u64; 5],
    /// Stats samples inside an all-slot sum (a part of `counts[Stats]`).
    pub sums: u64,
    /// Share (0..1) of the process's CPU time that left no sample ([`Folded::unsampled_share`]).
    pub unsampled: Option<f64>,
}

impl TimeShares {
    pub fn from_folded(folded: &Folded) -> TimeShares {
        let mut t = TimeShares { unsampled: folded.unsampled_share(), ..TimeShares::default() };
        for (stack, &n) in &folded.stacks {
            let (category, in_sum) = classify(stack);
            t.counts[category as usize] += n;
            t.samples += n;
            if in_sum {
                t.sums += n;
            }
        }
        t
    }

    fn pct(&self, n: u64) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            100.0 * n as f64 / self.samples as f64
        }
    }

    /// Percent of all samples in `category`.
    pub fn share(&self, category: Category) -> f64 {
        self.pct(self.counts[category as usize])
    }

    /// Percent of all samples inside an all-slot sum.
    pub fn sums_share(&self) -> f64 {
        self.pct(self.sums)
    }

    /// The shares of every category added up (100 with any sample, 0 without).
    pub fn total_share(&self) -> f64 {
        Category::ALL.iter().map(|&c| self.share(c)).sum()
    }

    /// Stats as a percent of the scheduler's work (core + stats: lock acquiring and waiting
    /// left out, as a kernel profile shows them under the spinlock's own symbols). The seeds'
    /// "stats ≈ 40 % of BFQ's execution time" compares with this figure.
    pub fn stats_of_work(&self) -> f64 {
        let work = self.counts[Category::Core as usize] + self.counts[Category::Stats as usize];
        if work == 0 {
            0.0
        } else {
            100.0 * self.counts[Category::Stats as usize] as f64 / work as f64
        }
    }
}

/// The seeds' figure for `sched-lock` (kernel-bfq.md §1): stats ≈ 40 % of BFQ's execution time.
pub const SEED_STATS_SHARE: &str = "≈ 40 %";

/// The time table: one row per variant, shares of all samples, stats of the scheduler's work, and
/// the CPU time that left no sample.
pub fn format_table(rows: &[(&str, &TimeShares)]) -> String {
    let mut out = format!(
        "{:<11} {:>7} {:>7} {:>7} {:>8} {:>7} {:>8} {:>7} {:>7} {:>11} {:>10}  {}\n",
        "variant", "samples", "core", "stats", "(sums)", "lock", "outside", "other", "total", "stats/work", "unsampled", "seed"
    );
    for (name, t) in rows {
        let seed = if *name == "sched-lock" { format!("stats {SEED_STATS_SHARE} of BFQ") } else { String::new() };
        let unsampled = t.unsampled.map_or("-".to_string(), |u| format!("{:.0}%", u * 100.0));
        out.push_str(&format!(
            "{:<11} {:>7} {:>6.1}% {:>6.1}% {:>7} {:>6.1}% {:>7.1}% {:>6.1}% {:>6.1}% {:>10.1}% {:>10}  {}\n",
            name,
            t.samples,
            t.share(Category::Core),
            t.share(Category::Stats),
            format!("({:.1}%)", t.sums_share()),
            t.share(Category::Lock),
            t.share(Category::Outside),
            t.share(Category::Other),
            t.total_share(),
            t.stats_of_work(),
            unsampled,
            seed
        ));
    }
    out.trim_end().to_string()
}

/// A variant's run and its profile.
#[derive(Debug)]
pub struct VariantProfile {
    pub run: RunResult,
    pub folded: Folded,
    pub shares: TimeShares,
}

/// Runs the workload against the variant called `name` under the profiler.
pub fn profile_named(name: &str, cfg: &WorkloadConfig, interrupt: &AtomicBool, frequency: i32) -> Result<VariantProfile, String> {
    cfg.validate(name)?;
    let sampling = Sampling::start(frequency)?;
    let run = run_named(name, cfg, interrupt);
    let folded = sampling.finish()?;
    let run = run?;
    let shares = TimeShares::from_folded(&folded);
    Ok(VariantProfile { run, folded, shares })
}

/// A criterion profiler: with `--profile-time N`, writes `flamegraph.svg` (and the folded stacks)
/// into each benchmark's `target/criterion/<group>/<bench>/profile/`. pprof's own criterion hook
/// is for criterion 0.5; this is the same thing for the workspace's criterion.
#[derive(Debug)]
pub struct CriterionFlamegraph {
    frequency: i32,
    active: Option<Sampling>,
}

impl CriterionFlamegraph {
    pub fn new(frequency: i32) -> Self {
        CriterionFlamegraph { frequency, active: None }
    }
}

/// `Criterion::default()` with [`CriterionFlamegraph`] as its profiler: a bench file's
/// `criterion_group! { name = benches; config = schedlab_benches::profile::criterion_config(); targets = ... }`
/// gets a flamegraph per benchmark from `cargo bench -- --profile-time N`.
pub fn criterion_config() -> criterion::Criterion {
    criterion::Criterion::default().with_profiler(CriterionFlamegraph::new(DEFAULT_FREQUENCY))
}

impl criterion::profiler::Profiler for CriterionFlamegraph {
    fn start_profiling(&mut self, _benchmark_id: &str, _benchmark_dir: &Path) {
        self.active = Some(Sampling::start(self.frequency).expect("start the profiler"));
    }

    fn stop_profiling(&mut self, benchmark_id: &str, benchmark_dir: &Path) {
        let Some(sampling) = self.active.take() else { return };
        let folded = sampling.finish().expect("read the profile");
        std::fs::create_dir_all(benchmark_dir).expect("create the benchmark's profile directory");
        std::fs::write(benchmark_dir.join("stacks.folded"), folded.to_text()).expect("write the folded stacks");
        let path = benchmark_dir.join("flamegraph.svg");
        let file = std::fs::File::create(&path).expect("create flamegraph.svg");
        let subtitle = format!("{} samples at {} Hz over {:.1} s (criterion --profile-time)", folded.samples(), folded.frequency, folded.wall_s);
        match write_flamegraph(&folded, benchmark_id, &subtitle, std::io::BufWriter::new(file)) {
            Ok(()) => eprintln!("flamegraph: {}", path.display()),
            Err(e) => eprintln!("flamegraph for {benchmark_id}: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_names_get_their_module() {
        let ws = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        assert_eq!(frame_name("sum", Some(&ws.join("core/src/stats.rs"))), "schedlab_core::stats::sum");
        assert_eq!(frame_name("route", Some(&ws.join("variants/src/no-stats.rs"))), "schedlab_variants::no_stats::route");
        assert_eq!(frame_name("cmd", Some(&ws.join("src/flamegraph.rs"))), "schedlab::flamegraph::cmd");
        let std_file = Path::new("/rustc/abc/library/core/src/sync/atomic.rs");
        assert_eq!(frame_name("fetch_add<u32>", Some(std_file)), "core::sync::atomic::fetch_add<u32>");
        let reg = Path::new("/root/.cargo/registry/src/index.crates.io-1/lock_api-0.4.12/src/mutex.rs");
        assert_eq!(frame_name("lock<R, T>", Some(reg)), "lock_api::mutex::lock<R, T>");
        assert_eq!(frame_name("a::b::c::h0123456789abcdef", None), "a::b::c");
        assert_eq!(frame_name("<X as Y>::f", Some(std_file)), "<X as Y>::f");
        assert_eq!(frame_name("Unknown", None), "[unknown]");
    }

    #[test]
    fn leaf_names_and_variant_neutral_stacks() {
        assert_eq!(leaf_name("schedlab_core::sync::lock<T>"), "lock");
        assert_eq!(leaf_name("<schedlab_variants::no_stats::NoStats as schedlab_core::policy::StatsPolicy>::route"), "route");
        assert_eq!(
            variant_neutral("schedlab_benches::workload::job_loop<schedlab_variants::sched_lock::SchedLock>;schedlab_variants::epoch::run_deferred"),
            "schedlab_benches::workload::job_loop<P>;P::run_deferred"
        );
        assert_eq!(variant_neutral("schedlab_variants::"), "schedlab_variants::");
    }
}

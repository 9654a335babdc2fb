//! The kernel's lock contention, from its `lock:contention_begin` / `lock:contention_end`
//! tracepoints, aggregated in the kernel by a bpftrace program.
//!
//! `perf lock record` writes every event to a file (115 MB for 3 s of BFQ here) and cut BFQ's
//! IOPS by about a fifth; the bpftrace program below keeps one histogram-free entry per (lock
//! address, caller stack): contended acquisitions, wait total and maximum. What that costs is
//! measured by every run (the recorded runs' IOPS against the plain runs' of the same
//! configuration) and printed beside the counts.
//!
//! A contention's caller is the first frame of its stack that is not a locking primitive. The
//! scheduler's own lock is found by address: every lock address one of whose contended callers
//! is a function of the scheduler (`bfq_*`, mq-deadline's `dd_*`) is the scheduler's lock, and
//! all its contentions count as the scheduler's, whoever the caller (blk-mq takes it too, through
//! the elevator's hooks).

use crate::error::failed;
use crate::error::ExperimentError;
use serde::Serialize;
use std::collections::BTreeMap;

/// The bpftrace program: wait time per (lock address, kernel stack of 6 frames).
pub const BPFTRACE_PROGRAM: &str = r#"
tracepoint:lock:contention_begin { @start[tid] = nsecs; }
tracepoint:lock:contention_end /@start[tid]/ {
  $wait = nsecs - @start[tid];
  delete(@start[tid]);
  $stack = kstack(6);
  @wait[args->lock_addr, $stack] = stats($wait);
  @max[args->lock_addr, $stack] = max($wait);
}
END { clear(@start); }
"#;

/// One (lock, stack) entry of the aggregation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Site {
    pub lock_addr: u64,
    /// Function names, innermost first, without offsets.
    pub stack: Vec<String>,
    pub contentions: u64,
    pub wait_total_ns: u64,
    pub wait_max_ns: u64,
}

impl Site {
    /// The first frame that is not a locking primitive.
    pub fn caller(&self) -> &str {
        self.stack.iter().map(String::as_str).find(|f| !is_lock_primitive(f)).unwrap_or("[unknown]")
    }
}

/// Spinlock, mutex and rwsem internals (slow paths, their wrappers): never "the caller".
fn is_lock_primitive(frame: &str) -> bool {
    const PREFIXES: [&str; 12] = [
        "__pv_queued_spin_lock",
        "native_queued_spin_lock",
        "queued_spin_lock",
        "queued_read_lock",
        "queued_write_lock",
        "_raw_spin_",
        "_raw_read_",
        "_raw_write_",
        "do_raw_spin",
        "__mutex_lock",
        "mutex_lock",
        "rwsem_down",
    ];
    PREFIXES.iter().any(|p| frame.starts_with(p))
        || frame.starts_with("__lock_")
        || frame == "lock_acquire"
}

/// Whether a function belongs to an I/O scheduler that takes its own lock.
pub fn is_scheduler_function(frame: &str) -> bool {
    frame.starts_with("bfq_")
        || frame.starts_with("bfqg_")
        || frame.starts_with("dd_")
        || frame.starts_with("kyber_")
}

/// The aggregation's entry for a bpftrace key (lock address and stack), empty the first time the
/// key is seen; `None` when the key does not parse.
fn site_of<'a>(
    sites: &'a mut BTreeMap<(u64, Vec<String>), Site>,
    key: &str,
) -> Option<&'a mut Site> {
    let (lock_addr, stack) = parse_key(key)?;
    let empty =
        Site { lock_addr, stack: stack.clone(), contentions: 0, wait_total_ns: 0, wait_max_ns: 0 };
    Some(sites.entry((lock_addr, stack)).or_insert(empty))
}

/// Parses bpftrace's `-f json` output of [`BPFTRACE_PROGRAM`] (one JSON object per line).
pub fn parse_bpftrace(text: &str) -> Result<Vec<Site>, ExperimentError> {
    let mut sites: BTreeMap<(u64, Vec<String>), Site> = BTreeMap::new();
    let mut saw_wait = false;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let at = format!("bpftrace output line {}", i + 1);
        let bad_key = |key: &str| failed(format!("{at}: bad key `{}`", key.escape_debug()));
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| failed(format!("{at}: {e}")))?;
        let kind = value.get("type").and_then(|t| t.as_str()).unwrap_or("");
        let data = value.get("data");
        match kind {
            "stats" => {
                let Some(map) = data.and_then(|d| d.get("@wait")).and_then(|m| m.as_object())
                else {
                    continue;
                };
                saw_wait = true;
                for (key, v) in map {
                    let site = site_of(&mut sites, key).ok_or_else(|| bad_key(key))?;
                    let count = v.get("count").and_then(|c| c.as_u64()).unwrap_or(0);
                    let total = v.get("total").and_then(|c| c.as_u64()).unwrap_or(0);
                    // One key may come on several lines: its counts add up checked (issue 43).
                    let what = |counts: &str| format!("{at}: {counts}");
                    let add_to = crate::counts::add_to;
                    add_to(&mut site.contentions, count, &what("contentions")).map_err(failed)?;
                    let waited = what("wait total (ns)");
                    add_to(&mut site.wait_total_ns, total, &waited).map_err(failed)?;
                }
            }
            "map" => {
                let Some(map) = data.and_then(|d| d.get("@max")).and_then(|m| m.as_object()) else {
                    continue;
                };
                for (key, v) in map {
                    let site = site_of(&mut sites, key).ok_or_else(|| bad_key(key))?;
                    let max = v.as_u64().unwrap_or(0);
                    site.wait_max_ns = site.wait_max_ns.max(max);
                }
            }
            _ => {}
        }
    }
    if !saw_wait && !sites.is_empty() {
        return Err(failed("bpftrace output has maxima but no wait statistics"));
    }
    Ok(sites.into_values().collect())
}

/// `0xffff888102585e80,\n    frame+347\n    frame+77\n` → (address, frames without offsets).
fn parse_key(key: &str) -> Option<(u64, Vec<String>)> {
    let (addr, rest) = key.split_once(',')?;
    let addr = u64::from_str_radix(addr.trim().trim_start_matches("0x"), 16).ok()?;
    let stack = rest
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| l.split('+').next().unwrap_or(l).to_string())
        .collect();
    Some((addr, stack))
}

/// Contention of one group of sites: counts and waits.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Contention {
    pub contentions: u64,
    pub wait_total_ns: u64,
    pub wait_max_ns: u64,
}

impl Contention {
    /// Adds a site's counts, checked (issue 43): past `u64::MAX` is an error, never a wrap.
    fn add(&mut self, s: &Site) -> Result<(), ExperimentError> {
        let add_to = crate::counts::add_to;
        add_to(&mut self.contentions, s.contentions, "lock contentions").map_err(failed)?;
        add_to(&mut self.wait_total_ns, s.wait_total_ns, "lock wait total (ns)").map_err(failed)?;
        self.wait_max_ns = self.wait_max_ns.max(s.wait_max_ns);
        Ok(())
    }

    pub fn wait_avg_ns(&self) -> f64 {
        if self.contentions == 0 {
            0.0
        } else {
            self.wait_total_ns as f64 / self.contentions as f64
        }
    }
}

/// One recorded run's contention, split into the scheduler's lock and the rest, by caller.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ContentionSummary {
    /// The scheduler's lock (see the module documentation), every caller.
    pub scheduler_lock: Contention,
    /// Every other lock.
    pub other_locks: Contention,
    /// The scheduler lock's callers, most contended first.
    pub scheduler_callers: Vec<(String, Contention)>,
    /// The other locks' callers, most contended first (at most 8).
    pub other_callers: Vec<(String, Contention)>,
    /// Lock addresses taken as the scheduler's.
    pub scheduler_lock_addrs: usize,
}

impl ContentionSummary {
    /// The summary of a run's sites; an error when a sum of their counts passes `u64::MAX`.
    pub fn of(sites: &[Site]) -> Result<ContentionSummary, ExperimentError> {
        let sched_addrs: std::collections::BTreeSet<u64> = sites
            .iter()
            .filter(|s| s.stack.iter().any(|f| is_scheduler_function(f)))
            .map(|s| s.lock_addr)
            .collect();
        let mut out =
            ContentionSummary { scheduler_lock_addrs: sched_addrs.len(), ..Default::default() };
        let mut sched_by: BTreeMap<String, Contention> = BTreeMap::new();
        let mut other_by: BTreeMap<String, Contention> = BTreeMap::new();
        for s in sites {
            if sched_addrs.contains(&s.lock_addr) {
                out.scheduler_lock.add(s)?;
                sched_by.entry(s.caller().to_string()).or_default().add(s)?;
            } else {
                out.other_locks.add(s)?;
                other_by.entry(s.caller().to_string()).or_default().add(s)?;
            }
        }
        let sorted = |m: BTreeMap<String, Contention>, keep: usize| {
            let mut v: Vec<_> = m.into_iter().collect();
            v.sort_by(|a, b| b.1.contentions.cmp(&a.1.contentions).then_with(|| a.0.cmp(&b.0)));
            v.truncate(keep);
            v
        };
        out.scheduler_callers = sorted(sched_by, usize::MAX);
        out.other_callers = sorted(other_by, 8);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(addr: u64, frames: &[&str], n: u64, total: u64, max: u64) -> Site {
        Site {
            lock_addr: addr,
            stack: frames.iter().map(|f| f.to_string()).collect(),
            contentions: n,
            wait_total_ns: total,
            wait_max_ns: max,
        }
    }

    #[test]
    fn keys_are_read_into_an_address_and_frames_without_offsets() {
        let (addr, stack) = parse_key("0xffff888102585e80,\n    __pv_queued_spin_lock_slowpath+347\n    _raw_spin_lock_irq+65\n    bfq_dispatch_request+30\n").unwrap();
        assert_eq!(addr, 0xffff888102585e80);
        assert_eq!(
            stack,
            ["__pv_queued_spin_lock_slowpath", "_raw_spin_lock_irq", "bfq_dispatch_request"]
        );
        assert!(parse_key("no comma").is_none());
    }

    #[test]
    fn the_scheduler_lock_is_every_contention_on_an_address_a_scheduler_function_took() {
        let sites = vec![
            site(
                1,
                &["__pv_queued_spin_lock_slowpath", "_raw_spin_lock_irq", "bfq_dispatch_request"],
                10,
                1000,
                300,
            ),
            // blk-mq taking BFQ's lock through an inlined hook: same address, counted as the scheduler's.
            site(
                1,
                &["__pv_queued_spin_lock_slowpath", "_raw_spin_lock_irqsave", "blk_mq_submit_bio"],
                5,
                500,
                200,
            ),
            site(
                2,
                &["__pv_queued_spin_lock_slowpath", "_raw_spin_lock", "try_to_wake_up"],
                7,
                70,
                20,
            ),
        ];
        let s = ContentionSummary::of(&sites).unwrap();
        assert_eq!(
            s.scheduler_lock,
            Contention { contentions: 15, wait_total_ns: 1500, wait_max_ns: 300 }
        );
        assert_eq!(s.other_locks.contentions, 7);
        assert_eq!(s.scheduler_callers[0].0, "bfq_dispatch_request");
        assert_eq!(s.scheduler_callers[1].0, "blk_mq_submit_bio");
        assert_eq!(s.other_callers[0].0, "try_to_wake_up");
        assert_eq!(s.scheduler_lock_addrs, 1);
        assert!((s.scheduler_lock.wait_avg_ns() - 100.0).abs() < 1e-9);
    }

    /// Counts near the largest: summed up to it, refused past it in one line, whether the
    /// parse adds them (one key on two lines) or the summary does (two sites of one lock).
    #[test]
    fn counts_that_add_up_past_the_largest_are_refused() {
        let line = |n: u64, total: u64| {
            format!("{{\"type\": \"stats\", \"data\": {{\"@wait\": {{\"0x10,\\n    _raw_spin_lock+1\\n    bfq_dispatch_request+2\\n\": {{\"count\": {n}, \"average\": 1, \"total\": {total}}}}}}}}}\n")
        };
        let sites = parse_bpftrace(&(line(u64::MAX - 1, 5) + &line(1, 5))).unwrap();
        assert_eq!((sites[0].contentions, sites[0].wait_total_ns), (u64::MAX, 10));
        for text in [line(u64::MAX, 0) + &line(1, 0), line(0, u64::MAX) + &line(0, 1)] {
            let e = parse_bpftrace(&text).unwrap_err().message;
            assert!(
                e.contains("line 2")
                    && e.contains("add up past 18446744073709551615")
                    && !e.contains('\n'),
                "{e}"
            );
        }
        let frames = ["_raw_spin_lock", "bfq_dispatch_request"];
        let ok = [
            site(1, &frames, u64::MAX - 1, 1, 1),
            site(1, &["_raw_spin_lock", "blk_mq_submit_bio"], 1, 1, 1),
        ];
        assert_eq!(ContentionSummary::of(&ok).unwrap().scheduler_lock.contentions, u64::MAX);
        for sites in [
            [
                site(1, &frames, u64::MAX, 1, 1),
                site(1, &["_raw_spin_lock", "blk_mq_submit_bio"], 1, 1, 1),
            ],
            [
                site(2, &["_raw_spin_lock", "try_to_wake_up"], 1, u64::MAX, 1),
                site(3, &["_raw_spin_lock", "schedule"], 1, 1, 1),
            ],
        ] {
            let e = ContentionSummary::of(&sites).unwrap_err().message;
            assert!(e.contains("add up past 18446744073709551615"), "{e}");
        }
    }
}

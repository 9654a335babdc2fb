//! Where the kernel's CPU time goes: `perf record -a -g` over one fio run, `perf script` folded
//! into stacks ("comm;outer;...;inner count", the format of the project's own flamegraphs, drawn
//! by `crate::driver::profile::write_flamegraph`), and the shares of BFQ's and the group statistics'
//! frames.

use crate::driver::profile::Folded;
use crate::error::failed;
use crate::error::ExperimentError;
use schedlab_core::sync::{AtomicBool, Ordering};
use serde::Serialize;
use std::collections::BTreeMap;

/// Folds `perf script` output (header line, then one frame a line, innermost first, then a blank
/// line). The process name is the outermost frame; addresses and offsets are dropped.
pub fn fold_perf_script(text: &str) -> Result<Folded, ExperimentError> {
    let never = AtomicBool::new(false);
    fold_perf_script_until(text, &never).map(|folded| folded.unwrap_or_default())
}

/// [`fold_perf_script`], polling `stop` every [`LINES_PER_POLL`] lines (a whole-system profile's
/// script is tens of MiB): `None` when stopped.
pub fn fold_perf_script_until(
    text: &str,
    stop: &AtomicBool,
) -> Result<Option<Folded>, ExperimentError> {
    let mut stacks: BTreeMap<String, u64> = BTreeMap::new();
    let mut comm: Option<String> = None;
    let mut frames: Vec<String> = Vec::new();
    let mut flush = |comm: &mut Option<String>, frames: &mut Vec<String>| {
        if let Some(c) = comm.take() {
            let mut stack = c.replace(';', ":");
            for f in frames.iter().rev() {
                stack.push(';');
                stack.push_str(f);
            }
            *stacks.entry(stack).or_insert(0) += 1;
        }
        frames.clear();
    };
    let mut headers = 0usize;
    for (n, line) in text.lines().enumerate() {
        if n % LINES_PER_POLL == 0 && stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        if line.trim().is_empty() {
            flush(&mut comm, &mut frames);
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            if comm.is_none() {
                continue;
            }
            let mut parts = line.split_whitespace();
            let _addr = parts.next();
            let rest: Vec<&str> = parts.collect();
            // "sym+0x1f (dso)" or "sym (dso)" or "[unknown] ([kernel.kallsyms])"
            let sym = rest
                .iter()
                .take_while(|p| !p.starts_with('('))
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            let sym = sym.split("+0x").next().unwrap_or(&sym).trim();
            frames.push(if sym.is_empty() {
                "[unknown]".to_string()
            } else {
                sym.replace(';', ":")
            });
        } else {
            flush(&mut comm, &mut frames);
            headers += 1;
            // "comm  pid/tid  [cpu]  time: event:" — the command name may hold spaces: it ends
            // where the first field made of digits (and a '/') starts.
            let tokens: Vec<&str> = line.split_whitespace().collect();
            let end = tokens.iter().position(|t| {
                t.chars().all(|c| c.is_ascii_digit() || c == '/')
                    && t.chars().any(|c| c.is_ascii_digit())
            });
            let name = match end {
                Some(0) | None => tokens.first().copied().unwrap_or("[unknown]").to_string(),
                Some(e) => tokens[..e].join(" "),
            };
            comm = Some(name);
        }
    }
    flush(&mut comm, &mut frames);
    if headers == 0 {
        return Err(failed("perf script printed no sample"));
    }
    Ok(Some(Folded { stacks, ..Folded::default() }))
}

/// How many lines of a `perf script` output are folded between two looks at the stop flag
/// (about a millisecond's work).
const LINES_PER_POLL: usize = 16 * 1024;

/// Whether a kernel function is BFQ's (bfq-iosched.c, bfq-wf2q.c, bfq-cgroup.c).
pub fn is_bfq(frame: &str) -> bool {
    frame.starts_with("bfq_")
        || frame.starts_with("bfqg_")
        || frame.starts_with("bfqq_")
        || frame.starts_with("__bfq")
}

/// Whether a kernel function updates or flushes group statistics: BFQ's own (`bfqg_stats_*`,
/// the legacy io_service_bytes/io_serviced) or blk-cgroup's (`blk_cgroup_bio_start`, the rstat
/// iostat and its flush, `blkg_rwstat_*`).
pub fn is_group_stats(frame: &str) -> bool {
    frame.starts_with("bfqg_stats")
        || frame.starts_with("blkg_rwstat")
        || frame.starts_with("blk_cgroup_bio_start")
        || (frame.starts_with("blkcg_") && frame.contains("stat"))
        || (frame.starts_with("blkg_") && frame.contains("stat"))
        || frame.starts_with("__blkcg_rstat")
}

/// Whether a sample belongs to the experiment: fio's processes and io_uring's workers, the kernel
/// threads that do block I/O (kworkers, the loop worker, ksoftirqd), or any task interrupted to run
/// the block layer (a completion softirq landing in another process). Other processes' samples
/// (a build running beside the experiment) are left out of every share.
pub fn is_experiment_sample(frames: &[&str]) -> bool {
    let comm = frames.first().copied().unwrap_or("");
    const COMMS: [&str; 5] = ["fio", "kworker", "ksoftirqd", "iou-", "loop"];
    COMMS.iter().any(|c| comm.starts_with(c))
        || frames.iter().skip(1).any(|f| {
            is_bfq(f)
                || is_deadline(f)
                || f.starts_with("blk_")
                || f.starts_with("__blk_")
                || f.starts_with("bio_")
        })
}

/// The scheduler lock's spinning, as the flamegraph shows it.
fn is_spin(frame: &str) -> bool {
    frame.contains("queued_spin_lock_slowpath")
}

/// The smallest inclusive share, %, a frame needs to be listed in [`KernelShares::frames_pct`].
pub const FRAME_MIN_PCT: f64 = 0.5;

/// Whether a kernel function is mq-deadline's (`dd_*`).
pub fn is_deadline(frame: &str) -> bool {
    frame.starts_with("dd_")
}

/// What a kernel profile says about the scheduler's share of the CPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct KernelShares {
    /// Samples of the experiment on busy CPUs ([`is_experiment_sample`]; the idle task's left
    /// out): the base of every share below.
    pub samples: u64,
    /// Busy samples of other processes, left out of the shares.
    pub other_samples: u64,
    /// Samples with a BFQ frame (its statistics included), % of all samples.
    pub bfq_pct: f64,
    /// Samples with a group-statistics frame (BFQ's or blk-cgroup's), % of all.
    pub group_stats_pct: f64,
    /// Samples spinning on a lock under a BFQ frame, % of all.
    pub bfq_lock_spin_pct: f64,
    /// Group statistics' share of the scheduler's work: statistics samples ÷ samples with a BFQ
    /// or a statistics frame that are not spinning on a lock, %. The model's counterpart is
    /// `stats_of_work` of its profile (lock acquiring and waiting left out there too).
    pub stats_share_of_scheduler_pct: Option<f64>,
    /// The heaviest statistics functions (leaf-most statistics frame), samples.
    pub stats_functions: Vec<(String, u64)>,
    /// Samples with an mq-deadline frame (`dd_*`), % of all samples: that scheduler's own
    /// functions, as `bfq_pct` is BFQ's.
    pub deadline_pct: f64,
    /// Every frame on at least [`FRAME_MIN_PCT`] % of the samples: its inclusive share (samples
    /// with that frame anywhere on the stack), %, largest first. What the elevator's cost is
    /// made of is read from the difference of two profiles' shares.
    pub frames_pct: Vec<(String, f64)>,
    /// BFQ's time by entry point (the outermost BFQ frame of each stack: `bfq_dispatch_request`,
    /// `bfq_insert_requests`, `bfq_finish_requeue_request`, ...), % of all samples, largest first.
    pub bfq_entries_pct: Vec<(String, f64)>,
}

impl KernelShares {
    /// The shares of a folded profile; an error when a sum of its sample counts passes
    /// `u64::MAX` (issue 43: every sum below is checked, none can wrap).
    pub fn of(folded: &Folded) -> Result<KernelShares, ExperimentError> {
        const WHAT: &str = "the profile's samples";
        let add = |slot: &mut u64, n: u64| crate::counts::add_to(slot, n, WHAT).map_err(failed);
        let (mut total, mut bfq, mut stats, mut either, mut spin) = (0u64, 0u64, 0u64, 0u64, 0u64);
        let mut by_fn: BTreeMap<String, u64> = BTreeMap::new();
        let mut by_entry: BTreeMap<String, u64> = BTreeMap::new();
        let mut by_frame: BTreeMap<&str, u64> = BTreeMap::new();
        let mut deadline = 0u64;
        let mut others = 0u64;
        for (stack, &n) in &folded.stacks {
            let frames: Vec<&str> = stack.split(';').collect();
            // An idle CPU (the idle task, `swapper/N`) is not time anybody spent, unless it was
            // interrupted to run the block layer (a completion on an idle CPU: the experiment's).
            if frames.first().is_some_and(|comm| comm.starts_with("swapper"))
                && !is_experiment_sample(&frames)
            {
                continue;
            }
            if !is_experiment_sample(&frames) {
                add(&mut others, n)?;
                continue;
            }
            add(&mut total, n)?;
            // Each frame once per stack (a recursive frame is still one sample's time).
            let mut seen: Vec<&str> = Vec::new();
            for f in frames.iter().skip(1) {
                if !seen.contains(f) {
                    seen.push(f);
                    add(by_frame.entry(f).or_insert(0), n)?;
                }
            }
            if frames.iter().any(|f| is_deadline(f)) {
                add(&mut deadline, n)?;
            }
            let has_bfq = frames.iter().any(|f| is_bfq(f));
            let stats_frame = frames.iter().rev().find(|f| is_group_stats(f));
            if has_bfq {
                add(&mut bfq, n)?;
                if let Some(entry) = frames.iter().find(|f| is_bfq(f)) {
                    add(by_entry.entry(entry.to_string()).or_insert(0), n)?;
                }
            }
            if let Some(f) = stats_frame {
                add(&mut stats, n)?;
                add(by_fn.entry(f.to_string()).or_insert(0), n)?;
            }
            let spinning = frames.iter().any(|f| is_spin(f));
            // The scheduler's work: its frames and the statistics', less the lock's spinning
            // (as the model's `stats_of_work` leaves lock acquiring and waiting out).
            if (has_bfq || stats_frame.is_some()) && !spinning {
                add(&mut either, n)?;
            }
            if has_bfq && spinning {
                add(&mut spin, n)?;
            }
        }
        let pct = |n: u64| if total == 0 { 0.0 } else { 100.0 * n as f64 / total as f64 };
        let mut stats_functions: Vec<_> = by_fn.into_iter().collect();
        stats_functions.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        stats_functions.truncate(6);
        let mut bfq_entries_pct: Vec<(String, f64)> =
            by_entry.into_iter().map(|(f, n)| (f, pct(n))).collect();
        bfq_entries_pct.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut frames_pct: Vec<(String, f64)> = by_frame
            .into_iter()
            .map(|(f, n)| (f.to_string(), pct(n)))
            .filter(|(_, p)| *p >= FRAME_MIN_PCT)
            .collect();
        frames_pct.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok(KernelShares {
            samples: total,
            other_samples: others,
            deadline_pct: pct(deadline),
            frames_pct,
            bfq_pct: pct(bfq),
            group_stats_pct: pct(stats),
            bfq_lock_spin_pct: pct(spin),
            // Only where BFQ ran: without it, blk-cgroup's own statistics are no scheduler's.
            stats_share_of_scheduler_pct: (bfq > 0 && either > 0)
                .then(|| 100.0 * stats as f64 / either as f64),
            stats_functions,
            bfq_entries_pct,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_script_blocks_fold_into_outermost_first_stacks() {
        let text = "fio  8050/8050  [001]   320.246305: cpu-clock:ppp: \n\tffffffff8163bb71 bfqg_stats_update_legacy_io+0x1f ([kernel.kallsyms])\n\tffffffff81675fb6 bfq_insert_requests ([kernel.kallsyms])\n\t6df9 [unknown] (/usr/bin/fio)\n\nkworker/1:1H-kb    44/44    [001]   320.248309: cpu-clock:ppp: \n\tffffffff8130f5b3 read_tsc\n\n";
        let f = fold_perf_script(text).unwrap();
        assert_eq!(f.samples(), 2);
        assert_eq!(
            f.stacks.get("fio;[unknown];bfq_insert_requests;bfqg_stats_update_legacy_io"),
            Some(&1)
        );
        assert_eq!(f.stacks.get("kworker/1:1H-kb;read_tsc"), Some(&1));
        assert!(fold_perf_script("").is_err());
    }

    #[test]
    fn a_stop_ends_the_folding_with_nothing() {
        let block = "fio  8050/8050  [001]   320.246305: cpu-clock:ppp: \n\tffffffff81675fb6 bfq_insert_requests ([kernel.kallsyms])\n\n";
        let text = block.repeat(3 * LINES_PER_POLL);
        let stopped = AtomicBool::new(true);
        assert!(matches!(fold_perf_script_until(&text, &stopped), Ok(None)));
        let running = AtomicBool::new(false);
        let folded = fold_perf_script_until(&text, &running).unwrap().expect("not stopped");
        assert_eq!(folded.samples(), 3 * LINES_PER_POLL as u64);
    }

    #[test]
    fn shares_count_bfq_statistics_and_spinning_frames() {
        let mut f = Folded::default();
        f.stacks.insert("fio;bfq_insert_requests;bfqg_stats_update_legacy_io".into(), 2);
        f.stacks.insert(
            "fio;bfq_dispatch_request;_raw_spin_lock_irq;__pv_queued_spin_lock_slowpath".into(),
            3,
        );
        f.stacks.insert("fio;submit_bio;blk_cgroup_bio_start".into(), 1);
        f.stacks.insert("fio;read_tsc".into(), 4);
        f.stacks.insert("swapper/0;do_idle;default_idle".into(), 100);
        // Another process's samples are no part of the experiment.
        f.stacks.insert("rustc;do_syscall_64;exc_page_fault".into(), 50);
        let s = KernelShares::of(&f).unwrap();
        assert_eq!((s.samples, s.other_samples), (10, 50));
        assert!((s.bfq_pct - 50.0).abs() < 1e-9);
        assert!((s.group_stats_pct - 30.0).abs() < 1e-9);
        assert!((s.bfq_lock_spin_pct - 30.0).abs() < 1e-9);
        // 3 statistics samples of 3 non-spinning scheduler samples.
        assert!((s.stats_share_of_scheduler_pct.unwrap() - 100.0).abs() < 1e-9);
        assert_eq!(s.stats_functions[0], ("bfqg_stats_update_legacy_io".to_string(), 2));
        assert_eq!(s.bfq_entries_pct[0].0, "bfq_dispatch_request");
        assert!(
            (s.bfq_entries_pct[0].1 - 30.0).abs() < 1e-9
                && (s.bfq_entries_pct[1].1 - 20.0).abs() < 1e-9
        );
        // Without BFQ, blk-cgroup's statistics are no scheduler's share.
        let mut none = Folded::default();
        none.stacks.insert("fio;submit_bio;blk_cgroup_bio_start".into(), 1);
        assert_eq!(KernelShares::of(&none).unwrap().stats_share_of_scheduler_pct, None);
    }

    /// Sample counts near the largest (a `Folded` built directly, not read through
    /// `Folded::from_text`'s checked total): summed up to it, refused past it in one line.
    #[test]
    fn sample_counts_that_add_up_past_the_largest_are_refused() {
        let folded = |stacks: &[(&str, u64)]| {
            let mut f = Folded::default();
            for &(s, n) in stacks {
                f.stacks.insert(s.into(), n);
            }
            f
        };
        let ok = folded(&[("fio;bfq_insert_requests", u64::MAX - 1), ("fio;read_tsc", 1)]);
        assert_eq!(KernelShares::of(&ok).unwrap().samples, u64::MAX);
        for stacks in [
            // The experiment's samples; one frame's; another process's.
            [("fio;bfq_insert_requests", u64::MAX), ("fio;read_tsc", 1)],
            [("fio;bfq_insert_requests", u64::MAX), ("fio;bfq_dispatch_request", 1)],
            [("rustc;do_syscall_64", u64::MAX), ("cc1;do_syscall_64", 1)],
        ] {
            let e = KernelShares::of(&folded(&stacks)).unwrap_err().message;
            assert!(e.contains("add up past 18446744073709551615") && !e.contains('\n'), "{e}");
        }
    }
}

//! Runs stopped by job control (issue 43, item 5b): a run suspended with SIGTSTP (Ctrl-Z) or
//! SIGSTOP and continued measures the pause, not the variant (a compare stopped for 2 s kept
//! KIOPS of 374-577 against 1684-2671 unstopped), so such a run is flagged and re-run like a run
//! that other processes disturbed (`workload::disturbed`, `noise::run_clean`).
//!
//! A stop cannot be caught (SIGSTOP) and a process stopped runs nothing, so it is seen after the
//! fact, by two witnesses that must agree:
//!
//! - a *ticker* thread that wakes every [`TICK`] and records each gap between two wake-ups of at
//!   least [`STOP_GAP`] (the monotonic clock runs on while the process is stopped: the gap is the
//!   stop's length, plus a tick at most);
//! - the SIGCONT that continued the process, which the binary's signal watcher passes to
//!   [`continued`] (`src/signals.rs`).
//!
//! A gap alone is not a stop: on a loaded machine a sleeping thread may wake late, and that is
//! other processes' load, which `host` measures. A SIGCONT alone (`kill -CONT` to a running
//! process) is not a stop either. Only a SIGCONT that falls within a gap of at least
//! [`STOP_GAP`] (or after the last tick, when the ticker has not woken yet since) counts. Where
//! nothing calls [`continued`] (the library's own tests, criterion), no stop is ever reported.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often the ticker wakes.
pub const TICK: Duration = Duration::from_millis(100);
/// A gap between two wake-ups at least this long may be a stop (five ticks: a thread woken late
/// on a loaded machine is late by a time slice or two, tens of milliseconds).
pub const STOP_GAP: Duration = Duration::from_millis(500);

#[derive(Default)]
struct Seen {
    /// The ticker's last wake-up (`None`: not started).
    last_tick: Option<Instant>,
    /// Gaps of at least [`STOP_GAP`]: (the wake-up before, the wake-up after).
    gaps: Vec<(Instant, Instant)>,
    /// When SIGCONT was received.
    continues: Vec<Instant>,
}

static SEEN: Mutex<Seen> =
    Mutex::new(Seen { last_tick: None, gaps: Vec::new(), continues: Vec::new() });

/// Starts the ticker (once per process; later calls do nothing). Runs call it, so that it ticks
/// before any run measures.
pub fn watch() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        if let Ok(mut seen) = SEEN.lock() {
            seen.last_tick = Some(Instant::now());
        }
        let ticker = std::thread::Builder::new().name("stop-watch".into()).spawn(|| loop {
            std::thread::sleep(TICK);
            let now = Instant::now();
            let Ok(mut seen) = SEEN.lock() else { return };
            if let Some(before) = seen.last_tick {
                if now.saturating_duration_since(before) >= STOP_GAP {
                    seen.gaps.push((before, now));
                }
            }
            seen.last_tick = Some(now);
        });
        if let Err(e) = ticker {
            tracing::warn!("cannot start the stop watcher ({e}): a stopped run is not flagged");
        }
    });
}

/// Records a SIGCONT (called by the binary's signal watcher).
pub fn continued() {
    if let Ok(mut seen) = SEEN.lock() {
        seen.continues.push(Instant::now());
    }
}

/// How long the process was stopped between `from` and `to` (stops whose continuation falls in
/// that span), when it was: `None` when no stop was seen.
pub fn stopped_between(from: Instant, to: Instant) -> Option<Duration> {
    let seen = SEEN.lock().ok()?;
    stops(&seen, to)
        .into_iter()
        .filter(|&(_, end)| end >= from && end <= to)
        .map(|(start, end)| end - start)
        .reduce(|a, b| a + b)
}

/// The stops seen up to `now`: each gap that a SIGCONT falls in (from the tick before it to the
/// SIGCONT), and a SIGCONT after the last tick at least [`STOP_GAP`] after it (the ticker not
/// woken yet since the continuation).
fn stops(seen: &Seen, now: Instant) -> Vec<(Instant, Instant)> {
    let mut found = Vec::new();
    for &c in seen.continues.iter().filter(|&&c| c <= now) {
        // The SIGCONT is read by a thread that was stopped too: it may come a little after the
        // ticker's first wake-up, so a gap ending up to one more gap's worth before it counts.
        let within = seen.gaps.iter().find(|&&(before, after)| before < c && c <= after + STOP_GAP);
        match (within, seen.last_tick) {
            (Some(&(before, _)), _) => found.push((before, c)),
            (None, Some(last)) if c > last && c - last >= STOP_GAP => found.push((last, c)),
            _ => {}
        }
    }
    found.dedup_by_key(|s| s.0);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(base: Instant, ms: u64) -> Instant {
        base + Duration::from_millis(ms)
    }

    fn seen(last: Instant, gaps: &[(Instant, Instant)], continues: &[Instant]) -> Seen {
        Seen { last_tick: Some(last), gaps: gaps.to_vec(), continues: continues.to_vec() }
    }

    #[test]
    fn a_gap_with_a_continue_in_it_is_a_stop_and_either_alone_is_not() {
        let t = Instant::now();
        // A 2 s stop: the ticker's gap from 100 ms to 2.1 s, SIGCONT read at 2.05 s.
        let stopped = seen(at(t, 3000), &[(at(t, 100), at(t, 2100))], &[at(t, 2050)]);
        assert_eq!(stops(&stopped, at(t, 4000)), vec![(at(t, 100), at(t, 2050))]);
        // A late wake-up on a loaded machine (a gap, no SIGCONT): not a stop.
        let loaded = seen(at(t, 3000), &[(at(t, 100), at(t, 700))], &[]);
        assert!(stops(&loaded, at(t, 4000)).is_empty());
        // `kill -CONT` to a running process (a SIGCONT, no gap): not a stop.
        let poked = seen(at(t, 3000), &[], &[at(t, 2950)]);
        assert!(stops(&poked, at(t, 4000)).is_empty());
        // Continued, the ticker not woken yet since: from its last tick to the SIGCONT.
        let pending = seen(at(t, 100), &[], &[at(t, 1600)]);
        assert_eq!(stops(&pending, at(t, 1700)), vec![(at(t, 100), at(t, 1600))]);
        // The SIGCONT read just after the ticker's wake-up that ended the gap.
        let late = seen(at(t, 2200), &[(at(t, 100), at(t, 2100))], &[at(t, 2150)]);
        assert_eq!(stops(&late, at(t, 2300)), vec![(at(t, 100), at(t, 2150))]);
    }
}

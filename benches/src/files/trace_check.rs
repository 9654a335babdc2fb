//! Reads a Chrome / Perfetto JSON trace written by `schedlab run --trace` and checks and
//! summarises it: the format (an array of trace events; every `B` closed by an `E` of the same name
//! on the same thread, innermost first), the tracks (one per thread, named by the `thread_name`
//! metadata), and for each lock its hold and wait slices: whether two holds ever overlap (a lock is
//! held by one thread at a time, so they must not), and the hand-overs between threads (the gap
//! from one thread's release to the next thread's acquisition).
//!
//! `schedlab trace-summary FILE` prints the summary; the trace tests use the same checks.

use serde::Serialize;
use std::collections::BTreeMap;

/// One closed span on one thread's track.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Slice {
    pub tid: u64,
    pub name: String,
    /// Category: the `tracing` target (`schedlab::lock`, ...).
    pub cat: String,
    /// Microseconds since the trace started.
    pub start_us: f64,
    pub end_us: f64,
    /// Nesting depth on its track (0: outermost).
    pub depth: usize,
}

impl Slice {
    pub fn duration_us(&self) -> f64 {
        self.end_us - self.start_us
    }
}

/// One thread's track.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Track {
    pub tid: u64,
    pub name: String,
    pub slices: usize,
    pub instants: usize,
}

/// A parsed, well-formed trace.
#[derive(Clone, Debug)]
pub struct Trace {
    pub tracks: Vec<Track>,
    pub slices: Vec<Slice>,
    /// Instant events (`ph: "i"`): name, thread, time.
    pub instants: Vec<(String, u64, f64)>,
}

/// What is wrong with a trace, and where: one line.
#[derive(Clone, Debug, PartialEq)]
pub enum TraceError {
    /// Not JSON: the parser's reason.
    NotJson(String),
    /// JSON whose top level is not an array of events.
    NotAnArray,
    /// Event `event` lacks the field `key`.
    Missing { event: usize, key: &'static str },
    /// Event `event`'s field `key` is not `what` ("a string", "a number").
    NotA { event: usize, key: &'static str, what: &'static str },
    /// A `thread_name` event without `args.name`.
    NamelessThread { event: usize },
    /// A time before the thread's previous one.
    Backwards { event: usize, tid: u64, ts: f64, last: f64 },
    /// An `E` with no open slice on its thread.
    UnopenedEnd { event: usize, name: String, tid: u64 },
    /// An `E` that closes another slice than the one open.
    NotNested { event: usize, name: String, tid: u64, open: String },
    /// A phase schedlab does not write.
    UnknownPhase { event: usize, phase: String },
    /// A slice still open at the end (`None`: its name is unknown).
    NeverClosed { tid: u64, name: Option<String> },
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use TraceError::*;
        match self {
            NotJson(e) => write!(f, "not valid JSON: {e}"),
            NotAnArray => {
                f.write_str("not a Chrome trace: the top level is not an array of events")
            }
            Missing { event, key } => write!(f, "event {event} has no `{key}`"),
            NotA { event, key, what } => write!(f, "event {event}: `{key}` is not {what}"),
            NamelessThread { event } => write!(f, "event {event}: thread_name without args.name"),
            Backwards { event, tid, ts, last } => {
                write!(f, "event {event}: time goes backwards on thread {tid} ({ts} after {last})")
            }
            UnopenedEnd { event, name, tid } => {
                write!(f, "event {event}: `E` of {name:?} on thread {tid} with no open slice")
            }
            NotNested { event, name, tid, open } => write!(
                f,
                "event {event}: `E` of {name:?} on thread {tid} closes {open:?} (slices not nested)"
            ),
            UnknownPhase { event, phase } => {
                write!(f, "event {event}: phase {phase:?} is not one schedlab writes")
            }
            NeverClosed { tid, name } => {
                let name = name.as_ref();
                write!(f, "thread {tid}: slice {name:?} is never closed (trace cut short?)")
            }
        }
    }
}

impl std::error::Error for TraceError {}

/// Parses and checks the trace format. The error says what is wrong and where (one line).
pub fn parse(json: &str) -> Result<Trace, TraceError> {
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| TraceError::NotJson(e.to_string()))?;
    let events = value.as_array().ok_or(TraceError::NotAnArray)?;
    let mut names: BTreeMap<u64, String> = BTreeMap::new();
    let mut open: BTreeMap<u64, Vec<(String, String, f64)>> = BTreeMap::new();
    let mut slices = Vec::new();
    let mut instants = Vec::new();
    let mut last_ts: BTreeMap<u64, f64> = BTreeMap::new();
    for (i, event) in events.iter().enumerate() {
        let field = |key: &'static str| event.get(key).ok_or(TraceError::Missing { event: i, key });
        let not_a = |key, what| TraceError::NotA { event: i, key, what };
        let ph = field("ph")?.as_str().ok_or_else(|| not_a("ph", "a string"))?;
        let tid = field("tid")?.as_u64().ok_or_else(|| not_a("tid", "a number"))?;
        let name = field("name")?.as_str().ok_or_else(|| not_a("name", "a string"))?.to_string();
        if ph == "M" {
            if name == "thread_name" {
                let thread = event.pointer("/args/name").and_then(|n| n.as_str());
                let thread = thread.ok_or(TraceError::NamelessThread { event: i })?;
                names.insert(tid, thread.to_string());
            }
            continue;
        }
        let ts = field("ts")?.as_f64().ok_or_else(|| not_a("ts", "a number"))?;
        // Events of one thread are written in the order they happened.
        let last = last_ts.entry(tid).or_insert(f64::NEG_INFINITY);
        if ts < *last {
            return Err(TraceError::Backwards { event: i, tid, ts, last: *last });
        }
        *last = ts;
        let cat = event.get("cat").and_then(|c| c.as_str()).unwrap_or("").to_string();
        let stack = open.entry(tid).or_default();
        match ph {
            "B" => stack.push((name, cat, ts)),
            "E" => {
                let Some((open_name, open_cat, start)) = stack.pop() else {
                    return Err(TraceError::UnopenedEnd { event: i, name, tid });
                };
                if open_name != name {
                    return Err(TraceError::NotNested { event: i, name, tid, open: open_name });
                }
                let depth = stack.len();
                slices.push(Slice { tid, name, cat: open_cat, start_us: start, end_us: ts, depth });
            }
            "i" | "I" => instants.push((name, tid, ts)),
            other => return Err(TraceError::UnknownPhase { event: i, phase: other.to_string() }),
        }
    }
    if let Some((&tid, stack)) = open.iter().find(|(_, s)| !s.is_empty()) {
        return Err(TraceError::NeverClosed { tid, name: stack.last().map(|s| s.0.clone()) });
    }
    let mut tids: Vec<u64> =
        slices.iter().map(|s| s.tid).chain(instants.iter().map(|e| e.1)).collect();
    tids.extend(names.keys());
    tids.sort_unstable();
    tids.dedup();
    let tracks = tids
        .into_iter()
        .map(|tid| Track {
            tid,
            name: names.get(&tid).cloned().unwrap_or_else(|| tid.to_string()),
            slices: slices.iter().filter(|s| s.tid == tid).count(),
            instants: instants.iter().filter(|e| e.1 == tid).count(),
        })
        .collect();
    Ok(Trace { tracks, slices, instants })
}

/// Two slices that overlap in time.
#[derive(Clone, Debug, Serialize)]
pub struct Overlap {
    pub first: Slice,
    pub second: Slice,
}

/// Every pair of slices among `slices` where one starts before an earlier-starting one ended
/// (touching, end == start, is not an overlap). `slices` in any order.
pub fn overlaps<'a>(slices: impl IntoIterator<Item = &'a Slice>) -> Vec<Overlap> {
    let mut sorted: Vec<&Slice> = slices.into_iter().collect();
    sorted.sort_by(|a, b| a.start_us.total_cmp(&b.start_us).then(a.end_us.total_cmp(&b.end_us)));
    let mut found = Vec::new();
    let mut latest: Option<&Slice> = None; // the slice with the latest end so far
    for s in sorted {
        if let Some(prev) = latest {
            if s.start_us < prev.end_us {
                found.push(Overlap { first: prev.clone(), second: s.clone() });
            }
            if s.end_us > prev.end_us {
                latest = Some(s);
            }
        } else {
            latest = Some(s);
        }
    }
    found
}

/// Median and 90th percentile of `v` by nearest rank (0 when empty).
fn median_p90(v: &mut [f64]) -> (f64, f64) {
    (crate::stats::quantile(v, 0.5), crate::stats::quantile(v, 0.9))
}

/// One lock's slices in a trace.
#[derive(Clone, Debug, Serialize)]
pub struct LockReport {
    /// `sched`, `queue`, ...: the part of the slice name before `: hold` / `: wait`.
    pub lock: String,
    pub holds: usize,
    pub hold_median_us: f64,
    pub hold_p90_us: f64,
    /// Holds as a share of the traced time.
    pub held_pct: f64,
    pub waits: usize,
    pub wait_median_us: f64,
    pub wait_p90_us: f64,
    /// Consecutive holds by different threads.
    pub handovers: usize,
    /// Consecutive holds by the same thread (a lock that is not handed over: unfair, or no
    /// other thread was waiting).
    pub reacquisitions: usize,
    /// From a release (end of a hold slice) to the next thread's acquisition (the end of its wait
    /// slice if it waited, else the start of its hold slice).
    pub handover_gap_median_us: f64,
    pub handover_gap_p90_us: f64,
    /// Hold slices that overlap another hold of the same lock (must be 0).
    pub overlapping_holds: usize,
}

/// The per-lock report of a trace: hold slices are named `<lock> lock: hold`, waits
/// `<lock> lock: wait`.
pub fn lock_reports(trace: &Trace) -> Vec<LockReport> {
    let first = trace.slices.iter().map(|s| s.start_us).fold(f64::INFINITY, f64::min);
    let last = trace.slices.iter().map(|s| s.end_us).fold(f64::NEG_INFINITY, f64::max);
    let span = (last - first).max(1e-9);
    let mut locks: Vec<String> = trace
        .slices
        .iter()
        .filter_map(|s| s.name.strip_suffix(" lock: hold").map(str::to_string))
        .collect();
    locks.sort();
    locks.dedup();
    locks
        .into_iter()
        .map(|lock| {
            let hold_name = format!("{lock} lock: hold");
            let wait_name = format!("{lock} lock: wait");
            let mut holds: Vec<&Slice> =
                trace.slices.iter().filter(|s| s.name == hold_name).collect();
            holds.sort_by(|a, b| a.start_us.total_cmp(&b.start_us));
            let mut hold_us: Vec<f64> = holds.iter().map(|s| s.duration_us()).collect();
            let mut wait_us: Vec<f64> = trace
                .slices
                .iter()
                .filter(|s| s.name == wait_name)
                .map(|s| s.duration_us())
                .collect();
            // A contended acquisition happens when its wait slice ends (the end is stamped right
            // after the lock is taken); the hold slice starts a little later. Gaps are measured
            // to the acquisition.
            let mut wait_ends: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
            for w in trace.slices.iter().filter(|s| s.name == wait_name) {
                wait_ends.entry(w.tid).or_default().push(w.end_us);
            }
            for ends in wait_ends.values_mut() {
                ends.sort_by(f64::total_cmp);
            }
            // The end of the thread's last wait before the hold, if it ended after `released`.
            let acquired_at = |hold: &Slice, released: f64| {
                let ends = wait_ends.get(&hold.tid).map_or(&[][..], Vec::as_slice);
                let before = ends.partition_point(|&e| e <= hold.start_us);
                match before.checked_sub(1).map(|i| ends[i]) {
                    Some(end) if end >= released => end,
                    _ => hold.start_us,
                }
            };
            let mut gaps = Vec::new();
            let mut reacquisitions = 0;
            for pair in holds.windows(2) {
                if pair[0].tid == pair[1].tid {
                    reacquisitions += 1;
                } else {
                    gaps.push(acquired_at(pair[1], pair[0].end_us) - pair[0].end_us);
                }
            }
            let overlapping_holds = overlaps(holds.iter().copied()).len();
            let held_pct = 100.0 * hold_us.iter().sum::<f64>() / span;
            let (hold_median_us, hold_p90_us) = median_p90(&mut hold_us);
            let (wait_median_us, wait_p90_us) = median_p90(&mut wait_us);
            let handovers = gaps.len();
            let (handover_gap_median_us, handover_gap_p90_us) = median_p90(&mut gaps);
            LockReport {
                lock,
                holds: holds.len(),
                hold_median_us,
                hold_p90_us,
                held_pct,
                waits: wait_us.len(),
                wait_median_us,
                wait_p90_us,
                handovers,
                reacquisitions,
                handover_gap_median_us,
                handover_gap_p90_us,
                overlapping_holds,
            }
        })
        .collect()
}

/// The slices of one name: how many, and their mean length.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SliceName {
    pub name: String,
    pub count: usize,
    pub mean_us: f64,
}

/// What `schedlab trace-summary` reports of a trace besides its locks: its size, the time it
/// covers, its tracks and its slices by name (the report draws them as tables).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceOverview {
    pub slices: usize,
    pub instants: usize,
    /// From the first event to the last.
    pub span_ms: f64,
    pub tracks: Vec<Track>,
    /// In name order.
    pub by_name: Vec<SliceName>,
}

/// The overview of a trace (see [`TraceOverview`]).
pub fn overview(trace: &Trace) -> TraceOverview {
    let instants = trace.instants.iter().map(|e| e.2);
    let first = trace
        .slices
        .iter()
        .map(|s| s.start_us)
        .chain(instants.clone())
        .fold(f64::INFINITY, f64::min);
    let last =
        trace.slices.iter().map(|s| s.end_us).chain(instants).fold(f64::NEG_INFINITY, f64::max);
    let mut by_name: BTreeMap<&str, (usize, f64)> = BTreeMap::new();
    for s in &trace.slices {
        let e = by_name.entry(&s.name).or_default();
        e.0 += 1;
        e.1 += s.duration_us();
    }
    TraceOverview {
        slices: trace.slices.len(),
        instants: trace.instants.len(),
        span_ms: (last - first).max(0.0) / 1e3,
        tracks: trace.tracks.clone(),
        by_name: by_name
            .into_iter()
            .map(|(name, (count, total))| SliceName {
                name: name.to_string(),
                count,
                mean_us: total / count as f64,
            })
            .collect(),
    }
}

/// The start of the `span_us` window where every thread is busiest: the most slices starting on
/// the least busy thread (a window where one thread runs alone is a stall, not steady state).
pub fn busiest_window(trace: &Trace, span_us: f64) -> f64 {
    let tids: Vec<u64> = trace.tracks.iter().filter(|t| t.slices > 0).map(|t| t.tid).collect();
    let mut starts: Vec<(f64, usize)> = trace
        .slices
        .iter()
        .filter_map(|s| tids.iter().position(|&t| t == s.tid).map(|i| (s.start_us, i)))
        .collect();
    starts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut counts = vec![0usize; tids.len()];
    let (mut best, mut best_score, mut j) = (starts.first().map_or(0.0, |s| s.0), 0, 0);
    for i in 0..starts.len() {
        while j < starts.len() && starts[j].0 < starts[i].0 + span_us {
            counts[starts[j].1] += 1;
            j += 1;
        }
        let score = counts.iter().copied().min().unwrap_or(0);
        if score > best_score {
            (best, best_score) = (starts[i].0, score);
        }
        counts[starts[i].1] -= 1;
    }
    best
}

/// The longest lock wait in the trace: where a stall or a convoy ends.
pub fn longest_wait(trace: &Trace) -> Option<&Slice> {
    trace
        .slices
        .iter()
        .filter(|s| s.name.ends_with(" lock: wait"))
        .max_by(|a, b| a.duration_us().total_cmp(&b.duration_us()))
}

/// Where a slice is drawn in its thread's band of an excerpt, and how.
fn lane_of(slice: &Slice) -> Option<(usize, (u8, u8, u8))> {
    let name = slice.name.as_str();
    Some(match slice.cat.as_str() {
        "schedlab::path" => (
            0,
            match name {
                "bfq_insert_request" => (170, 170, 170),
                "bfq_dispatch_request" => (120, 120, 120),
                "bfq_finish_request" => (200, 200, 200),
                _ => (90, 90, 90),
            },
        ),
        "schedlab::lock" => (
            1,
            match name {
                "sched lock: hold" => (200, 40, 40),
                "sched lock: wait" => (245, 170, 170),
                "queue lock: hold" => (40, 80, 200),
                "queue lock: wait" => (170, 190, 245),
                _ => (120, 60, 160),
            },
        ),
        "schedlab::stats" => (2, (40, 150, 60)),
        _ => return None,
    })
}

/// Draws `span_us` microseconds of the trace from `from_us` (trace time) as an SVG: one band per
/// thread, with its path slices (grey, top), its lock waits and holds (middle: scheduler lock red,
/// queue lock blue, waits pale) and its statistics updates (green, bottom).
pub fn excerpt_svg(
    trace: &Trace,
    from_us: f64,
    span_us: f64,
    title: &str,
) -> Result<String, ExcerptError> {
    let mut svg = String::new();
    excerpt_svg_into(trace, from_us, span_us, title, &mut svg)?;
    Ok(svg)
}

/// Why an excerpt of a trace cannot be drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExcerptError {
    /// No finite start, or no positive finite length.
    NoSpan,
    /// The trace has no slices to draw.
    NoSlices,
    /// The drawing library's error.
    Drawing(String),
}

impl std::fmt::Display for ExcerptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExcerptError::NoSpan => f.write_str("the excerpt needs a start and a positive length"),
            ExcerptError::NoSlices => f.write_str("the trace has no slices"),
            ExcerptError::Drawing(e) => write!(f, "cannot draw the excerpt: {e}"),
        }
    }
}

impl std::error::Error for ExcerptError {}

/// The one line, for a caller that keeps messages (`ExperimentError::bad_input` takes it).
impl From<ExcerptError> for String {
    fn from(e: ExcerptError) -> String {
        e.to_string()
    }
}

fn excerpt_svg_into(
    trace: &Trace,
    from_us: f64,
    span_us: f64,
    title: &str,
    svg: &mut String,
) -> Result<(), ExcerptError> {
    use plotters::prelude::*;
    if !(span_us > 0.0 && span_us.is_finite() && from_us.is_finite()) {
        return Err(ExcerptError::NoSpan);
    }
    let to_us = from_us + span_us;
    let mut tracks: Vec<&Track> = trace.tracks.iter().filter(|t| t.slices > 0).collect();
    tracks.sort_by(|a, b| a.name.cmp(&b.name));
    if tracks.is_empty() {
        return Err(ExcerptError::NoSlices);
    }
    let rows = tracks.len();
    let err = |e: &dyn std::fmt::Display| ExcerptError::Drawing(e.to_string());
    let root = SVGBackend::with_string(svg, (1200, 150 + 130 * rows as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 16))
        .margin(14)
        .margin_top(46)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..span_us, 0f64..rows as f64)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc(format!("µs from {from_us:.1} µs into the trace"))
        .draw()
        .map_err(|e| err(&e))?;
    let lane_box = |row: usize, lane: usize| {
        let top = (rows - row) as f64 - 0.08 - lane as f64 * 0.29;
        (top - 0.24, top)
    };
    for (row, track) in tracks.iter().enumerate() {
        chart
            .draw_series(std::iter::once(Text::new(
                track.name.clone(),
                (0.0, (rows - row) as f64 - 0.02),
                ("sans-serif", 13).into_font(),
            )))
            .map_err(|e| err(&e))?;
        let slices = trace
            .slices
            .iter()
            .filter(|s| s.tid == track.tid && s.end_us > from_us && s.start_us < to_us);
        let rects: Vec<_> = slices
            .filter_map(|s| {
                let (lane, (r, g, b)) = lane_of(s)?;
                let (y0, y1) = lane_box(row, lane);
                let x0 = (s.start_us - from_us).max(0.0);
                let x1 = (s.end_us - from_us).min(span_us);
                Some(Rectangle::new([(x0, y0), (x1, y1)], RGBColor(r, g, b).filled()))
            })
            .collect();
        chart.draw_series(rects).map_err(|e| err(&e))?;
    }
    let legend = [
        ("path (insert / dispatch / finish)", (150, 150, 150)),
        ("sched lock hold", (200, 40, 40)),
        ("sched lock wait", (245, 170, 170)),
        ("queue lock hold", (40, 80, 200)),
        ("queue lock wait", (170, 190, 245)),
        ("statistics update", (40, 150, 60)),
    ];
    for (i, (label, (r, g, b))) in legend.iter().enumerate() {
        let x = 80 + 185 * i as i32;
        let y = 12;
        root.draw(&Rectangle::new([(x, y), (x + 14, y + 10)], RGBColor(*r, *g, *b).filled()))
            .map_err(|e| err(&e))?;
        root.draw(&Text::new(*label, (x + 18, y), ("sans-serif", 11).into_font()))
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(ph: &str, name: &str, tid: u64, ts: f64) -> String {
        format!(
            r#"{{"ph":"{ph}","pid":1,"tid":{tid},"name":"{name}","cat":"schedlab::lock","ts":{ts}}}"#
        )
    }

    fn trace(events: &[String]) -> String {
        let meta = r#"{"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"job-0"}}"#;
        format!("[{meta},{}]", events.join(","))
    }

    #[test]
    fn disjoint_holds_pass_and_count_handovers() {
        let t = parse(&trace(&[
            ev("B", "sched lock: hold", 1, 0.0),
            ev("E", "sched lock: hold", 1, 1.0),
            ev("B", "sched lock: hold", 2, 1.0), // touching: not an overlap
            ev("E", "sched lock: hold", 2, 2.0),
            ev("B", "sched lock: hold", 2, 3.0),
            ev("E", "sched lock: hold", 2, 4.0),
        ]))
        .unwrap();
        let r = &lock_reports(&t)[0];
        assert_eq!((r.holds, r.overlapping_holds, r.handovers, r.reacquisitions), (3, 0, 1, 1));
        assert_eq!(t.tracks[0].name, "job-0");
    }

    #[test]
    fn handover_gap_ends_at_the_acquisition_not_the_hold_slice() {
        // Thread 2 waits 0.5..1.2 (acquires at 1.2), but its hold slice starts only at 3.0.
        let t = parse(&trace(&[
            ev("B", "sched lock: hold", 1, 0.0),
            ev("E", "sched lock: hold", 1, 1.0),
            ev("B", "sched lock: wait", 2, 0.5),
            ev("E", "sched lock: wait", 2, 1.2),
            ev("B", "sched lock: hold", 2, 3.0),
            ev("E", "sched lock: hold", 2, 4.0),
        ]))
        .unwrap();
        let r = &lock_reports(&t)[0];
        assert_eq!(r.handovers, 1);
        assert!((r.handover_gap_median_us - 0.2).abs() < 1e-9, "{}", r.handover_gap_median_us);
    }

    #[test]
    fn overlapping_holds_are_caught() {
        // Thread 2 "acquires" at 0.5 while thread 1 holds until 1.0; thread 3 inside a long hold.
        let t = parse(&trace(&[
            ev("B", "sched lock: hold", 1, 0.0),
            ev("E", "sched lock: hold", 1, 1.0),
            ev("B", "sched lock: hold", 2, 0.5),
            ev("E", "sched lock: hold", 2, 0.7),
            ev("B", "sched lock: hold", 3, 5.0),
            ev("E", "sched lock: hold", 3, 9.0),
            ev("B", "sched lock: hold", 4, 6.0),
            ev("E", "sched lock: hold", 4, 6.5),
        ]))
        .unwrap();
        assert_eq!(lock_reports(&t)[0].overlapping_holds, 2);
    }

    #[test]
    fn malformed_traces_are_rejected() {
        assert!(parse("{").unwrap_err().to_string().contains("not valid JSON"));
        assert!(parse("{}").unwrap_err().to_string().contains("not an array"));
        let unclosed = trace(&[ev("B", "sched lock: hold", 1, 0.0)]);
        assert!(parse(&unclosed).unwrap_err().to_string().contains("never closed"));
        let said = r#"thread 1: slice Some("sched lock: hold") is never closed (trace cut short?)"#;
        assert_eq!(parse(&unclosed).unwrap_err().to_string(), said, "the line as before");
        let crossed = trace(&[
            ev("B", "a", 1, 0.0),
            ev("B", "b", 1, 1.0),
            ev("E", "a", 1, 2.0),
            ev("E", "b", 1, 3.0),
        ]);
        assert!(parse(&crossed).unwrap_err().to_string().contains("not nested"));
        let backwards = trace(&[ev("B", "a", 1, 5.0), ev("E", "a", 1, 4.0)]);
        assert!(parse(&backwards).unwrap_err().to_string().contains("backwards"));
    }
}

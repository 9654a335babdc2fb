//! `compare --baseline` replayed on recorded runs, without running anything: each recorded
//! `schedlab compare --json` report of one build in turn is "now", and every other one, then
//! every pair of the others, is its baseline. It counts the changes `--baseline` would call
//! improved or regressed between runs of one build, which should all be "no change": the false
//! changes of the rule, with one baseline run and with two.
//!
//! ```sh
//! cargo run --release -p schedlab-benches --example baseline_replay -- r1.json r2.json r3.json
//! ```
//!
//! `--ignore-placement` first: every baseline run counts whatever placement it ran in, as before
//! `--baseline` held runs to their placement (the control for that rule).
//!
//! Every file must be a compare report of the same variants and lock kinds as the first. Bad
//! input: one line and exit 2.

use schedlab_benches::experiment::compare::baseline::DEFAULT_THRESHOLD;
use schedlab_benches::experiment::compare::{Baseline, ChangeVerdict};
use schedlab_core::LockKind;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The variants and lock kinds of a compare report, read from its `config`.
fn shape(text: &str) -> Option<(Vec<String>, Vec<LockKind>)> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let config = value.get("config")?;
    let variants = serde_json::from_value(config.get("variants")?.clone()).ok()?;
    let locks = serde_json::from_value(config.get("locks")?.clone()).ok()?;
    Some((variants, locks))
}

/// One line per ratio, and the count of false changes: `now` (its ratios and placement)
/// against `baseline`. Against runs made in another placement nothing is judged ("not judged").
fn replay(now: &Baseline, baseline: &Baseline, label: &str, placed: bool) -> (usize, usize) {
    let comparison = baseline.compare(&now.ratios, now.placement_ns.filter(|_| placed));
    let unjudged = if comparison.not_judged.is_some() { "not judged" } else { "no interval" };
    let mut flagged = 0;
    for c in &comparison.changes {
        let verdict = c.verdict.map_or(unjudged, ChangeVerdict::label);
        if matches!(c.verdict, Some(ChangeVerdict::Improved | ChangeVerdict::Regressed)) {
            flagged += 1;
        }
        let interval = c
            .interval
            .map_or("-".to_string(), |i| format!("[{:+.1}, {:+.1}]", 100.0 * i.lo, 100.0 * i.hi));
        let floor = c.between_run_floor.map_or("-".to_string(), |f| format!("{:.1}", 100.0 * f));
        println!(
            "{label}\t{}\t{:+.1}\t{interval}\t{floor}\t{:.1}\t{verdict}",
            c.ratio,
            100.0 * c.change,
            100.0 * c.band
        );
    }
    (flagged, comparison.changes.len())
}

fn main() -> ExitCode {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let placed = args.first().is_none_or(|a| a != "--ignore-placement");
    if !placed {
        args.remove(0);
    }
    let files: Vec<PathBuf> = args.into_iter().map(PathBuf::from).collect();
    if files.len() < 3 {
        eprintln!("baseline_replay: give three or more compare --json reports of one build");
        return ExitCode::from(2);
    }
    let mut texts = Vec::new();
    for f in &files {
        match std::fs::read_to_string(f) {
            Ok(t) => texts.push(t),
            Err(e) => {
                eprintln!("baseline_replay: {}: {e}", f.display());
                return ExitCode::from(2);
            }
        }
    }
    let Some((variants, locks)) = shape(&texts[0]) else {
        eprintln!("baseline_replay: {}: not a compare --json report", files[0].display());
        return ExitCode::from(2);
    };
    let variants: Vec<&str> = variants.iter().map(String::as_str).collect();
    let mut runs = Vec::new();
    for (f, t) in files.iter().zip(&texts) {
        match Baseline::parse(f, t, &variants, &locks, DEFAULT_THRESHOLD) {
            Ok(b) => runs.push(b),
            Err(e) => {
                eprintln!("baseline_replay: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let name = |p: &Path| p.file_name().map_or(String::new(), |n| n.to_string_lossy().into());
    println!("now ÷ baseline\tratio\tchange %\t95% interval %\tfloor %\tband %\tverdict");
    let (mut one, mut two) = ((0, 0), (0, 0));
    for (i, now) in runs.iter().enumerate() {
        let others: Vec<&Baseline> =
            runs.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, b)| b).collect();
        for b in &others {
            let label = format!("{} ÷ {}", name(&now.file), name(&b.file));
            let (f, n) = replay(now, b, &label, placed);
            one = (one.0 + f, one.1 + n);
        }
        for (k, a) in others.iter().enumerate() {
            for b in &others[k + 1..] {
                let pair = (*a).clone().with_runs(vec![(*b).clone()]);
                let pair = match pair {
                    Ok(p) => p,
                    Err(e) => {
                        eprintln!("baseline_replay: {e}");
                        return ExitCode::from(2);
                    }
                };
                let label = format!("{} ÷ {}+{}", name(&now.file), name(&a.file), name(&b.file));
                let (f, n) = replay(now, &pair, &label, placed);
                two = (two.0 + f, two.1 + n);
            }
        }
    }
    println!("# one baseline run: {} of {} ratios called improved or regressed", one.0, one.1);
    println!("# two baseline runs: {} of {} ratios called improved or regressed", two.0, two.1);
    ExitCode::SUCCESS
}

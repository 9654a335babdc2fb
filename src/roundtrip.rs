//! `schedlab roundtrip`: the single-threaded round-trip cost of each variant, measured in rounds
//! that interleave the variants, reported as median and spread. Also the entry point for
//! instruction counts: `valgrind --tool=callgrind schedlab roundtrip --variant V --rounds 1`.

use crate::{units, INTERRUPT};
use schedlab_benches::provenance::Provenance;
use schedlab_benches::roundtrip::{lockstat_windows_named_until, measure_named_until, window_ratios};
use schedlab_core::{lockstat, LockKind};

#[derive(clap::Args, Debug, Clone)]
pub struct RoundtripArgs {
    /// Only this variant (default: all).
    #[arg(long)]
    variant: Option<String>,
    /// Rounds, 1..=1000; each round measures every variant once, in turn.
    #[arg(long, default_value_t = 5, value_parser = units::count::<1, 1000>, allow_negative_numbers = true)]
    rounds: u64,
    /// Round trips per measurement, 1..=100000000 (a signal stops a measurement at once).
    #[arg(long, default_value_t = 200_000, value_parser = units::count::<1, 100_000_000>, allow_negative_numbers = true)]
    iterations: u64,
    /// Lock kind: fair-spin or parking-lot.
    #[arg(long, default_value = "fair-spin")]
    lock: String,
    /// Also measure what the lock statistics cost: each measurement then runs on one scheduler in
    /// 41 alternating windows (off, on, off, ..., off; the round trips split between them), and
    /// each on window is compared with its two off neighbours. `--lockstat` (sampled, what runs
    /// use) or `--lockstat exact` (every hold timed).
    #[arg(long, value_name = "MODE", num_args = 0..=1, default_missing_value = "sampled", value_parser = crate::flags::lockstat_mode)]
    lockstat: Option<lockstat::Mode>,
}

/// On windows per measurement with `--lockstat` (each between two off windows).
const WINDOW_PAIRS: u64 = 20;

/// The median; sorts `v` (the callers read the range from its ends).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    schedlab_benches::numbers::median(v)
}

pub fn cmd(args: &RoundtripArgs) -> Result<u8, String> {
    let lock = LockKind::from_name(&args.lock)
        .ok_or_else(|| format!("unknown lock kind `{}` (known: fair-spin, parking-lot)", args.lock))?;
    let names: Vec<&str> = match &args.variant {
        Some(v) => vec![schedlab_variants::info(v).ok_or_else(|| format!("unknown variant `{v}`"))?.name],
        None => schedlab_variants::ALL.iter().map(|v| v.name).collect(),
    };
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let mut instrumented: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    // Per round: the median over its on windows of on ÷ the mean of the two off neighbours.
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let mut rounds_done = 0;
    // A round counts only when every variant was measured in it (a signal drops the round in
    // progress), so that every column covers the same rounds.
    'rounds: for _ in 0..args.rounds {
        // Per variant: plain ns, and with --lockstat the on windows' ns and the round's cost ratio.
        let mut round: Vec<(f64, Option<(f64, f64)>)> = Vec::with_capacity(names.len());
        for name in &names {
            let measured = match args.lockstat {
                None => measure_named_until(name, args.iterations, lock, &INTERRUPT).map(|plain| (plain, None)),
                Some(mode) => {
                    let window = (args.iterations / WINDOW_PAIRS).max(1);
                    lockstat_windows_named_until(name, window, WINDOW_PAIRS, lock, mode, &INTERRUPT).map(|(mut off, mut on)| {
                        let mut costs = window_ratios(&off, &on);
                        (median(&mut off), Some((median(&mut on), median(&mut costs))))
                    })
                }
            };
            let Some(measured) = measured else {
                break 'rounds;
            };
            round.push(measured);
        }
        for (i, (plain, with_lockstat)) in round.into_iter().enumerate() {
            samples[i].push(plain);
            if let Some((on, cost)) = with_lockstat {
                instrumented[i].push(on);
                ratios[i].push(cost);
            }
        }
        rounds_done += 1;
    }
    outln!("round trip (insert + dispatch + completion), 1 thread, {lock}, {} x {} round trips", rounds_done, args.iterations);
    outln!("{}", Provenance::collect().one_line());
    if rounds_done < args.rounds {
        outln!("(interrupted: {rounds_done} of {} rounds finished; the table covers those)", args.rounds);
    }
    if rounds_done == 0 {
        outln!("no round finished: nothing measured");
        return Ok(crate::exit::OK);
    }
    let medians: Vec<f64> = samples.iter_mut().map(|v| median(v)).collect();
    let instrumented_medians: Vec<f64> = instrumented.iter_mut().filter(|v| !v.is_empty()).map(|v| median(v)).collect();
    let cost = |r: &mut Vec<f64>| {
        let m = median(r);
        (100.0 * (m - 1.0), 100.0 * (r[0] - 1.0), 100.0 * (r[r.len() - 1] - 1.0))
    };
    let costs: Vec<(f64, f64, f64)> = ratios.iter_mut().filter(|v| !v.is_empty()).map(cost).collect();
    let base = names.iter().position(|n| *n == "no-stats").map(|i| medians[i]);
    out!("{:<12} {:>10} {:>17} {:>11}", "variant", "ns median", "min-max", "x no-stats");
    if let Some(mode) = args.lockstat {
        out!(" {:>16} {:>9} {:>17}", format!("{} ns med", mode.name()), "cost", "cost min..max");
    }
    outln!();
    for (i, name) in names.iter().enumerate() {
        let s = &samples[i];
        let ratio = base.map_or("-".into(), |b| format!("{:.2}", medians[i] / b));
        out!("{:<12} {:>10.0} {:>17} {:>11}", name, medians[i], format!("{:.0}-{:.0}", s[0], s[s.len() - 1]), ratio);
        if let (Some(m), Some((c, lo, hi))) = (instrumented_medians.get(i), costs.get(i)) {
            out!(" {:>16.0} {:>8.1}% {:>17}", m, c, format!("{lo:.1}..{hi:.1}%"));
        }
        outln!();
    }
    if let Some(mode) = args.lockstat {
        outln!(
            "cost: lock statistics on ({}) against off in {} alternating windows of {} round trips on one scheduler (each on window against its two off neighbours); per round the median over its windows; shown: the median over rounds, and the range of the rounds",
            mode.name(),
            2 * WINDOW_PAIRS + 1,
            (args.iterations / WINDOW_PAIRS).max(1)
        );
    }
    Ok(crate::exit::OK)
}

//! `schedlab roundtrip`: the single-threaded round-trip cost of each variant, measured in rounds
//! that interleave the variants, reported as median and spread. Also the entry point for
//! instruction counts: `valgrind --tool=callgrind schedlab roundtrip --variant V --rounds 1`.

use crate::{units, INTERRUPT};
use schedlab_benches::provenance::Provenance;
use schedlab_benches::roundtrip::measure_named_until;
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
    /// Also measure every variant with the lock statistics on (instrumented right after plain, in
    /// the same rounds): the statistics' cost per round trip, as the median of the per-round
    /// ratios. `--lockstat` (sampled, what runs use) or `--lockstat exact` (every hold timed).
    #[arg(long, value_name = "MODE", num_args = 0..=1, default_missing_value = "sampled", value_parser = crate::flags::lockstat_mode)]
    lockstat: Option<lockstat::Mode>,
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
    // Per round: instrumented ÷ plain of the same round (the two measured back to back).
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let mut rounds_done = 0;
    // A round counts only when every variant was measured in it (a signal drops the round in
    // progress), so that every column covers the same rounds.
    'rounds: for _ in 0..args.rounds {
        let mut round: Vec<(f64, Option<f64>)> = Vec::with_capacity(names.len());
        for name in &names {
            let measure_plain = || measure_named_until(name, args.iterations, lock, &INTERRUPT);
            let measure_instrumented = |mode| {
                lockstat::set_mode(mode);
                lockstat::reset();
                lockstat::set_enabled(true);
                let m = measure_named_until(name, args.iterations, lock, &INTERRUPT);
                lockstat::set_enabled(false);
                m
            };
            // The two run back to back, in an order that alternates round by round, so that
            // neither always runs second (warmer caches, or the next burst of another process).
            let (plain, with_lockstat) = match args.lockstat {
                None => (measure_plain(), None),
                Some(mode) if rounds_done % 2 == 0 => {
                    let p = measure_plain();
                    (p, p.and_then(|_| measure_instrumented(mode)).map(Some))
                }
                Some(mode) => {
                    let m = measure_instrumented(mode);
                    (m.and_then(|_| measure_plain()), m.map(Some))
                }
            };
            let (Some(plain), Some(with_lockstat)) = (plain, with_lockstat.or(args.lockstat.is_none().then_some(None))) else {
                break 'rounds;
            };
            round.push((plain, with_lockstat));
        }
        for (i, (plain, with_lockstat)) in round.into_iter().enumerate() {
            samples[i].push(plain);
            instrumented[i].extend(with_lockstat);
            ratios[i].extend(with_lockstat.map(|m| m / plain));
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
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
    };
    let medians: Vec<f64> = samples.iter_mut().map(median).collect();
    let instrumented_medians: Vec<f64> = instrumented.iter_mut().filter(|v| !v.is_empty()).map(median).collect();
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
            "cost: lock statistics on ({}) against off, median over rounds of the per-round ratio (each round measures the two back to back), and its range",
            mode.name()
        );
    }
    Ok(crate::exit::OK)
}

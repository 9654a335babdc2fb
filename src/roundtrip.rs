//! `schedlab roundtrip`: the single-threaded round-trip cost of each variant, measured in rounds
//! that interleave the variants, reported as median and spread. Also the entry point for
//! instruction counts: `valgrind --tool=callgrind schedlab roundtrip --variant V --rounds 1`.

use schedlab_benches::provenance::Provenance;
use schedlab_benches::roundtrip::measure_named;
use schedlab_core::{lockstat, LockKind};
use std::process::ExitCode;

#[derive(clap::Args, Debug, Clone)]
pub struct RoundtripArgs {
    /// Only this variant (default: all).
    #[arg(long)]
    variant: Option<String>,
    /// Rounds; each round measures every variant once, in turn.
    #[arg(long, default_value_t = 5, allow_negative_numbers = true)]
    rounds: i64,
    /// Round trips per measurement.
    #[arg(long, default_value_t = 200_000, allow_negative_numbers = true)]
    iterations: i64,
    /// Lock kind: fair-spin or parking-lot.
    #[arg(long, default_value = "fair-spin")]
    lock: String,
    /// Also measure every variant with the lock statistics on (instrumented against plain, in the
    /// same rounds): the instrumentation's cost per round trip.
    #[arg(long)]
    lockstat: bool,
}

pub fn cmd(args: &RoundtripArgs) -> Result<ExitCode, String> {
    let lock = LockKind::from_name(&args.lock)
        .ok_or_else(|| format!("unknown lock kind `{}` (known: fair-spin, parking-lot)", args.lock))?;
    if args.rounds < 1 {
        return Err(format!("--rounds must be at least 1, got {}", args.rounds));
    }
    if args.iterations < 1 {
        return Err(format!("--iterations must be at least 1, got {}", args.iterations));
    }
    let names: Vec<&str> = match &args.variant {
        Some(v) => {
            schedlab_variants::info(v).ok_or_else(|| format!("unknown variant `{v}`"))?;
            vec![schedlab_variants::ALL.iter().find(|i| i.name == v).unwrap().name]
        }
        None => schedlab_variants::ALL.iter().map(|v| v.name).collect(),
    };
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let mut instrumented: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for _ in 0..args.rounds {
        for (i, name) in names.iter().enumerate() {
            samples[i].push(measure_named(name, args.iterations as u64, lock).expect("known variant"));
            if args.lockstat {
                lockstat::reset();
                lockstat::set_enabled(true);
                instrumented[i].push(measure_named(name, args.iterations as u64, lock).expect("known variant"));
                lockstat::set_enabled(false);
            }
        }
    }
    println!("round trip (insert + dispatch + completion), 1 thread, {lock}, {} x {} round trips", args.rounds, args.iterations);
    println!("{}", Provenance::collect().one_line());
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
    };
    let medians: Vec<f64> = samples.iter_mut().map(median).collect();
    let instrumented_medians: Vec<f64> = instrumented.iter_mut().filter(|v| !v.is_empty()).map(median).collect();
    let base = names.iter().position(|n| *n == "no-stats").map(|i| medians[i]);
    print!("{:<12} {:>10} {:>17} {:>11}", "variant", "ns median", "min-max", "x no-stats");
    if args.lockstat {
        print!(" {:>16} {:>9}", "lockstat ns med", "cost");
    }
    println!();
    for (i, name) in names.iter().enumerate() {
        let s = &samples[i];
        let ratio = base.map_or("-".into(), |b| format!("{:.2}", medians[i] / b));
        print!("{:<12} {:>10.0} {:>17} {:>11}", name, medians[i], format!("{:.0}-{:.0}", s[0], s[s.len() - 1]), ratio);
        if let Some(m) = instrumented_medians.get(i) {
            print!(" {:>16.0} {:>8.1}%", m, 100.0 * (m / medians[i] - 1.0));
        }
        println!();
    }
    Ok(ExitCode::SUCCESS)
}

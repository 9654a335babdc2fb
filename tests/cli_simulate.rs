//! `schedlab simulate` as a user meets it: the issue's command with idling on and off, the same
//! seed giving the same output, the JSON fields, durations, and bad input (one line on stderr,
//! exit code 2, never a panic).

use std::path::{Path, PathBuf};

mod invoke;
use invoke::{schedlab, words, words_and};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("schedlab-cli-sim-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `simulate` with `args` and `--json`; returns fio's group-reporting line, the whole text
/// (the files written aside) and the JSON.
fn simulate(args: &[&str], json: &Path) -> (String, String, serde_json::Value) {
    let mut all = vec!["simulate"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", json.to_str().unwrap()]);
    let out = schedlab(&all);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let printed = String::from_utf8(out.stdout).unwrap();
    // The tables, fio's line under the first; then the files written, as every command says.
    let json_line = format!("wrote {}", json.display());
    assert_eq!(printed.lines().last(), Some(json_line.as_str()), "{printed}");
    let stdout: String =
        printed.lines().filter(|l| !l.starts_with("wrote ")).map(|l| format!("{l}\n")).collect();
    let fio: Vec<&str> =
        stdout.lines().map(str::trim_start).filter(|l| l.contains(": IOPS=")).collect();
    assert_eq!(fio.len(), 1, "one line like fio's group reporting: {stdout}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    (fio[0].to_string(), stdout, v)
}

/// The issue's command (virtual seconds shortened in unoptimised builds to keep the file fast).
fn issue_command(slice_idle: &str, seed: &str) -> Vec<String> {
    let runtime = if cfg!(debug_assertions) { "2" } else { "10" };
    words_and(
        "--device ssd --jobs 10 --iodepth 64 --rw randread --bs 4k \
        --runtime",
        &[runtime, "--slice-idle", slice_idle, "--seed", seed],
    )
    .into_iter()
    .map(String::from)
    .collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn idling_off_gives_clearly_more_iops_on_the_ssd() {
    let dir = scratch("idling");
    let (line_on, _, on) = simulate(&strs(&issue_command("8ms", "7")), &dir.join("on.json"));
    let (line_off, _, off) = simulate(&strs(&issue_command("0", "7")), &dir.join("off.json"));
    for (line, v) in [(&line_on, &on), (&line_off, &off)] {
        assert!(line.starts_with("randread: IOPS="), "{line}");
        for key in ["iops", "lat_avg_us", "lat_stddev_us", "bw_kib_s"] {
            assert!(v[key].as_f64().is_some_and(|x| x > 0.0), "{key} in {v}");
        }
        assert!(v["provenance"]["rustc"].as_str().unwrap().starts_with("rustc"));
        assert!(!v["provenance"]["commit"].as_str().unwrap().is_empty());
        assert_eq!(v["consistent"], true);
        assert_eq!(v["slice_idle_source"], "explicit");
        // The real time it took is recorded (not asserted: it depends on the machine's load).
        assert!(v["provenance"]["wall_s"].as_f64().is_some_and(|w| w >= 0.0));
        assert_eq!(v["interrupted"], false);
    }
    assert_eq!(on["slice_idle_ns"], 8_000_000);
    assert_eq!(off["slice_idle_ns"], 0);
    let (iops_on, iops_off) = (on["iops"].as_f64().unwrap(), off["iops"].as_f64().unwrap());
    assert!(iops_off > 2.0 * iops_on, "idling off {iops_off} IOPS vs on {iops_on}");
    assert!(off["lat_avg_us"].as_f64().unwrap() < on["lat_avg_us"].as_f64().unwrap());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_same_seed_gives_the_same_output() {
    let dir = scratch("same");
    let args = words(
        "--jobs 4 --iodepth 16 --runtime 1 --seed 11 --groups 2 \
        --weights 100,300",
    );
    let (_, text_a, mut a) = simulate(&args, &dir.join("a.json"));
    let (_, text_b, mut b) = simulate(&args, &dir.join("b.json"));
    assert_eq!(text_a, text_b);
    let obj = |v: &mut serde_json::Value| {
        v.as_object_mut().unwrap().remove("provenance").expect("provenance present")
    };
    obj(&mut a);
    obj(&mut b);
    assert_eq!(a, b, "same seed, same JSON (provenance aside)");
    let mut other = args.to_vec();
    other[7] = "12";
    let (_, _, mut c) = simulate(&other, &dir.join("c.json"));
    obj(&mut c);
    assert_ne!(a, c, "another seed, other numbers");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_scheduler_decides_idling_after_the_probe_unless_told() {
    let dir = scratch("decide");
    let (_, _, ssd) = simulate(&["--runtime", "0.2"], &dir.join("ssd.json"));
    assert_eq!(
        (ssd["slice_idle_ns"].as_u64(), ssd["slice_idle_source"].as_str()),
        (Some(0), Some("registered"))
    );
    assert_eq!(ssd["rotational"], false);
    let (_, _, init) =
        simulate(&["--runtime", "0.2", "--idle-decision", "init"], &dir.join("init.json"));
    assert_eq!(init["slice_idle_ns"], 8_000_000, "deciding before the probe makes the SSD idle");
    let (_, _, hdd) = simulate(
        &["--device", "hdd", "--jobs", "2", "--iodepth", "1", "--rw", "read", "--runtime", "1"],
        &dir.join("hdd.json"),
    );
    assert_eq!(
        (hdd["slice_idle_ns"].as_u64(), hdd["rotational"].as_bool()),
        (Some(8_000_000), Some(true))
    );
    for (text, ns) in [("500us", 500_000u64), ("1s", 1_000_000_000), ("0", 0), ("2.5ms", 2_500_000)]
    {
        let (_, printed, v) = simulate(
            &["--runtime", "0.1", "--slice-idle", text, "--jobs", "2"],
            &dir.join("d.json"),
        );
        assert_eq!(v["slice_idle_ns"].as_u64(), Some(ns), "{text}");
        let settings =
            printed.lines().skip_while(|l| *l != "The settings").nth(2).unwrap_or_default();
        assert!(
            settings.contains(" explicit "),
            "the settings say where slice_idle came from: {printed}"
        );
    }
    let (_, _, null) = simulate(
        &["--device", "null", "--think", "1ms", "--runtime", "0.5", "--jobs", "2"],
        &dir.join("null.json"),
    );
    assert_eq!(null["lat_avg_us"], 0.0, "zero latency");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_input_is_one_line_and_exit_code_2() {
    let cases: &[&[&str]] = &[
        &["--jobs", "0"],
        &["--jobs", "-3"],
        &["--device", "floppy"],
        &["--slice-idle", "-8ms"],
        &["--slice-idle", "8"],
        &["--slice-idle", "8 parsecs"],
        &["--runtime", "-2"],
        &["--runtime", "0"],
        &["--runtime", "soon"],
        &["--think", "-1ms"],
        &["--rw", "randtrim"],
        &["--iodepth", "0"],
        &["--bs", "1000"],
        &["--weights", "100,0"],
        &["--groups", "-1"],
        &["--variant", "nonsense"],
        &["--idle-decision", "later"],
        &["--device", "hdd", "--parallelism", "8"],
        &["--parallelism", "0"],
        &["--device", "null"],
        &["--seed", "-1"],
        &["--bogus"],
    ];
    for case in cases {
        let mut args = vec!["simulate", "--runtime", "0.1"];
        args.extend_from_slice(case);
        let out = schedlab(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{case:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{case:?}: {stderr}");
        assert!(stderr.starts_with("schedlab: "), "{case:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{case:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{case:?}");
    }
}

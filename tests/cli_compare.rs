//! `schedlab compare` and `schedlab sweep` as a user meets them: a short comparison with its JSON
//! (the keys the issue names, consistent results, sane lock counters, the seeds' ratios printed),
//! a short sweep writing its CSV and SVG, an interrupted sweep keeping its points, bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

mod invoke;
use invoke::{assert_bad_input, assert_refused_saying, schedlab, words, words_and};

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("schedlab-cli-compare-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn compare_writes_the_keys_with_consistent_results_and_prints_the_ratios() {
    let dir = scratch("compare");
    let json = dir.join("c.json");
    let out = schedlab(&[
        "compare",
        "--placement",
        "pool",
        "--threads",
        "2",
        "--duration",
        "0.3",
        "--lockstat-duration",
        "0.2",
        "--ramp",
        "0",
        "--rounds",
        "1",
        "--lock",
        "fair-spin",
        "--retries",
        "0",
        "--json",
        json.to_str().unwrap(),
        // Exact mode, so that the hold totals are sums of real intervals and the window bound
        // below is physical (a sampled total is an estimate).
        "--lockstat-mode",
        "exact",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for text in [
        "deferred stats",
        "debug stats off",
        "no stats",
        "1.24",
        "Locks: contention and occupancy",
        "Locks: where each path held and waited",
    ] {
        assert!(stdout.contains(text), "`{text}` not printed:\n{stdout}");
    }
    // A row for each lock of a variant: the scheduler's, and queue-lock's own queue lock.
    let lock_row = |variant: &str, class: &str| {
        stdout.lines().any(|l| l.split_whitespace().take(3).eq([variant, "fair-spin", class]))
    };
    assert!(lock_row("sched-lock", "sched") && lock_row("queue-lock", "queue"), "{stdout}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for key in ["commit", "rustc", "cpus", "cpu_model", "command_line", "date"] {
        assert!(!v["provenance"][key].is_null(), "provenance.{key} missing");
    }
    let results = v["results"].as_array().expect("results[]");
    let names: Vec<&str> = results.iter().map(|r| r["variant"].as_str().unwrap()).collect();
    let safe: Vec<&str> = schedlab_variants::safe().map(|v| v.name).collect();
    assert_eq!(names, safe, "every safe variant");
    for r in results {
        let what = r["variant"].as_str().unwrap();
        assert_eq!(r["lock"], "fair-spin");
        assert_eq!(r["consistent"], true, "{what}");
        assert!(r["kiops"]["median"].as_f64().unwrap() > 0.0, "{what}");
        assert_eq!(r["kiops"]["runs"].as_array().unwrap().len(), 1, "{what}");
        assert!(!r["per_thread_kiops"].is_null(), "{what}");
        let locks = r["locks"].as_array().expect("locks[]");
        let sched = locks
            .iter()
            .find(|l| l["name"] == "sched")
            .unwrap_or_else(|| panic!("{what}: no sched lock"));
        for l in locks {
            for key in ["name", "acquisitions", "contentions", "owner_changes"] {
                assert!(!l[key].is_null(), "{what}: locks[].{key}");
            }
            for t in ["wait_ns", "hold_ns"] {
                for key in ["total", "avg", "p99", "max"] {
                    assert!(l[t][key].is_number(), "{what}: locks[].{t}.{key}");
                }
            }
            let n = |k: &str| l[k].as_u64().unwrap();
            assert!(n("acquisitions") >= n("contentions"), "{what}: {l}");
            assert!(l["hold_ns"]["total"].as_u64().unwrap() > 0, "{what}: {l}");
        }
        // One run per variant: the counters and the cost come from the same run.
        assert_eq!(r["lockstat_overhead_source"], "same run, alternating windows", "{what}");
        // The scheduler lock is held at most for the whole measured window.
        assert_eq!(sched["hold_exact"], true, "{what}: {sched}");
        let window_ns = r["lockstat_s"].as_f64().unwrap() * 1e9;
        assert!(sched["hold_ns"]["total"].as_f64().unwrap() <= window_ns * 1.02, "{what}: {sched}");
    }
    let ratios = v["ratios"].as_array().unwrap();
    assert!(ratios.iter().any(
        |r| r["name"] == "deferred stats" && r["by_lock"][0]["measured"]["median"].is_number()
    ));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn compare_gives_every_ratio_an_interval_and_the_run_its_noise_floor() {
    let dir = scratch("interval");
    let json = dir.join("c.json");
    let base = words_and(
        "compare --placement pool --threads 1 \
        --variants sched-lock,queue-lock --duration 0.1 --ramp 0 \
        --rounds 6 --measure plain --retries 0 --json",
        &[json.to_str().unwrap()],
    );
    let out = schedlab(&base);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        stdout.contains("The run's noise floor (A/A pair)")
            && stdout.contains("÷ sched-lock (×)  95% lo (×)  95% hi (×)"),
        "{stdout}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["schema_version"], 4);
    let names: Vec<&str> =
        v["results"].as_array().unwrap().iter().map(|r| r["variant"].as_str().unwrap()).collect();
    assert_eq!(names, ["sched-lock", "queue-lock"], "the A/A copy is not a variant's row");
    let interval = |i: &serde_json::Value| (i["lo"].as_f64().unwrap(), i["hi"].as_f64().unwrap());
    let (lo, hi) = interval(&v["results"][1]["vs_sched_lock_interval"]);
    assert!(lo <= hi, "{lo} {hi}");
    let floor = &v["noise_floor"][0];
    assert_eq!(floor["copy"]["variant"], "sched-lock (A/A)");
    assert_eq!(floor["copy"]["runs"], 6);
    let (lo, hi) = interval(&floor["interval"]);
    assert!(lo <= hi && floor["unreliable"].is_null() == (lo <= 1.0 && 1.0 <= hi), "{floor}");
    let deferred = v["ratios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "deferred stats")
        .expect("deferred stats");
    let b = &deferred["by_lock"][0];
    interval(&b["interval"]);
    // Judged on the interval, or not judged (a loaded machine disturbs runs): never a boolean.
    let goal = b["meets_goal"].as_str().unwrap_or("met");
    assert!(
        judged_or_disturbed(&v, &["met", "missed", "inconclusive"], goal)
            && !b["meets_goal"].is_boolean(),
        "{b}"
    );

    let mut no_aa = base.to_vec();
    no_aa.push("--no-aa");
    let out = schedlab(&no_aa);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("not measured: --no-aa"), "{stdout}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["noise_floor"].as_array().map(Vec::len), Some(0));
    assert_eq!(v["noise_floor_not_measured"], "--no-aa");
    std::fs::remove_dir_all(&dir).ok();
}

/// Whether `said` is one of `verdicts`, or "not judged: disturbed" in a report whose outcome
/// names disturbed runs (a loaded machine: no verdict is given on them, issue 44 item 2).
fn judged_or_disturbed(report: &serde_json::Value, verdicts: &[&str], said: &str) -> bool {
    let disturbed = report["outcome"]["disturbed"].as_array().is_some_and(|d| !d.is_empty());
    verdicts.contains(&said) || (disturbed && said == "not judged: disturbed")
}

/// A `schedlab compare --json` report of sched-lock, no-stats and epoch under parking-lot, 5
/// rounds (`--baseline`).
const BASELINE: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/benches/tests/fixtures/compare/baseline.json");

#[test]
fn compare_adds_rounds_until_its_precision_or_time_and_compares_with_a_baseline() {
    let dir = scratch("precision");
    let json = dir.join("c.json");
    let out = schedlab(&words_and(
        "compare --placement pool --threads 1 \
        --variants sched-lock,no-stats,epoch --lock parking-lot \
        --duration 0.3 --ramp 0 --retries 0 --precision 1% --max-time 1s \
        --baseline",
        &[BASELINE, "--json", json.to_str().unwrap()],
    ));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    // Which came first depends on the machine: only that one of them is said.
    let p = &v["precision"];
    let stopped = p["stopped"].as_str().expect("precision.stopped");
    assert!(["precision-reached", "time-limit-reached"].contains(&stopped), "{p}");
    let said = if stopped == "precision-reached" {
        "rounds: precision reached"
    } else {
        "rounds: time limit reached"
    };
    assert!(stdout.contains(said), "`{said}` not printed:\n{stdout}");
    assert!(p["target"].as_f64() == Some(0.01) && p["max_time_s"].as_f64() == Some(1.0), "{p}");
    let rounds = p["rounds"].as_u64().unwrap();
    assert!(rounds >= 3 && v["rounds_completed"].as_u64() == Some(rounds), "{p}");
    assert!(p["widest"]["ratio"].is_string(), "{p}");
    // The statistics' cost: an interval (or why none) and a verdict on it, never a boolean.
    for r in v["results"].as_array().unwrap() {
        assert!(
            r.get("lockstat_overhead_interval").is_some()
                && r.get("lockstat_overhead_verdict").is_some(),
            "{r}"
        );
        let verdict = &r["lockstat_overhead_verdict"];
        assert!(
            verdict.is_null()
                || judged_or_disturbed(
                    &v,
                    &["met", "missed", "inconclusive"],
                    verdict.as_str().unwrap()
                ),
            "{verdict}"
        );
    }
    // Every ratio against the baseline: a change, its interval, a verdict.
    let b = &v["baseline"];
    assert_eq!(b["file"], BASELINE);
    let changes = b["changes"].as_array().expect("baseline.changes[]");
    let ratios: Vec<&str> = changes.iter().map(|c| c["ratio"].as_str().unwrap()).collect();
    assert_eq!(ratios, ["no-stats ÷ sched-lock", "epoch ÷ sched-lock"]);
    for c in changes {
        assert!(c["interval"]["lo"].is_number() && c["change"].is_number(), "{c}");
        assert!(
            judged_or_disturbed(
                &v,
                &["improved", "regressed", "no-change"],
                c["verdict"].as_str().unwrap()
            ),
            "{c}"
        );
    }
    assert!(
        stdout.contains("Against the baseline") && stdout.contains("epoch ÷ sched-lock"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_bad_baseline_or_precision_is_one_line_and_exit_code_2_before_any_run() {
    let dir = scratch("bad-baseline");
    let fixture = std::fs::read_to_string(BASELINE).unwrap();
    let old_version = dir.join("v3.json");
    std::fs::write(
        &old_version,
        fixture.replacen("\"schema_version\": 4", "\"schema_version\": 3", 1),
    )
    .unwrap();
    let sweep = dir.join("sweep.json");
    std::fs::write(&sweep, r#"{"schema": "schedlab-sweep", "schema_version": 1}"#).unwrap();
    let text = dir.join("notes.txt");
    std::fs::write(&text, "not a report\n").unwrap();
    let missing = dir.join("missing.json");
    // The fixture again, as a run of another build: refused beside the fixture itself.
    let other_build = dir.join("other-build.json");
    let commit = fixture.split("\"commit\": \"").nth(1).and_then(|t| t.split('"').next());
    let commit = commit.expect("the fixture names its commit");
    std::fs::write(&other_build, fixture.replacen(commit, "0123456", 1)).unwrap();
    let same = words(
        "compare --placement pool --variants sched-lock,no-stats,epoch \
        --lock parking-lot --baseline",
    );
    fn with<'a>(same: &[&'a str], file: &'a std::path::Path) -> Vec<&'a str> {
        [same, &[file.to_str().unwrap()]].concat()
    }
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (with(&same, &missing), "missing.json"),
        (with(&same, &text), "not a `schedlab compare --json` report"),
        (with(&same, &sweep), "schema is `schedlab-sweep`"),
        (with(&same, &old_version), "schema_version 3"),
        (
            [with(&same, Path::new(BASELINE)), with(&["--baseline"], &other_build)].concat(),
            "one build",
        ),
        (
            words_and(
                "compare --placement pool --variants sched-lock,no-stats \
                --lock parking-lot --baseline",
                &[BASELINE],
            ),
            "other variants",
        ),
        (
            vec!["compare", "--variants", "sched-lock,no-stats,epoch", "--baseline", BASELINE],
            "other lock kinds",
        ),
        (vec!["compare", "--baseline-threshold", "5%"], "--baseline"),
        (vec!["compare", "--precision", "0"], "--precision"),
        (vec!["compare", "--precision", "150%"], "--precision"),
        (vec!["compare", "--max-time", "-1"], "--max-time"),
    ];
    // One line and nothing else: no run was announced or made.
    for (args, said) in cases {
        assert_refused_saying(&args, said);
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn sweep_writes_csv_and_svg() {
    let dir = scratch("sweep");
    let (csv, svg) = (dir.join("s.csv"), dir.join("s.svg"));
    let out = schedlab(&words_and(
        "sweep --threads 1,2 --variants sched-lock,no-stats --rounds 1 \
        --duration 0.2 --lockstat-duration 0.1 --ramp 0 --retries 0 \
        --csv",
        &[csv.to_str().unwrap(), "--svg", svg.to_str().unwrap()],
    ));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("variant,lock,threads,oversubscribed"));
    assert_eq!(lines.count(), 4, "{text}");
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(
        chart.starts_with("<svg") && chart.contains("MODEL") && chart.contains("measured"),
        "{}",
        &chart[..200.min(chart.len())]
    );
    assert!(stdout.contains("The model, not measured"), "{stdout}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn interrupted_sweep_keeps_its_points() {
    let dir = scratch("interrupt");
    let (csv, svg) = (dir.join("s.csv"), dir.join("s.svg"));
    // 5 variants x 64 slot counts x 0.25 s: far more than the test needs before it interrupts (so
    // the signal cannot come after the end, whatever the machine's load).
    let child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(words_and(
            "sweep --threads 1 \
            --variants sched-lock,queue-lock,epoch,debug-off,no-stats \
            --duration 0.2 --lockstat-duration 0.05 --sweep-slots 1-64 \
            --ramp 0 --retries 0 --transfer-ns 34 --csv",
            &[csv.to_str().unwrap(), "--svg", svg.to_str().unwrap()],
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = child;
    // Waits for the first point (an event, not a time: the CSV appears whole, by rename).
    while std::fs::read_to_string(&csv).map_or(0, |t| t.lines().count()) < 2 {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the sweep ended ({status}) before its first point");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows = text.lines().count() - 1;
    assert!((1..320).contains(&rows), "kept {rows} points:\n{text}");
    assert!(text.ends_with('\n'), "no half-written row");
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"), "a chart of what finished");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn run_with_lockstat_prints_and_writes_the_lock_table() {
    let dir = scratch("run");
    let json = dir.join("r.json");
    let out = schedlab(&words_and(
        "run --variant queue-lock --duration 0.3 --lockstat --json",
        &[json.to_str().unwrap()],
    ));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("queue")
            && stdout.contains("stats-sum")
            && stdout.contains("owner changes"),
        "{stdout}"
    );
    // Sampled holds are marked as estimates: the notes say so, the holds table says one in how
    // many.
    let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("estimated from sampled waits and holds") && flat.contains("timed one in"),
        "{stdout}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let queue = v["locks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "queue")
        .expect("the queue lock");
    assert_eq!(queue["hold_exact"], false);
    assert!(queue["holds_timed"].as_u64().unwrap() <= queue["acquisitions"].as_u64().unwrap());
    // Exact mode: every hold timed, the sampled estimate of the same holds beside it.
    let out =
        schedlab(&["run", "--variant", "sched-lock", "--duration", "0.3", "--lockstat", "exact"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Locks: the sampled mode's estimate beside the exact figures"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_compare_and_sweep_input_is_one_line_and_exit_code_2() {
    let cases: &[&[&str]] = &[
        &["compare", "--lock", "mcs"],
        &["compare", "--rounds", "0"],
        &["compare", "--threads", "0"],
        &["compare", "--include-unlocked", "--churn", "5"],
        &["compare", "--variants", "sched-lock,nonsense"],
        &["compare", "--measure", "sometimes"],
        &["compare", "--lockstat-mode", "sometimes"],
        &["run", "--variant", "epoch", "--lockstat", "sometimes"],
        &["roundtrip", "--lockstat", "sometimes"],
        &["compare", "--duration", "-1"],
        &["compare", "--sum-sampling", "0"],
        &["sweep", "--threads", "0"],
        &["sweep", "--threads", "4096"],
        &["sweep", "--threads", "2-1"],
        &["sweep", "--sweep-slots", "100"],
        &["sweep", "--lock", "both", "--rw", "sideways"],
        &["sweep", "--transfer-ns", "-3"],
        &["compare", "--retries", "11"],
        &["sweep", "--max-other-cpus", "-1"],
    ];
    for args in cases {
        let out = schedlab(args);
        assert_bad_input(args, &out);
    }
}

/// The arguments of a quick comparison of sched-lock, no-stats and epoch (a ratio of each to
/// sched-lock, and a seed's ratio between the two others where one is registered).
const QUICK_BUILDS: [&str; 14] = [
    "compare",
    "--placement",
    "pool",
    "--threads",
    "1",
    "--variants",
    "sched-lock,no-stats,epoch",
    "--lock",
    "parking-lot",
    "--duration",
    "0.05",
    "--ramp",
    "0",
    "--retries",
];

#[test]
fn compare_against_an_old_build_gives_every_ratio_a_change_and_a_verdict() {
    let dir = scratch("old-build");
    let json = dir.join("builds.json");
    let old = env!("CARGO_BIN_EXE_schedlab");
    let args = [&QUICK_BUILDS[..], &["0", "--rounds", "6", "--baseline", old]].concat();
    let out = schedlab(&[&args[..], &["--json", json.to_str().unwrap()]].concat());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("Against the baseline build"), "{stdout}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["config"]["measure"], "plain", "an old build takes plain runs");
    assert_eq!(v["failures"].as_array().map(Vec::len), Some(0), "{:#}", v["failures"]);
    let b = &v["builds"];
    assert_eq!(b["baseline_exe"], old);
    assert!(b["baseline_version"].as_str().is_some_and(|s| s.starts_with("schedlab ")), "{b:#}");
    let changes = b["changes"].as_array().expect("builds.changes[]");
    // Every ratio the report gives a variant against sched-lock has its change.
    let ratios: Vec<String> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["variant"] != "sched-lock")
        .map(|r| format!("{} ÷ sched-lock", r["variant"].as_str().unwrap()))
        .collect();
    assert_eq!(ratios.len(), 2);
    for ratio in &ratios {
        assert!(changes.iter().any(|c| c["ratio"] == ratio.as_str()), "{ratio}: {b:#}");
    }
    for c in changes {
        assert_eq!(c["lock"], "parking-lot", "{c:#}");
        assert_eq!(c["rounds"], 6, "paired in every round: {c:#}");
        assert!(c["change"].is_f64(), "{c:#}");
        assert!(c["interval"]["lo"].is_f64() && c["interval"]["hi"].is_f64(), "{c:#}");
        let verdict = c["verdict"].as_str().unwrap_or_default();
        let verdicts = ["improved", "regressed", "no-change", "inconclusive"];
        assert!(judged_or_disturbed(&v, &verdicts, verdict), "{c:#}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_old_build_that_cannot_serve_is_one_line_and_exit_code_2_before_any_run() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("bad-old-build");
    let script = |name: &str, body: &str| {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    };
    let not_executable = dir.join("schedlab-644");
    std::fs::copy(env!("CARGO_BIN_EXE_schedlab"), &not_executable).unwrap();
    std::fs::set_permissions(&not_executable, std::fs::Permissions::from_mode(0o644)).unwrap();
    let not_schedlab = script("hello", "echo hello");
    // A schedlab by its --version, whose `run --json` is of a schema version this build lacks.
    let unreadable = script(
        "schedlab-v9",
        "[ \"$1\" = --version ] && { echo 'schedlab 9.9.9'; exit 0; }\n\
         while [ $# -gt 0 ]; do [ \"$1\" = --json ] && out=$2; shift; done\n\
         echo '{\"schema\": \"schedlab-run\", \"schema_version\": 9}' > \"$out\"",
    );
    // One that refuses the runs' arguments, as an older build refuses a newer flag.
    let refusing = script(
        "schedlab-old",
        "[ \"$1\" = --version ] && { echo 'schedlab 0.0.1'; exit 0; }\n\
         echo 'schedlab: unexpected argument --kernel' >&2; exit 2",
    );
    let fixture = Path::new(BASELINE);
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let quick = |extra: &[String]| -> Vec<String> {
        let base = QUICK_BUILDS.iter().map(|s| s.to_string()).chain(["0".to_string()]);
        base.chain(extra.iter().cloned()).collect()
    };
    let baseline = |p: &Path| quick(&["--baseline".into(), path(p)]);
    let cases: Vec<(Vec<String>, &str)> = vec![
        (baseline(&not_executable), "not executable"),
        (baseline(&not_schedlab), "is not a schedlab"),
        (baseline(&unreadable), "cannot read its `run --json`"),
        (baseline(&refusing), "unexpected argument --kernel"),
        (
            quick(&["--baseline".into(), path(&not_schedlab), "--baseline".into(), path(fixture)]),
            "give it alone",
        ),
        (
            quick(&[
                "--baseline".into(),
                env!("CARGO_BIN_EXE_schedlab").into(),
                "--measure".into(),
                "lockstat".into(),
            ]),
            "--measure plain",
        ),
    ];
    for (args, said) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_refused_saying(&args, said);
    }
    std::fs::remove_dir_all(&dir).ok();
}

//! `schedlab predict` as a user meets it: from a calibration file and a topology profile the
//! prediction is the same every time; its outputs; bad input is one line and exit code 2 before
//! any work; and a short calibration and validation here (no figure is checked: the machine's load
//! decides them).

use std::path::PathBuf;

mod invoke;
use invoke::{assert_bad_input, schedlab, words_and};

fn repo(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path).to_str().unwrap().to_string()
}

/// The committed calibration of this machine kind and the seeds' profile.
fn files() -> (String, String) {
    (
        repo("notes/results/2026-12-01-predict/calibration.json"),
        repo("notes/topology/i7-4850hq.json"),
    )
}

/// stdout without the provenance line (it holds the date).
fn body(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with("commit "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_prediction_from_files_is_the_same_every_time_and_changes_with_the_seed() {
    let (cal, topo) = files();
    let from_files = ["--calibration", &cal, "--topology", &topo];
    let args = words_and(
        "predict --lock both --threads 1,4,8 --variants sched-lock,no-stats",
        &from_files,
    );
    let a = schedlab(&args);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let b = schedlab(&args);
    assert_eq!(body(&a), body(&b));
    let text = body(&a);
    assert!(text.contains("MODEL, not measured"), "{text}");
    assert!(text.contains("i7-4850HQ"), "{text}");
    let ratio = text.lines().find(|l| l.starts_with("no stats")).unwrap_or_default();
    assert!(
        ratio.trim_end().ends_with(" 1.55"),
        "the seeds' ratio is set beside the prediction: {text}"
    );
    let mut seeded = args.clone();
    seeded.extend(["--seed", "2"]);
    let c = schedlab(&seeded);
    assert!(c.status.success());
    assert_ne!(body(&a), body(&c), "another seed draws other section lengths");
}

#[test]
fn the_json_holds_the_inputs_and_every_point() {
    let (cal, topo) = files();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("p.json");
    let out = schedlab(&words_and(
        "predict --lock fair-spin --threads 2,8 --variants queue-lock --outside-list 0,1000",
        &["--calibration", &cal, "--topology", &topo, "--json", json.to_str().unwrap()],
    ));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let points = v["predictions"].as_array().unwrap();
    assert_eq!(points.len(), 4, "2 thread counts × 2 outside works");
    for p in points {
        assert_eq!(p["variant"], "queue-lock");
        assert!(p["kiops"].as_f64().unwrap() > 0.0);
        let b = &p["breakdown"];
        for k in ["hold_ns", "handoff_ns", "wait_ns", "outside_ns"] {
            assert!(b[k].as_f64().unwrap() >= 0.0, "{k}");
        }
    }
    assert_eq!(v["topology"]["cores"], 4);
    assert!(v["provenance"]["commit"].is_string());
    assert!(v["validation"].is_null());
}

#[test]
fn bad_input_is_one_line_and_exit_code_2() {
    let (cal, topo) = files();
    let dir = tempfile::tempdir().unwrap();
    let not_a_profile = dir.path().join("bad.json");
    std::fs::write(&not_a_profile, "{\"cores\": \"many\"}").unwrap();
    let np = not_a_profile.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["predict", "--threads", "0", "--calibration", &cal],
        vec!["predict", "--threads", "x", "--calibration", &cal],
        vec!["predict", "--lock", "nope", "--calibration", &cal],
        vec!["predict", "--variants", "nope", "--calibration", &cal],
        vec!["predict", "--topology", "/nonexistent/t.json"],
        vec!["predict", "--topology", np],
        vec!["predict", "--calibration", np],
        vec!["predict", "--calibration", &cal, "--topology", &topo, "--threads", "9"],
        vec!["predict", "--calibration", &cal, "--iodepth", "4"],
        vec!["predict", "--calibration", &cal, "--churn", "5"],
        vec!["predict", "--calibration", &cal, "--slice-idle-ns", "1000"],
        vec!["predict", "--calibration", &cal, "--outside-list", "5-1"],
        vec!["predict", "--calibration", &cal, "--variants", "unlocked"],
        vec!["predict", "--calibration", &cal, "--validate", "--threads", "1-1024"],
        vec!["predict", "--calibration", &cal, "--json", "/nonexistent/dir/p.json"],
    ];
    for args in cases {
        let out = schedlab(&args);
        assert_bad_input(&args, &out);
    }
}

#[test]
fn calibrating_and_validating_here_prints_measured_beside_predicted() {
    // One variant, one lock, one short round: the plumbing, not the figures.
    let dir = tempfile::tempdir().unwrap();
    let cal = dir.path().join("c.json");
    let json = dir.path().join("p.json");
    let out = schedlab(&words_and(
        "predict --validate --variants no-stats --lock parking-lot \
        --threads 1 --outside-list 0 --rounds 1 --duration 0.2 --ramp 0 \
        --retries 0 --calibration-windows 1 --calibration-rounds 300 \
        --save-calibration",
        &[cal.to_str().unwrap(), "--json", json.to_str().unwrap()],
    ));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{text}", String::from_utf8_lossy(&out.stderr));
    for table in
        ["Validation: measured beside predicted", "Validation: the error", "Validation: the goal"]
    {
        assert!(text.contains(table) && text.contains("no-stats"), "{table}: {text}");
    }
    // Issue 42, item 1: each measured point has its intervals and its judgement in the JSON
    // (null, with the reason, from one round); the median |error| says what it rests on.
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let row = &report["validation"]["rows"][0];
    for key in ["measured_interval", "error_interval_pct", "no_interval", "within_goal"] {
        assert!(row.get(key).is_some(), "the validation's row lacks {key}: {row}");
    }
    assert_eq!(row["no_interval"], "no interval: fewer than 6 repetitions");
    assert!(report["validation"]["error_basis"].is_string(), "{}", report["validation"]);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&cal).unwrap()).unwrap();
    let c = &v["calibrations"][0];
    assert_eq!(c["variant"], "no-stats");
    assert_eq!(c["lock"], "parking-lot");
    assert!(c["solo_cycle_ns"].as_f64().unwrap() > 0.0);
    assert!(v["machine"]["cores"].as_u64().unwrap() >= 1);
}

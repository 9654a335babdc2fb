//! `--report PATH.html` as an output like any other (no browser needed): refused before any work
//! when it cannot be written or names another output's file (exit 2), an output failure when the
//! write fails after the work (exit 3), and a page that holds the command line and the tables.

mod invoke;
use invoke::{schedlab, words_and};

#[test]
fn a_report_in_a_missing_directory_is_refused_before_the_work() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no/such/dir/r.html");
    let out = schedlab(&["simulate", "--runtime", "0.1", "--report", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "no work was done: {}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_report_naming_the_json_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("same");
    let p = path.to_str().unwrap();
    let out = schedlab(&["simulate", "--runtime", "0.1", "--json", p, "--report", p]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).lines().count() == 1);
}

#[test]
fn a_report_that_cannot_be_written_is_an_output_failure() {
    if !std::path::Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full");
        return;
    }
    let out = schedlab(&["simulate", "--runtime", "0.1", "--report", "/dev/full"]);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("wrote"));
}

#[test]
fn a_report_holds_the_command_line_and_the_tables() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.html");
    let p = path.to_str().unwrap();
    let out = schedlab(&words_and(
        "roundtrip --rounds 1 --iterations 100 --variant sched-lock \
        --report",
        &[p],
    ));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.ends_with(&format!("wrote {p}\n")), "{stdout}");
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains(&format!("--report {p}")), "the command line");
    assert!(
        html.contains("<table class=\"data\">")
            && html.contains("<td class=\"word\">sched-lock</td>"),
        "the table, as a table"
    );
    assert!(
        html.contains("<th title=\"click to sort\" data-unit=\"ns\">median (ns)</th>"),
        "units in the header"
    );
    // The one script is the page's own column sorting: nothing is fetched, nothing else runs.
    assert_eq!(html.matches("<script").count(), 1, "one script");
    assert!(
        html.contains("<script>document.querySelectorAll('table.data')")
            && !html.contains("<script src")
    );
    // The same run's table as printed, escaped the same way.
    let first = stdout.lines().next().unwrap();
    assert!(
        html.contains(&first.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")),
        "{first}"
    );
}

#[test]
fn a_report_lists_the_warnings_the_run_printed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.html");
    // More fair-lock jobs than CPUs: the run warns before it starts, whatever the machine.
    let threads =
        (2 * std::thread::available_parallelism().map_or(1, |n| n.get())).min(64).to_string();
    let out = schedlab(&[
        "run",
        "--variant",
        "sched-lock",
        "--threads",
        &threads,
        "--duration",
        "0.05",
        "--report",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warning = stderr
        .lines()
        .find_map(|l| l.strip_prefix("schedlab: warning: "))
        .unwrap_or_else(|| panic!("no warning: {stderr}"));
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.contains("<h2>Read this first</h2>"), "the warnings box at the top");
    let shown = warning.split(':').next().unwrap();
    assert!(html.contains(&format!("<li>warning: {shown}")), "{shown} not in {html}");
}

/// Issue 42, item 1: every ratio sweep and roundtrip report carries its interval in the JSON,
/// `null` with its reason where it is not estimable. Structure only: no figure is checked.
#[test]
fn the_json_of_sweep_and_roundtrip_carries_each_ratios_interval() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let p = path.to_str().unwrap();
    let (csv, svg) = (dir.path().join("s.csv"), dir.path().join("s.svg"));
    let sweep = words_and(
        "sweep --threads 1 --variants sched-lock,no-stats --rounds 3 \
        --duration 0.05 --ramp 0 --retries 0 --lockstat-duration 0 \
        --json",
        &[p, "--csv", csv.to_str().unwrap(), "--svg", svg.to_str().unwrap()],
    );
    let out = schedlab(&sweep);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(v["reference"], "sched-lock");
    let ratio = &v["ratios"][0];
    assert_eq!(ratio["variant"], "no-stats");
    for key in ["ratio", "interval", "no_interval"] {
        assert!(ratio.get(key).is_some(), "sweep's ratio lacks {key}: {ratio}");
    }
    let either = ratio["interval"].is_object() != ratio["no_interval"].is_string();
    assert!(either, "an interval or why not: {ratio}");
    assert_eq!(v["points"].as_array().unwrap().len(), 6, "two variants, three rounds");
    let header = std::fs::read_to_string(&csv).unwrap().lines().next().unwrap().to_string();
    assert!(header.contains(",reruns,round,"), "each CSV row names its round: {header}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Ratios to sched-lock") && text.contains("95% low (×)"), "{text}");

    let path = dir.path().join("r.json");
    let p = path.to_str().unwrap();
    let out = schedlab(&["roundtrip", "--rounds", "2", "--iterations", "100", "--json", p]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let first = &v["variants"][0];
    let keys = ["vs_no_stats", "vs_no_stats_interval", "lockstat_cost_interval_pct", "no_interval"];
    for key in keys {
        assert!(first.get(key).is_some(), "roundtrip's variant lacks {key}: {first}");
    }
    assert!(first["vs_no_stats_interval"].is_null(), "two rounds: no interval");
    assert_eq!(first["no_interval"], "no interval: fewer than 6 rounds");
}

//! The charts' outputs end to end: `--svg PATH` on compare, roundtrip and simulate writes an SVG
//! that carries its provenance line and every variant it measured, says `wrote PATH`; predict
//! refuses `--svg` without `--validate` before any work.

use std::path::Path;

mod invoke;
use invoke::{schedlab, words};

/// Runs the command, checks it succeeded and said `wrote PATH`, and returns the SVG's text.
fn chart(args: &[&str], svg: &Path) -> String {
    let out = schedlab(args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{args:?}: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(&format!("wrote {}", svg.display())), "{stdout}");
    let text = std::fs::read_to_string(svg).expect("the chart was written");
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"), "not an SVG document");
    assert!(text.contains("commit ") && text.contains(" CPUs ("), "no provenance line");
    text
}

#[test]
fn compare_roundtrip_and_simulate_write_their_charts() {
    let dir = tempfile::tempdir().unwrap();
    let (c, r, s) = (dir.path().join("c.svg"), dir.path().join("r.svg"), dir.path().join("s.svg"));
    let compare = words(
        "compare --placement pool --threads 1 --rounds 1 \
        --variants no-stats,sched-lock --duration 0.05 --ramp 0 \
        --retries 0 --svg",
    );
    let text = chart(&[&compare[..], &[c.to_str().unwrap()]].concat(), &c);
    for name in ["no-stats", "sched-lock", "lock fair-spin", "KIOPS per variant"] {
        assert!(text.contains(name), "compare's chart lacks {name}");
    }
    let text = chart(
        &["roundtrip", "--rounds", "1", "--iterations", "2000", "--svg", r.to_str().unwrap()],
        &r,
    );
    for name in ["sched-lock", "no-stats", "epoch"] {
        assert!(text.contains(name), "roundtrip's chart lacks {name}");
    }
    let text = chart(&["simulate", "--runtime", "0.01", "--svg", s.to_str().unwrap()], &s);
    assert!(
        text.contains("seed: cloud SSD, idling on") && text.contains("sim ssd"),
        "simulate's chart lacks the seed or the run"
    );
}

#[test]
fn predict_refuses_a_chart_without_validation() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.svg");
    let out = schedlab(&["predict", "--svg", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--validate"));
    assert!(!p.exists(), "nothing written");
}

#[test]
fn an_svg_path_that_cannot_be_written_is_refused_before_any_work() {
    let out = schedlab(&["simulate", "--runtime", "0.01", "--svg", "/nonexistent-dir/s.svg"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("IOPS="), "the simulation did not run");
}

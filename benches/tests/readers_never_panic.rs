//! Property tests of every reader of files a user hands the tool (issue 26, item 6): a trace, a
//! folded-stacks file, a sweep's CSV, a topology and a calibration. Arbitrary bytes, and valid
//! files with some of their numbers replaced by arbitrary ones (negative, zero, huge, tiny), never
//! panic and never hang: each reader answers `Ok` or a one-line `Err`. A topology and a
//! calibration that are accepted must also give a prediction that ends (a degenerate model, e.g.
//! every segment 0 ns, used to be accepted and simulate forever); proptest's per-case timeout
//! turns a hang into a failure.

use proptest::prelude::*;
use schedlab_benches::driver::profile::Folded;
use schedlab_benches::experiment::sweep::parse_csv;
use schedlab_benches::files::trace_check;
use schedlab_benches::model::{predict_one, topology::Topology, CalibrationSet, PredictSettings};
use std::path::Path;

const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../notes/results");

fn seed(rel: &str) -> String {
    std::fs::read_to_string(Path::new(SEEDS).join(rel)).expect("a seed file")
}

/// A small valid trace: two threads, nested slices, a lock hold and a wait.
const TRACE: &str = r#"[
{"ph":"M","name":"thread_name","tid":1,"args":{"name":"job 0"}},
{"ph":"B","name":"insert","cat":"path","tid":1,"ts":1.0},
{"ph":"B","name":"sched lock: wait","cat":"lock","tid":1,"ts":1.5},
{"ph":"E","name":"sched lock: wait","cat":"lock","tid":1,"ts":2.0},
{"ph":"B","name":"sched lock: hold","cat":"lock","tid":1,"ts":2.0},
{"ph":"E","name":"sched lock: hold","cat":"lock","tid":1,"ts":3.0},
{"ph":"E","name":"insert","cat":"path","tid":1,"ts":3.5},
{"ph":"B","name":"sched lock: hold","cat":"lock","tid":2,"ts":3.1},
{"ph":"E","name":"sched lock: hold","cat":"lock","tid":2,"ts":4.0},
{"ph":"i","name":"run interrupted","tid":2,"ts":5.0}
]"#;

/// Replaces the numbers of `value` at the given leaf positions (modulo their count) with the
/// given values; a value JSON cannot hold (NaN, infinite) becomes `null`.
fn mutate(value: &mut serde_json::Value, edits: &[(usize, f64)]) {
    fn leaves<'a>(v: &'a mut serde_json::Value, out: &mut Vec<&'a mut serde_json::Value>) {
        match v {
            serde_json::Value::Number(_) => out.push(v),
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| leaves(x, out)),
            serde_json::Value::Object(o) => o.values_mut().for_each(|x| leaves(x, out)),
            _ => {}
        }
    }
    let mut numbers = Vec::new();
    leaves(value, &mut numbers);
    if numbers.is_empty() {
        return;
    }
    let count = numbers.len();
    for &(at, x) in edits {
        let slot = &mut numbers[at % count];
        **slot = if x.fract() == 0.0 && x.abs() < 1e15 {
            serde_json::json!(x as i64)
        } else {
            serde_json::json!(x)
        };
    }
}

/// Numbers that break models: zero, negative, tiny, huge, and ordinary ones.
fn awkward_number() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(-1.0),
        Just(1e-300),
        Just(1e300),
        Just(u64::MAX as f64),
        -1e6f64..1e6,
        0.0f64..1e4,
    ]
}

fn edits() -> impl Strategy<Value = Vec<(usize, f64)>> {
    prop::collection::vec((any::<usize>(), awkward_number()), 1..6)
}

fn write_temp(dir: &tempfile::TempDir, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn one_line(e: &str) {
    assert!(!e.is_empty() && !e.contains('\n'), "an error is one line: {e:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, timeout: 60_000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic_any_reader(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let text = String::from_utf8_lossy(&bytes);
        if let Err(e) = trace_check::parse(&text) { prop_assert!(!e.to_string().is_empty()); }
        let _ = Folded::from_text(&text);
        let _ = parse_csv(&text, &["threads=2".to_string()]);
        let dir = tempfile::tempdir().unwrap();
        let path = write_temp(&dir, "x.json", &text);
        if let Err(e) = Topology::load(&path) { one_line(&e.message); }
        if let Err(e) = CalibrationSet::load(&path) { one_line(&e.message); }
    }

    #[test]
    fn a_trace_with_awkward_numbers_is_read_or_refused(edits in edits()) {
        let mut value: serde_json::Value = serde_json::from_str(TRACE).unwrap();
        mutate(&mut value, &edits);
        if let Ok(trace) = trace_check::parse(&value.to_string()) {
            let _ = trace_check::overview(&trace);
            let _ = trace_check::lock_reports(&trace);
            let from = trace_check::busiest_window(&trace, 100.0);
            let _ = trace_check::excerpt_svg(&trace, from, 100.0, "t");
        }
    }

    #[test]
    fn a_sweep_csv_with_a_damaged_row_is_read_or_refused(cut in 0usize..4061, junk in "[0-9a-z,.\\-]{0,40}") {
        let csv = seed("2026-11-29-seed-table/sweep.csv");
        let at = csv.char_indices().map(|(i, _)| i).find(|&i| i >= cut % csv.len().max(1)).unwrap_or(0);
        let damaged = format!("{}{}{}", &csv[..at], junk, &csv[at..]);
        let _ = parse_csv(&damaged, &[]);
    }

    #[test]
    fn an_accepted_model_gives_a_prediction_that_ends(topology_edits in edits(), calibration_edits in edits()) {
        let dir = tempfile::tempdir().unwrap();
        let mut topology: serde_json::Value = serde_json::from_str(&seed("2026-12-01-predict/topology-3f2494e.json")).unwrap();
        mutate(&mut topology, &topology_edits);
        let mut calibration: serde_json::Value = serde_json::from_str(&seed("2026-12-01-predict/calibration-3f2494e.json")).unwrap();
        mutate(&mut calibration, &calibration_edits);
        let topology = Topology::load(&write_temp(&dir, "t.json", &topology.to_string()));
        let calibration = CalibrationSet::load(&write_temp(&dir, "c.json", &calibration.to_string()));
        if let Err(e) = &topology { one_line(&e.message); }
        if let Err(e) = &calibration { one_line(&e.message); }
        if let (Ok(topology), Ok(set)) = (topology, calibration) {
            let Some(cal) = set.calibrations.first() else { return Ok(()) };
            let settings = PredictSettings { seed: 1, ..Default::default() };
            if let Err(e) = predict_one(cal, &topology, &[1, 2], settings) { one_line(&e.message); }
        }
    }
}

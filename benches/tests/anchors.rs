//! The held-out anchors of `schedlab predict` (`notes/anchors.json`, issue 41 item 4) as a
//! checked file: every anchor names its source, its set-up and positive published figures; an
//! anchor the model represents names a topology profile and a calibration that load, a kernel
//! profile the calibration was measured with (said in the file, not defaulted), registered
//! variants on known insert paths, a lock kind, and no more jobs than the profile has CPUs (the
//! model runs one job per CPU); an anchor the model cannot represent says why.
//! `scripts/predict-anchors.py` reads the same file and trusts these checks.
//!
//! Generated over the file: every anchor is checked, and every field of one anchor of each kind
//! is broken in turn (dropped, or given a value the checks must refuse) to show that the checks
//! catch it.

use schedlab_benches::model::topology::Topology;
use schedlab_benches::model::{predict_one, CalibrationSet, PredictSettings};
use schedlab_core::{InsertPathKind, KernelProfile, LockKind};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The anchors file's shape; unknown fields are refused so that a misspelt one is not skipped.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // `about` is read by people, `notes` by the page.
struct AnchorsFile {
    about: String,
    anchors: Vec<Anchor>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Anchor {
    name: String,
    change: String,
    source: String,
    setup: String,
    published: Published,
    model: Option<Model>,
    not_represented: Vec<String>,
    notes: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Published {
    before: f64,
    after: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Model {
    topology: PathBuf,
    calibration: PathBuf,
    kernel: String,
    jobs: usize,
    lock: String,
    outside_ns: u64,
    before: Side,
    after: Side,
}

#[derive(Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Side {
    variant: String,
    insert: String,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn anchors_json() -> Value {
    let path = repo().join("notes/anchors.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The files an anchor names, each read once per test (a calibration is a few hundred KiB).
#[derive(Default)]
struct Files {
    topologies: HashMap<PathBuf, Result<Topology, String>>,
    calibrations: HashMap<PathBuf, Result<(CalibrationSet, Value), String>>,
}

impl Files {
    fn topology(&mut self, path: &Path) -> &Result<Topology, String> {
        self.topologies
            .entry(path.to_path_buf())
            .or_insert_with(|| Topology::load(&repo().join(path)).map_err(|e| e.message))
    }

    /// The calibration set and its raw JSON (to see whether each entry says its kernel profile).
    fn calibration(&mut self, path: &Path) -> &Result<(CalibrationSet, Value), String> {
        self.calibrations.entry(path.to_path_buf()).or_insert_with(|| {
            let full = repo().join(path);
            let set = CalibrationSet::load(&full).map_err(|e| e.message)?;
            let text = std::fs::read_to_string(&full).map_err(|e| e.to_string())?;
            let raw = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            Ok((set, raw))
        })
    }
}

/// What is wrong with one anchor (its JSON), empty when nothing is.
fn problems(anchor: &Value, files: &mut Files) -> Vec<String> {
    // serde reads a missing `Option` as `None`: a dropped `model` must not pass for "not
    // represented".
    if anchor.get("model").is_none() {
        return vec!["no `model` (null when the model cannot represent the change)".into()];
    }
    let anchor: Anchor = match serde_json::from_value(anchor.clone()) {
        Ok(a) => a,
        Err(e) => return vec![format!("not an anchor: {e}")],
    };
    let mut out = Vec::new();
    let name = anchor.name.clone();
    for (field, text) in [
        ("name", &anchor.name),
        ("change", &anchor.change),
        ("source", &anchor.source),
        ("setup", &anchor.setup),
    ] {
        if text.trim().is_empty() {
            out.push(format!("{name}: `{field}` is empty"));
        }
    }
    let p = &anchor.published;
    if !(p.before.is_finite() && p.before > 0.0 && p.after.is_finite() && p.after > 0.0) {
        out.push(format!(
            "{name}: published figures must be positive: {} -> {}",
            p.before, p.after
        ));
    }
    let Some(m) = &anchor.model else {
        if anchor.not_represented.iter().all(|why| why.trim().is_empty()) {
            out.push(format!("{name}: no model and no reason in `not_represented`"));
        }
        return out;
    };
    let kernel = KernelProfile::from_name(&m.kernel);
    if kernel.is_none() {
        out.push(format!("{name}: unknown kernel profile `{}`", m.kernel));
    }
    let lock = LockKind::from_name(&m.lock);
    if lock.is_none() {
        out.push(format!("{name}: unknown lock kind `{}`", m.lock));
    }
    if m.before == m.after {
        out.push(format!("{name}: before and after are the same entry"));
    }
    if m.outside_ns > 1_000_000_000 {
        out.push(format!("{name}: outside work {} ns is over predict's range", m.outside_ns));
    }
    match files.topology(&m.topology) {
        Err(e) => out.push(format!("{name}: topology {}: {e}", m.topology.display())),
        Ok(t) if m.jobs == 0 || m.jobs > t.cpus() => {
            out.push(format!(
                "{name}: {} jobs on `{}`, which has {} CPUs (one job per CPU)",
                m.jobs,
                t.name,
                t.cpus()
            ));
        }
        Ok(_) => {}
    }
    let sides = [("before", &m.before), ("after", &m.after)];
    for (which, side) in sides {
        if schedlab_variants::info(&side.variant).is_none() {
            out.push(format!("{name}: {which}: `{}` is not a registered variant", side.variant));
        }
        if InsertPathKind::from_name(&side.insert).is_none() {
            out.push(format!("{name}: {which}: unknown insert path `{}`", side.insert));
        }
    }
    match files.calibration(&m.calibration) {
        Err(e) => out.push(format!("{name}: calibration {}: {e}", m.calibration.display())),
        Ok((set, raw)) => {
            for (which, side) in sides {
                let (Some(lock), Some(insert)) = (lock, InsertPathKind::from_name(&side.insert))
                else {
                    continue;
                };
                if set.find(&side.variant, lock, insert).is_none() {
                    out.push(format!(
                        "{name}: {which}: {} has no calibration of {} on {lock} ({insert})",
                        m.calibration.display(),
                        side.variant
                    ));
                    continue;
                }
                // The entry's own word for its kernel profile: a file from before profiles
                // existed reads as 4.12 but was measured without the bio merge.
                let said = raw["calibrations"].as_array().into_iter().flatten().find(|c| {
                    c["variant"] == side.variant.as_str()
                        && c["lock"] == lock.name()
                        && c["insert"] == insert.name()
                });
                let said = said.and_then(|c| c.get("kernel")).and_then(Value::as_str);
                if said != kernel.map(KernelProfile::name) {
                    let wanted = &m.kernel;
                    out.push(format!(
                        "{name}: {which}: calibrated with kernel profile {said:?}, not `{wanted}`"
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn every_anchor_is_well_formed_and_its_files_load() {
    let file = anchors_json();
    let parsed: Result<AnchorsFile, _> = serde_json::from_value(file.clone());
    if let Err(e) = parsed {
        panic!("notes/anchors.json: {e}");
    }
    let anchors = file["anchors"].as_array().expect("an `anchors` list");
    let mut files = Files::default();
    let wrong: Vec<String> = anchors.iter().flat_map(|a| problems(a, &mut files)).collect();
    assert!(wrong.is_empty(), "notes/anchors.json:\n{}", wrong.join("\n"));
    let names: BTreeSet<&str> = anchors.iter().filter_map(|a| a["name"].as_str()).collect();
    assert_eq!(names.len(), anchors.len(), "every anchor's name is its own");
    assert!(anchors.iter().any(|a| !a["model"].is_null()), "at least one anchor is predicted");
}

/// Copies of `anchor`, each broken in one way the checks must catch: every field dropped in
/// turn, and the values that name a file, a profile, a variant or a figure made wrong.
fn broken(anchor: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let represented = !anchor["model"].is_null();
    for key in anchor.as_object().expect("an anchor is an object").keys() {
        let mut a = anchor.clone();
        a.as_object_mut().unwrap().remove(key);
        out.push((format!("without `{key}`"), a));
    }
    if represented {
        for key in anchor["model"].as_object().unwrap().keys() {
            let mut a = anchor.clone();
            a["model"].as_object_mut().unwrap().remove(key);
            out.push((format!("a model without `{key}`"), a));
        }
    }
    let mut misspelt = anchor.clone();
    misspelt["note"] = serde_json::json!(["a field the file does not define"]);
    out.push(("an unknown field".to_string(), misspelt));
    let mut unexplained = anchor.clone();
    unexplained["model"] = Value::Null;
    unexplained["not_represented"] = serde_json::json!([]);
    out.push(("no model and no reason it is not represented".to_string(), unexplained));
    let mut set = |what: &str, pointer: &str, value: Value| {
        let mut a = anchor.clone();
        let slot = a.pointer_mut(pointer).unwrap_or_else(|| panic!("{what}: no {pointer}"));
        *slot = value;
        out.push((what.to_string(), a));
    };
    set("an empty source", "/source", "".into());
    set("no published before", "/published/before", 0.into());
    set("a negative published after", "/published/after", (-1).into());
    if represented {
        set(
            "a missing topology file",
            "/model/topology",
            "notes/topology/no-such-machine.json".into(),
        );
        set("a file that is not a topology", "/model/topology", "notes/anchors.json".into());
        set(
            "a missing calibration file",
            "/model/calibration",
            "notes/results/no-such-calibration.json".into(),
        );
        // Measured before kernel profiles existed (no bio merge): read as 4.12, said by none.
        let unprofiled = "notes/results/2026-12-01-predict/calibration.json";
        set("a calibration from before kernel profiles", "/model/calibration", unprofiled.into());
        set("an unknown kernel profile", "/model/kernel", "5.0".into());
        let other = if anchor["model"]["kernel"] == "6.18" { "4.12" } else { "6.18" };
        set("another kernel profile than the calibration's", "/model/kernel", other.into());
        set("an unknown lock kind", "/model/lock", "mcs".into());
        set("no jobs", "/model/jobs", 0.into());
        set("more jobs than CPUs", "/model/jobs", 100_000.into());
        set("an unknown variant", "/model/after/variant", "nope".into());
        set("a variant the calibration lacks", "/model/before/variant", "unlocked".into());
        set("an unknown insert path", "/model/before/insert", "sideways".into());
        set("the same entry before and after", "/model/after", anchor["model"]["before"].clone());
    }
    out
}

#[test]
fn every_broken_field_of_an_anchor_is_caught() {
    let file = anchors_json();
    let anchors = file["anchors"].as_array().expect("an `anchors` list");
    // One anchor of each kind: predicted, and not represented.
    let kinds = [
        anchors.iter().find(|a| !a["model"].is_null()),
        anchors.iter().find(|a| a["model"].is_null()),
    ];
    let mut files = Files::default();
    let mut tried = 0;
    for anchor in kinds.into_iter().flatten() {
        assert!(problems(anchor, &mut files).is_empty(), "the anchor to break is sound: {anchor}");
        for (what, copy) in broken(anchor) {
            tried += 1;
            assert!(
                !problems(&copy, &mut files).is_empty(),
                "{}: {what} was not caught",
                anchor["name"]
            );
        }
    }
    assert!(tried > 20, "only {tried} ways to break an anchor were tried");
}

/// Each represented anchor's two entries simulated at its jobs, as `scripts/predict-anchors.py`
/// asks `schedlab predict` to: both predicted, and the same figure twice for the seed (the page's
/// table is reproducible from the files it names). No figure is checked against the published.
#[test]
fn every_represented_anchor_is_predicted_and_the_same_twice() {
    let file = anchors_json();
    let anchors: AnchorsFile = serde_json::from_value(file).expect("notes/anchors.json");
    let mut predicted = 0;
    for anchor in anchors.anchors {
        let Some(m) = anchor.model else { continue };
        let topology = Topology::load(&repo().join(&m.topology)).expect("its topology");
        let set = CalibrationSet::load(&repo().join(&m.calibration)).expect("its calibration");
        let lock = LockKind::from_name(&m.lock).expect("its lock kind");
        for side in [&m.before, &m.after] {
            let insert = InsertPathKind::from_name(&side.insert).expect("its insert path");
            let cal = set.find(&side.variant, lock, insert).expect("its calibration entry");
            let kiops = || {
                let settings =
                    PredictSettings { outside_ns: m.outside_ns, seed: 1, ..Default::default() };
                let points = predict_one(cal, &topology, &[m.jobs], settings);
                let points = points.unwrap_or_else(|e| panic!("{}: {}", anchor.name, e.message));
                assert_eq!(points.len(), 1, "{}: one point at {} jobs", anchor.name, m.jobs);
                points[0].result.kiops
            };
            let first = kiops();
            assert!(first > 0.0, "{}: {} predicted no throughput", anchor.name, side.variant);
            assert_eq!(
                first,
                kiops(),
                "{}: {} differs between two runs",
                anchor.name,
                side.variant
            );
            predicted += 1;
        }
    }
    assert!(predicted >= 2, "no anchor was predicted");
}

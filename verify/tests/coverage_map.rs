//! The coverage map of the models (issue 35, item 4; `schedlab_verify::coverage`): every
//! generated model of every registered variant (and under shuttle every workload) is run, the
//! core's branch points they reach are collected, and the test fails when a branch point
//! declared in `core/src` is reached by no model of this checker without an argument in
//! `notes/verify.md` ("Branch points no model reaches"), or when an argued one is reached after
//! all (a stale argument); and under loom when a scenario that `notes/verify.md`'s "Three-actor
//! coverage" table names for a deferral site's branch point does not reach it.
//!
//! The models run in this process one after the other, with a smaller exploration than the
//! suite's (loom: preemption bound 1; shuttle: 200 PCT and 200 random schedules): a point reached
//! only deeper would be reported unreached here (the test errs towards failing, never towards
//! passing). Their outcomes are the suite's business (`loom_models`, `shuttle_models`); a model
//! that fails here fails this test too. With `SCHEDLAB_COVERAGE_OUT=path` the map is written
//! there (`scripts/coverage-map.sh` makes the results page from it).
#![cfg(any(loom, shuttle))]

use schedlab_core::sync::{coverage_take, model_with, Exploration};
use schedlab_verify::coverage::{argued, declared, three_actor_table};
use std::collections::BTreeMap;

const CHECKER: &str = if cfg!(loom) { "loom" } else { "shuttle" };

macro_rules! entries {
    ($variant:ty; $($model:ident),* $(,)?) => {
        vec![$((stringify!($model), (|| $crate::models::$model::<$variant>()) as fn())),*]
    };
}

mod models {
    pub use schedlab_verify::scenarios::*;
    #[cfg(shuttle)]
    pub use schedlab_verify::workloads::*;
}

macro_rules! every_model {
    ($($file:literal => $module:ident :: $variant:ident),* $(,)?) => {{
        let mut all: Vec<(String, fn())> = Vec::new();
        $(
            for (name, body) in schedlab_verify::for_each_scenario!(entries, schedlab_variants::$module::$variant) {
                all.push((format!("{}::{}", stringify!($module), name), body));
            }
            #[cfg(shuttle)]
            for (name, body) in schedlab_verify::for_each_workload!(entries, schedlab_variants::$module::$variant) {
                all.push((format!("{}::{}", stringify!($module), name), body));
            }
        )*
        all
    }};
}

#[test]
fn every_branch_point_is_reached_or_argued() {
    let models = schedlab_variants::with_registry!(every_model);
    let exploration =
        Exploration { max_preemptions: Some(1), iterations: 200, ..Exploration::default() };
    let mut reached: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    coverage_take();
    for (name, body) in &models {
        // A model the suite runs below bound 1 (`LOWER_BOUNDS`) runs at that bound here too.
        let bound = schedlab_verify::harness::lower_bound(name).map_or(1, |b| b.min(1));
        model_with(Exploration { max_preemptions: Some(bound), ..exploration }, *body);
        for point in coverage_take() {
            reached.entry(point).or_default().push(name.clone());
        }
    }
    let declared = declared();
    let argued = argued();
    let mut map = String::new();
    let mut unargued = Vec::new();
    let mut stale = Vec::new();
    for (point, file) in &declared {
        let by = reached.get(point.as_str());
        let argued_here = argued.get(point).filter(|(checkers, _)| checkers.contains(CHECKER));
        match (by, argued_here) {
            (Some(models), None) => map.push_str(&format!(
                "{point}\t{file}\treached\t{}\t{}\n",
                models.len(),
                models[0]
            )),
            (Some(models), Some(_)) => {
                map.push_str(&format!(
                    "{point}\t{file}\treached although argued\t{}\t{}\n",
                    models.len(),
                    models[0]
                ));
                stale.push(point.clone());
            }
            (None, Some((_, why))) => map.push_str(&format!("{point}\t{file}\targued\t0\t{why}\n")),
            (None, None) => {
                map.push_str(&format!("{point}\t{file}\tUNREACHED\t0\t\n"));
                unargued.push(format!("{point} ({file})"));
            }
        }
    }
    let undeclared: Vec<_> = reached.keys().filter(|p| !declared.contains_key(**p)).collect();
    // The three-actor table (issue 45, item 1): each scenario named for a deferral site's branch
    // point reaches it here, with some variant's model.
    let mut unreached_rows = Vec::new();
    let mut three_actor_map = String::new();
    for (site, point, scenarios) in three_actor_table() {
        let by = reached.get(point.as_str()).cloned().unwrap_or_default();
        let three: Vec<&String> = by.iter().filter(|m| m.contains("three_actors")).collect();
        let names: Vec<&str> = three.iter().map(|m| m.as_str()).collect();
        three_actor_map.push_str(&format!("{site}\t{point}\t{}\n", names.join(",")));
        for scenario in scenarios {
            if !three.iter().any(|m| m.ends_with(&format!("::{scenario}"))) {
                unreached_rows.push(format!("{site} × {point}: {scenario}"));
            }
        }
    }
    if let Ok(path) = std::env::var("SCHEDLAB_THREE_ACTOR_OUT") {
        std::fs::write(&path, &three_actor_map).expect("writing the three-actor map");
    }
    // Checked under loom (the table's claim); shuttle's sampled schedules only report it.
    if !cfg!(loom) && !unreached_rows.is_empty() {
        let rows = unreached_rows.join("\n");
        println!("{CHECKER}: three-actor rows not reached in this sample:\n{rows}");
    }
    let rows = unreached_rows.join("\n");
    let reached_all = unreached_rows.is_empty();
    assert!(
        !cfg!(loom) || reached_all,
        "notes/verify.md's three-actor table, not reached:\n{rows}"
    );
    if let Ok(path) = std::env::var("SCHEDLAB_COVERAGE_OUT") {
        std::fs::write(&path, &map).expect("writing the coverage map");
    }
    println!(
        "{CHECKER}: {} models, {} branch points declared, {} reached",
        models.len(),
        declared.len(),
        reached.len()
    );
    assert!(undeclared.is_empty(), "reached but not found by the scan of core/src: {undeclared:?}");
    assert!(
        unargued.is_empty(),
        "{CHECKER}: branch points no model reaches, not argued in notes/verify.md:\n{}",
        unargued.join("\n")
    );
    assert!(
        stale.is_empty(),
        "{CHECKER}: argued unreachable in notes/verify.md but reached: {stale:?}"
    );
}

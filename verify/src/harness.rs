//! How a model check runs: in a child process of its own (rusty-fork re-runs the test binary
//! with the one test selected), under the checker the binary was built for, with at most one core
//! fault switched on. The parent reads the child's exit status and output.
//!
//! Why a child process: a panic inside a checker's execution (a core `debug_assert!`, an
//! `expect`) unwinds through the checker's own objects, whose destructors then panic again, and
//! the process aborts: in-process, one failing model would take every other model of its binary
//! down with it. In a child, it fails that model alone, and a negative control can expect it.

use schedlab_core::sync::{model_with, Exploration};
use std::io::{Read, Seek, SeekFrom};

/// What the parent expects of a model.
#[derive(Clone, Copy, Debug)]
pub enum Expect {
    /// Every execution keeps every invariant.
    Pass,
    /// The checker finds an execution that breaks one, and its report contains this text (or
    /// one of the `|`-separated alternatives, for a fault whose first symptom depends on the
    /// interleaving).
    Rejected(&'static str),
}

/// Runs `body` as a model in a child process (with `fault` switched on, if any) and checks the
/// outcome against `expect`. `test_name` is the test's full path (`rusty_fork_test_name!`) and
/// `fork_id` identifies the call site (`rusty_fork_id!`).
pub fn run_model<I: std::hash::Hash>(
    test_name: &str,
    fork_id: I,
    expect: Expect,
    fault: Option<schedlab_core::fault::Fault>,
    body: fn(),
) {
    let exploration = exploration_for(test_name);
    let (success, output) = rusty_fork::fork(
        test_name,
        fork_id,
        |command| {
            command.env(schedlab_core::sync::STOP_AT_FIRST_VIOLATION, "1");
        },
        |child, file| {
            let status = child.wait().expect("waiting for the model's process");
            let mut output = String::new();
            file.seek(SeekFrom::Start(0)).expect("rewinding the model's output");
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes).expect("reading the model's output");
            output.push_str(&String::from_utf8_lossy(&bytes));
            (status.success(), output)
        },
        move || {
            switch_on(fault);
            model_with(exploration, body);
        },
    )
    .expect("starting the model's process");
    match expect {
        Expect::Pass => assert!(success, "the model failed:\n{output}"),
        Expect::Rejected(reason) => {
            assert!(
                !success,
                "the checker accepted a broken version (expected: {reason}):\n{output}"
            );
            let expected = reason.split('|').any(|alternative| output.contains(alternative));
            assert!(expected, "rejected, but not for the expected reason ({reason}):\n{output}");
        }
    }
}

/// Generated models explored with a lower loom preemption bound than the test command's (2), and
/// why (notes/verify-budget.md, round four). An entry names a scenario (every variant's model of
/// it) or `variant::scenario` (that variant's only), matched against the test's last path
/// segments, so a negative control of the same scenario, named after its fault, keeps the
/// command's bound. Shuttle ignores the bound.
pub const LOWER_BOUNDS: &[(&str, usize, &str)] = &[
    // epoch and rstat: crossbeam-epoch under loom with a removal, two flushers and two readers
    // ran past 4 minutes each at bound 2.
    ("reads_against_their_past", 1, "budget"),
    // The three-actor scenarios (issue 45, item 1) with crossbeam-epoch under loom in all three
    // threads: one bound higher, none finished within 25-30 s, or took 23-25 s (load 7 on 2
    // vCPUs); here each takes under 2 s (notes/verify-budget.md, issue 45 item 1). Their
    // negative controls run on the lock variants at bound 2.
    ("epoch::three_actors_merged_into_completed_elsewhere", 0, "budget"),
    ("epoch::lists_three_actors_merged_into_completed_elsewhere", 0, "budget"),
    ("rstat::three_actors_merged_into_completed_elsewhere", 0, "budget"),
    ("rstat::lists_three_actors_merged_into_completed_elsewhere", 0, "budget"),
    ("epoch::three_actors_bio_back_merge_while_holder_exits", 0, "budget"),
    ("epoch::lists_three_actors_bio_back_merge_while_holder_exits", 0, "budget"),
    ("epoch::three_actors_bio_front_merge_and_at_head_while_holder_exits", 0, "budget"),
    ("epoch::lists_three_actors_bio_front_merge_and_at_head_while_holder_exits", 1, "budget"),
    ("epoch::three_actors_idle_hint_vs_insert_and_exit", 1, "budget"),
];

/// The lowered bound of `test_name` in [`LOWER_BOUNDS`], if it has one.
pub fn lower_bound(test_name: &str) -> Option<usize> {
    let names = |name: &str| test_name == name || test_name.ends_with(&format!("::{name}"));
    LOWER_BOUNDS.iter().find(|(name, _, _)| names(name)).map(|&(_, bound, _)| bound)
}

fn exploration_for(test_name: &str) -> Exploration {
    Exploration { max_preemptions: lower_bound(test_name), ..Exploration::default() }
}

#[cfg(any(loom, shuttle))]
fn switch_on(fault: Option<schedlab_core::fault::Fault>) {
    schedlab_core::fault::clear();
    if let Some(fault) = fault {
        schedlab_core::fault::inject(fault);
    }
}

#[cfg(not(any(loom, shuttle)))]
fn switch_on(fault: Option<schedlab_core::fault::Fault>) {
    assert!(fault.is_none(), "core faults exist only in the model-checking builds");
}

/// A model check that must pass, in its own process.
#[macro_export]
macro_rules! model_passes {
    ($test:ident, $body:expr) => {
        #[test]
        fn $test() {
            $crate::harness::run_model(
                rusty_fork::rusty_fork_test_name!($test),
                rusty_fork::rusty_fork_id!(),
                $crate::harness::Expect::Pass,
                None,
                $body,
            );
        }
    };
}

/// Every model body by name, whichever list it comes from: the scenarios of [`crate::scenarios`]
/// and the shuttle-sized workloads of [`crate::workloads`], so that one callback,
/// [`models_for_variant!`], turns either list into tests.
pub mod models {
    pub use crate::scenarios::*;
    pub use crate::workloads::*;
}

/// The generated suite of one variant: every model named ([`crate::for_each_scenario!`] and
/// [`crate::for_each_workload!`] call this with their lists) as a model that must pass. Invoked by
/// [`models_for_every_variant!`] for each line of the variant registry.
#[macro_export]
macro_rules! models_for_variant {
    ($variant:ty; $($model:ident),* $(,)?) => {
        $(
            $crate::model_passes!($model, $crate::harness::models::$model::<$variant>);
        )*
    };
}

/// One module of models per registered variant (`schedlab_variants::with_registry!` calls this
/// with the registry's lines): every scenario, and under shuttle every workload as well (they are
/// sized for shuttle's random schedules, not for loom's exhaustive search). Adding a variant file
/// and its registry line adds its models, with no edit here or in the test files.
#[macro_export]
macro_rules! models_for_every_variant {
    ($($file:literal => $module:ident :: $variant:ident),* $(,)?) => {
        $(
            mod $module {
                $crate::for_each_scenario!(
                    $crate::models_for_variant,
                    schedlab_variants::$module::$variant
                );
                #[cfg(shuttle)]
                $crate::for_each_workload!(
                    $crate::models_for_variant,
                    schedlab_variants::$module::$variant
                );
            }
        )*
    };
}

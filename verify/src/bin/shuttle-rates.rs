//! How well shuttle catches each negative control: for every control of
//! `schedlab_verify::controls` that must be rejected, runs N schedules with the random scheduler
//! and with PCT (depths 2 and 3), and prints how many schedules caught the bug and after how many
//! schedules it was first caught. Markdown on stdout (notes/verify-budget.md keeps a copy).
//!
//! ```text
//! CARGO_TARGET_DIR=target/shuttle RUSTFLAGS="--cfg shuttle -C debug-assertions=on" \
//!   cargo run -p schedlab-verify --release --bin shuttle-rates -- [SCHEDULES] [CONTROL-NAME-FILTER]
//! ```
//!
//! Each control runs in a child process of this binary (`--one NAME SCHEDULER`), so that a core
//! panic in one (some faults end in a `debug_assert!`) is counted for that control alone: a
//! schedule that panics counts as a detection, and the exploration of that scheduler stops there.

#[cfg(not(shuttle))]
fn main() {
    eprintln!(
        "shuttle-rates: build with RUSTFLAGS=\"--cfg shuttle\" (see the file's documentation)"
    );
    std::process::exit(2);
}

#[cfg(shuttle)]
fn main() {
    rates::main();
}

#[cfg(shuttle)]
mod rates {
    use schedlab_core::sync::{explore_shuttle, Exploration};
    use schedlab_verify::controls::CONTROLS;
    use schedlab_verify::harness::Expect;
    use std::process::Command;

    const SCHEDULERS: [(&str, Option<usize>); 3] =
        [("random", None), ("pct-2", Some(2)), ("pct-3", Some(3))];

    pub fn main() {
        let args: Vec<String> = std::env::args().collect();
        if args.get(1).map(String::as_str) == Some("--one") {
            return one(&args[2], &args[3], args[4].parse().expect("schedules"));
        }
        let schedules: usize =
            args.get(1).map_or(1_000, |n| n.parse().expect("SCHEDULES is a number"));
        let filter = args.get(2).cloned().unwrap_or_default();
        let exe = std::env::current_exe().expect("this binary");
        println!(
            "| control | expected | {} |",
            SCHEDULERS.map(|(s, _)| format!("{s}: caught / run (first)")).join(" | ")
        );
        println!("| --- | --- | {} |", SCHEDULERS.map(|_| "---").join(" | "));
        for control in CONTROLS.iter().filter(|c| c.name.contains(&filter)) {
            let Expect::Rejected(reason) = control.expect else { continue };
            let mut cells = Vec::new();
            for (scheduler, _) in SCHEDULERS {
                let out = Command::new(&exe)
                    .args(["--one", control.name, scheduler, &schedules.to_string()])
                    .output()
                    .expect("running one control");
                let stdout = String::from_utf8_lossy(&out.stdout);
                let cell = stdout.lines().find_map(|l| l.strip_prefix("RESULT ")).map_or_else(
                    || format!("no result (exit {:?})", out.status.code()),
                    str::to_owned,
                );
                cells.push(cell);
            }
            println!(
                "| `{}` | {} | {} |",
                control.name,
                reason.replace('|', " or "),
                cells.join(" | ")
            );
        }
    }

    static SCHEDULE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    fn one(name: &str, scheduler: &str, schedules: usize) {
        let control = CONTROLS.iter().find(|c| c.name == name).expect("a control of that name");
        schedlab_core::fault::clear();
        if let Some(fault) = control.fault {
            schedlab_core::fault::inject(fault);
        }
        let pct_depth = SCHEDULERS.iter().find(|(s, _)| *s == scheduler).expect("a scheduler").1;
        let exploration =
            Exploration { iterations: schedules, pct_depth, ..Exploration::default() };
        let body = control.body;
        // A schedule that ends in a panic (a core assertion) caught the bug too: report which.
        std::panic::set_hook(Box::new(|_| {
            let n = SCHEDULE.load(std::sync::atomic::Ordering::Relaxed);
            println!("RESULT panicked in schedule {n} (caught)");
        }));
        let outcome = explore_shuttle(
            &exploration,
            move || {
                SCHEDULE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                body()
            },
            false,
        );
        let first = outcome.first_detection.map_or("never".to_owned(), |n| n.to_string());
        println!("RESULT {} / {} ({first})", outcome.detections, outcome.iterations);
    }
}

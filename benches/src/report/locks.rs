//! The lock statistics (`schedlab_core::lockstat`) as tables, for every report that measured
//! them (`compare`: one set of locks per variant and lock kind; `run --lockstat`: one set): a
//! summary per lock, then its waits, its holds, where each path waited and held, the time one
//! lock was held inside another, the sampled mode's estimate beside the exact figures, and the
//! statistics updates done under the scheduler lock. Each table fits a terminal; the terminal
//! text, the page and the JSON draw on the same figures.

use super::table::{Cell, Table};
use schedlab_core::lockstat::{LockSummary, PathSummary};

/// The title of the summary table ([`LockTables::summary`]).
pub const SUMMARY: &str = "Locks: contention and occupancy";

/// One set of locks measured together, and the cells that name it in each row (a variant and
/// its lock kind; none for a single run).
pub struct LockSet<'a> {
    pub key: Vec<Cell>,
    /// How the set is named in a note: "sched-lock / fair-spin".
    pub label: String,
    pub locks: &'a [LockSummary],
    /// The statistics updates applied under the scheduler lock, timed like holds.
    pub stats_section: Option<&'a LockSummary>,
}

/// The lock tables: the summary (kept by `--brief`), then the detail.
pub struct LockTables {
    pub summary: Table,
    pub detail: Vec<Table>,
}

/// The tables of `sets`, each row led by the set's key under `key_columns` (`(name, unit)`).
pub fn lock_tables(key_columns: &[(&str, &str)], sets: &[LockSet]) -> LockTables {
    let mut detail = vec![
        timed(Timed::Waits, key_columns, sets),
        timed(Timed::Holds, key_columns, sets),
        by_path(key_columns, sets),
        inside(key_columns, sets),
    ];
    if sets
        .iter()
        .flat_map(|s| s.locks)
        .any(|l| l.hold_sampled_estimate.is_some() || l.wait_sampled_estimate.is_some())
    {
        detail.push(sampled_estimates(key_columns, sets));
    }
    if sets.iter().any(|s| s.stats_section.is_some()) {
        detail.push(stats_sections(key_columns, sets));
    }
    // A table without a row says nothing (no lock was nested in another).
    detail.retain(|t| !t.rows.is_empty());
    LockTables { summary: summary(key_columns, sets), detail }
}

/// `key_columns` and then `columns`.
fn table(title: &str, key_columns: &[(&str, &str)], columns: &[(&str, &str)]) -> Table {
    let all: Vec<(&str, &str)> = key_columns.iter().chain(columns).copied().collect();
    Table::new(title, &all)
}

/// `key` and then `cells`.
fn row(key: &[Cell], cells: impl IntoIterator<Item = Cell>) -> Vec<Cell> {
    key.iter().cloned().chain(cells).collect()
}

fn ns(value: u64) -> Cell {
    Cell::num(value as f64, 0)
}

/// A table of `columns` after `key_columns`, with a row for each of the rows `cells` gives a lock
/// of `sets` (none, one or several), each led by its set's key, and `footnote` under it. `cells`
/// may add notes about a lock: they stand before the footnote, in the order they came.
fn per_lock<R: IntoIterator<Item = Vec<Cell>>>(
    title: &str,
    key_columns: &[(&str, &str)],
    columns: &[(&str, &str)],
    sets: &[LockSet],
    footnote: &str,
    mut cells: impl FnMut(&LockSet, &LockSummary, &mut Vec<String>) -> R,
) -> Table {
    let mut t = table(title, key_columns, columns);
    let mut notes = Vec::new();
    for set in sets {
        for l in set.locks {
            for cells in cells(set, l, &mut notes) {
                t.row(row(&set.key, cells));
            }
        }
    }
    for note in notes {
        t.note(note);
    }
    t.note(footnote);
    t
}

fn summary(key_columns: &[(&str, &str)], sets: &[LockSet]) -> Table {
    let columns = [
        ("class", ""),
        ("acquisitions", ""),
        ("contended", "%"),
        ("owner changes", ""),
        ("wait avg", "ns"),
        ("hold avg", "ns"),
        ("occupancy", "%"),
    ];
    let footnote = "wait: per contended acquisition; hold: per acquisition; occupancy: hold total \
        ÷ the measured time (a class of many locks, as stats-sum, may pass 100 %). Acquisitions, \
        contentions and owner changes are exact; wait and hold figures are estimated from sampled \
        waits and holds unless the tables of waits and holds say every one was timed (one in 1).";
    let mut t = per_lock(SUMMARY, key_columns, &columns, sets, footnote, |set, l, notes| {
        let occupancy = l
            .hold_occupancy
            .map_or_else(|| Cell::missing("not estimable"), |o| Cell::num(100.0 * o, 1));
        if let Some(why) = &l.hold_occupancy_not_estimable {
            notes.push(format!("{}{}: occupancy {why}", prefix(set), l.name));
        }
        let wait = if l.contentions == 0 {
            Cell::missing("no contention")
        } else {
            Cell::num(l.wait_ns.avg, 0)
        };
        [vec![
            Cell::text(l.name),
            ns(l.acquisitions),
            Cell::num(l.contention_pct, 1),
            ns(l.owner_changes),
            wait,
            Cell::num(l.hold_ns.avg, 0),
            occupancy,
        ]]
    });
    t.scale_time_columns();
    t
}

/// "sched-lock / fair-spin: " or nothing, before a lock's name in a note.
fn prefix(set: &LockSet) -> String {
    if set.label.is_empty() {
        String::new()
    } else {
        format!("{} / ", set.label)
    }
}

/// The waits or the holds of each lock: their distribution, and the ones it rests on.
#[derive(Clone, Copy)]
enum Timed {
    Waits,
    Holds,
}

/// The table of [`Timed`] waits or holds: the waits only of the locks that were contended, and
/// with how many contentions; "one in" only where a hold was timed.
fn timed(what: Timed, key_columns: &[(&str, &str)], sets: &[LockSet]) -> Table {
    let (title, counted, footnote) = match what {
        Timed::Waits => (
            "Locks: waits (contended acquisitions)",
            &[("contended", "")][..],
            "timed: the waits the figures rest on, one in so many contended acquisitions (1: \
            every wait timed, exact); the total is their mean × the contentions.",
        ),
        Timed::Holds => (
            "Locks: holds",
            &[][..],
            "timed: the holds the figures rest on, one in so many acquisitions (1: every hold \
            timed, exact); the total is their mean × the acquisitions.",
        ),
    };
    let columns = [
        &[("class", "")][..],
        counted,
        &[("total", "ns"), ("p50", "ns"), ("p99", "ns"), ("max", "ns")],
        &[("timed", ""), ("one in", "")],
    ]
    .concat();
    let mut t = per_lock(title, key_columns, &columns, sets, footnote, |_, l, _| {
        let (figures, count, timed, one_in) = match what {
            Timed::Waits if l.contentions == 0 => return None,
            Timed::Waits => (
                &l.wait_ns,
                Some(ns(l.contentions)),
                l.waits_timed,
                Cell::num(l.wait_sampled_1_in, 0),
            ),
            Timed::Holds => (
                &l.hold_ns,
                None,
                l.holds_timed,
                Cell::opt((l.holds_timed > 0).then_some(l.hold_sampled_1_in), 0),
            ),
        };
        let distribution = [figures.total, figures.p50, figures.p99, figures.max].map(ns);
        Some(
            [Cell::text(l.name)]
                .into_iter()
                .chain(count)
                .chain(distribution)
                .chain([ns(timed), one_in])
                .collect(),
        )
    });
    t.scale_time_columns();
    t
}

fn by_path(key_columns: &[(&str, &str)], sets: &[LockSet]) -> Table {
    let columns = [
        ("class", ""),
        ("path", ""),
        ("hold", "ns"),
        ("of holds", "%"),
        ("wait", "ns"),
        ("of waits", "%"),
    ];
    let footnote = "of holds, of waits: the path's part of the class's hold and wait time \
        (estimated like them when sampled).";
    let share = |s: Option<f64>| s.map_or_else(|| Cell::missing("-"), |s| Cell::num(100.0 * s, 0));
    let title = "Locks: where each path held and waited";
    let mut t = per_lock(title, key_columns, &columns, sets, footnote, |_, l, _| {
        let row = |p: &PathSummary| {
            vec![
                Cell::text(l.name),
                Cell::text(p.path.name()),
                ns(p.hold_ns),
                share(p.hold_share),
                ns(p.wait_ns),
                share(p.wait_share),
            ]
        };
        l.paths.iter().map(row).collect::<Vec<_>>()
    });
    t.scale_time_columns();
    t
}

fn inside(key_columns: &[(&str, &str)], sets: &[LockSet]) -> Table {
    let columns = [("class", ""), ("inside", ""), ("hold", "ns"), ("wait", "ns")];
    let footnote =
        "Hold and wait of a class while the same thread held the other (estimated when sampled).";
    let title = "Locks: time inside another lock";
    let mut t = per_lock(title, key_columns, &columns, sets, footnote, |set, l, notes| {
        let mut rows = Vec::new();
        for i in &l.inside {
            let hold = match &i.hold_not_estimable {
                Some(why) => {
                    notes.push(format!("{}{} inside {}: hold {why}", prefix(set), l.name, i.outer));
                    Cell::missing("not estimable")
                }
                None => ns(i.hold_ns),
            };
            rows.push(vec![Cell::text(l.name), Cell::text(i.outer), hold, ns(i.wait_ns)]);
        }
        rows
    });
    t.scale_time_columns();
    t
}

fn sampled_estimates(key_columns: &[(&str, &str)], sets: &[LockSet]) -> Table {
    let columns = [
        ("class", ""),
        ("of", ""),
        ("from", ""),
        ("figure", ""),
        ("sampled estimate", "ns"),
        ("exact", "ns"),
    ];
    let footnote = "Exact mode times every hold and wait; the sampled mode's estimate from the \
        same run (the ones its sampler picked, scaled the same way) shows how far the default \
        mode is off.";
    let title = "Locks: the sampled mode's estimate beside the exact figures";
    per_lock(title, key_columns, &columns, sets, footnote, |_, l, _| {
        let estimates = [
            ("waits", &l.wait_sampled_estimate, l.wait_sampled_estimate_n, &l.wait_ns),
            ("holds", &l.hold_sampled_estimate, l.hold_sampled_estimate_n, &l.hold_ns),
        ];
        let mut rows = Vec::new();
        for (what, estimate, n, exact) in estimates {
            let Some(e) = estimate else { continue };
            for (figure, sampled, measured) in [
                ("avg", e.avg, exact.avg),
                ("p99", e.p99 as f64, exact.p99 as f64),
                ("total", e.total as f64, exact.total as f64),
            ] {
                rows.push(vec![
                    Cell::text(l.name),
                    Cell::text(what),
                    ns(n),
                    Cell::text(figure),
                    Cell::num(sampled, 0),
                    Cell::num(measured, 0),
                ]);
            }
        }
        rows
    })
}

fn stats_sections(key_columns: &[(&str, &str)], sets: &[LockSet]) -> Table {
    let mut t = table(
        "Statistics updates under the scheduler lock (not a lock)",
        key_columns,
        &[("updates", ""), ("avg", "ns"), ("total", "ns")],
    );
    for set in sets {
        if let Some(s) = set.stats_section {
            t.row(row(
                &set.key,
                [ns(s.acquisitions), Cell::num(s.hold_ns.avg, 0), ns(s.hold_ns.total)],
            ));
        }
    }
    t.scale_time_columns();
    t
}

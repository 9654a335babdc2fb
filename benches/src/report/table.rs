//! Tables as data: titled rows of typed cells under columns that carry their unit. Each report
//! gives its tables this way ([`super::contract::Report::tables`]); the HTML page draws them as
//! `<table>` elements (numbers right-aligned, sortable by column, verdicts marked), and
//! [`Table::to_text`] lays them out for a terminal or a note.

use super::outcome::{Judge, Undisturbed, NOT_JUDGED_DISTURBED};
use serde::Serialize;
use std::fmt::Write as _;

/// "[1.02, 1.09]" (with `unit` after each bound), or "-" without an interval: how every text
/// table prints an interval.
pub fn interval_text(i: Option<crate::stats::Interval>, places: usize, unit: &str) -> String {
    i.map_or_else(|| "-".into(), |i| format!("[{:.places$}{unit}, {:.places$}{unit}]", i.lo, i.hi))
}

/// The columns a table's note is wrapped to in text (its lines indented under the table).
pub const NOTE_WIDTH: usize = 100;

/// `text` in lines of at most `width` characters, broken between words (a word longer than
/// the width stands alone); each line of `text` starts a new one.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.lines() {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    lines
}

/// A column: its name and, for numbers, its unit ("KIOPS", "ns", "%", "×").
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Column {
    pub name: String,
    pub unit: Option<String>,
    /// A quantity that cannot be below 0 whatever its unit says ([`Table::at_least_zero`]).
    #[serde(skip)]
    pub at_least_zero: bool,
}

/// Units of quantities that cannot be below 0: a time, a rate, a ratio of two such, a count of
/// things. A figure below 0 in one of them is noise larger than the effect (a cost measured as
/// the difference of two noisy times), never a value.
pub const AT_LEAST_ZERO_UNITS: &[&str] = &[
    "ns",
    "µs",
    "ms",
    "s",
    "µs per I/O",
    "ns/request",
    "ns×lines",
    "KIOPS",
    "IOPS",
    "IO/s",
    "KiB/s",
    "×",
    "CPUs",
    "per I/O",
    "requests",
    "runs",
    "groups",
    "B",
    "sectors",
    "hits",
];

/// A share of a whole ("% of samples", "% of span"): between 0 and 100.
pub const SHARE_UNIT_PREFIX: &str = "% of ";

/// What a quantity's unit allows its figures to be (issue 44, item 3: a figure that breaks its
/// physical bound is "not estimable" with its reason, whichever table it is in).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Any real number: a change, an error, a plain "%", a column without a unit.
    Any,
    /// At least 0 ([`AT_LEAST_ZERO_UNITS`]).
    AtLeastZero,
    /// A share of a whole, 0 to 100 ([`SHARE_UNIT_PREFIX`]).
    Share,
}

impl Column {
    /// The bound its unit sets on its figures.
    pub fn bound(&self) -> Bound {
        match self.unit.as_deref() {
            Some(u) if u.starts_with(SHARE_UNIT_PREFIX) => Bound::Share,
            Some(u) if AT_LEAST_ZERO_UNITS.contains(&u) => Bound::AtLeastZero,
            _ if self.at_least_zero => Bound::AtLeastZero,
            _ => Bound::Any,
        }
    }

    /// Why `value` (shown as `shown`) cannot be a figure of this column, if it cannot. A figure
    /// that rounds to 0 or 100 where it is shown is within the bound (a float's last bit is
    /// not a physical claim).
    pub fn refuses(&self, value: f64, shown: &str) -> Option<String> {
        let as_shown = shown.parse::<f64>().unwrap_or(value);
        let unit = self.unit.as_deref().unwrap_or("");
        let below = value < 0.0 && as_shown < 0.0;
        let above = self.bound() == Bound::Share && value > 100.0 && as_shown > 100.0;
        match self.bound() {
            Bound::AtLeastZero | Bound::Share if below => {
                Some(format!("not estimable: {shown} {unit} < 0"))
            }
            Bound::Share if above => Some(format!("not estimable: {shown} {unit} > 100")),
            _ => None,
        }
    }
}

/// A judgement a cell carries, styled so that a reader sees it at a glance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// A goal met, a figure within its band.
    Met,
    /// A goal missed, a figure outside its band.
    Missed,
    /// Judged, but the figures cannot tell (an interval straddles its threshold).
    Inconclusive,
    /// Not judged (disturbed runs, no figure to judge).
    NotJudged,
}

/// A verdict cell's content: the verdict and its words. Its fields are private: one that judges
/// is made only with the proof that the runs were undisturbed ([`Judgement::judged`]), which
/// only an outcome gives (`outcome::Outcome::judge`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Judgement {
    verdict: Verdict,
    shown: String,
}

impl Judgement {
    /// A verdict on figures of undisturbed runs.
    pub fn judged(verdict: Verdict, shown: impl Into<String>, _: Undisturbed) -> Judgement {
        Judgement { verdict, shown: shown.into() }
    }

    /// No verdict, and why ("no interval", "not judged: disturbed").
    pub fn not_judged(why: impl Into<String>) -> Judgement {
        Judgement { verdict: Verdict::NotJudged, shown: why.into() }
    }

    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    pub fn shown(&self) -> &str {
        &self.shown
    }
}

impl Judge {
    /// The verdict cell `verdict` shown as `shown`, or "not judged: disturbed" on disturbed runs.
    pub fn cell(&self, verdict: Verdict, shown: impl Into<String>) -> Cell {
        match self.proof() {
            Some(proof) => Cell::Judged(Judgement::judged(verdict, shown, proof)),
            None => Cell::Judged(Judgement::not_judged(NOT_JUDGED_DISTURBED)),
        }
    }
}

/// One cell.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Cell {
    /// Words: a name, a status.
    Text { text: String },
    /// A number and how it is shown (its digits, a spread after it); sorted by `value`.
    Number {
        value: f64,
        shown: String,
        /// Where the report's JSON holds this figure, if a field of the report holds it: a
        /// JSON Pointer into the report's own fields (`/points/2/bfq/extra_us`), set with
        /// [`Cell::at`] where the row is built from the report. A figure the row refuses
        /// ([`Table::row`]) is `null` at that path in the JSON, and nowhere else.
        #[serde(skip)]
        json_path: Option<String>,
    },
    /// No figure, and why ("-", "not estimable: ...").
    Missing { why: String },
    /// A verdict on measured figures, with its words (see [`Judgement`]: none on disturbed
    /// runs).
    Judged(Judgement),
    /// An end-of-run check of correctness (requests conserved, holds of a lock never
    /// overlapping): what it says holds however disturbed the runs were.
    Check { passed: bool, shown: String },
}

impl Cell {
    pub fn text(text: impl Into<String>) -> Cell {
        Cell::Text { text: text.into() }
    }

    /// A number shown with `digits` decimals; a non-finite one is missing.
    pub fn num(value: f64, digits: usize) -> Cell {
        if value.is_finite() {
            Cell::Number { value, shown: format!("{value:.digits$}"), json_path: None }
        } else {
            Cell::missing("-")
        }
    }

    /// A number shown as the caller wrote it (a spread after it, a unit prefix).
    pub fn shown(value: f64, shown: impl Into<String>) -> Cell {
        if value.is_finite() {
            Cell::Number { value, shown: shown.into(), json_path: None }
        } else {
            Cell::missing("-")
        }
    }

    /// `Some(v)` as [`Cell::num`], `None` as "-".
    pub fn opt(value: Option<f64>, digits: usize) -> Cell {
        value.map_or_else(|| Cell::missing("-"), |v| Cell::num(v, digits))
    }

    /// The number cell as the figure at `json_path` of the report's JSON (a JSON Pointer into
    /// the report's own fields: `format!("{at}/extra_us")`): the field the JSON says is not
    /// estimable if the table refuses the figure. Any other cell is left as it is (a
    /// non-finite figure is already missing).
    pub fn at(mut self, json_path: impl Into<String>) -> Cell {
        if let Cell::Number { json_path: path, .. } = &mut self {
            *path = Some(json_path.into());
        }
        self
    }

    pub fn missing(why: impl Into<String>) -> Cell {
        Cell::Missing { why: why.into() }
    }

    /// A verdict cell that judges nothing, and why ("no interval", "fitted"); a verdict is
    /// made by [`Judge::cell`].
    pub fn not_judged(why: impl Into<String>) -> Cell {
        Cell::Judged(Judgement::not_judged(why))
    }

    pub fn check(passed: bool, shown: impl Into<String>) -> Cell {
        Cell::Check { passed, shown: shown.into() }
    }

    /// What the cell shows.
    pub fn shown_text(&self) -> &str {
        match self {
            Cell::Text { text } => text,
            Cell::Number { shown, .. } | Cell::Check { shown, .. } => shown,
            Cell::Judged(judgement) => judgement.shown(),
            Cell::Missing { why } => why,
        }
    }

    /// Whether the cell is a number (right-aligned).
    pub fn is_number(&self) -> bool {
        matches!(self, Cell::Number { .. })
    }
}

/// A titled table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Table {
    pub title: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
    /// Lines under the table (what a figure means, why one is missing).
    pub notes: Vec<String>,
    /// The figures [`Table::row`] refused, with the values refused and where the report's JSON
    /// holds them: what the JSON is held to (`contract::Report::json_in` says each is not
    /// estimable there too).
    #[serde(skip)]
    pub refused: Vec<Refusal>,
}

/// A figure its column cannot have ([`Column::refuses`]): where it would have stood, the value
/// refused (in the column's unit as the row gave it), why, as its cell shows it, and the path
/// of the report's JSON field that holds it ([`Cell::at`]; `None` for a figure the table
/// derives, which no field of the report holds).
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub row: usize,
    pub column: usize,
    pub value: f64,
    pub why: String,
    pub json_path: Option<String>,
}

impl Table {
    /// A table with columns given as `(name, unit)`; `""` for no unit.
    pub fn new(title: impl Into<String>, columns: &[(&str, &str)]) -> Table {
        Table {
            title: title.into(),
            columns: columns
                .iter()
                .map(|(name, unit)| Column {
                    name: name.to_string(),
                    unit: (!unit.is_empty()).then(|| unit.to_string()),
                    at_least_zero: false,
                })
                .collect(),
            rows: Vec::new(),
            notes: Vec::new(),
            refused: Vec::new(),
        }
    }

    /// Adds a row; it must have one cell per column (a short one is padded with "-", a long one
    /// cut, so that a caller's slip cannot shift the columns of the rows after it). A number
    /// its column's unit does not allow ([`Column::refuses`]: a time below 0, a share above its
    /// whole) becomes "not estimable" with the reason, and its [`Refusal`] keeps the cell's
    /// JSON path ([`Cell::at`]): the one field the report's JSON nulls for it.
    pub fn row(&mut self, mut cells: Vec<Cell>) -> &mut Table {
        debug_assert_eq!(
            cells.len(),
            self.columns.len(),
            "{}: a row of {} cells under {} columns",
            self.title,
            cells.len(),
            self.columns.len()
        );
        cells.resize_with(self.columns.len(), || Cell::missing("-"));
        // A figure its quantity cannot have never reaches the table as a number.
        for (i, (cell, column)) in cells.iter_mut().zip(&self.columns).enumerate() {
            if let Cell::Number { value, shown, json_path } = cell {
                if let Some(why) = column.refuses(*value, shown) {
                    let (row, value, json_path) = (self.rows.len(), *value, json_path.take());
                    let why_shown = why.clone();
                    self.refused.push(Refusal { row, column: i, value, why, json_path });
                    *cell = Cell::missing(why_shown);
                }
            }
        }
        self.rows.push(cells);
        self
    }

    /// Marks the columns named `names` as quantities that cannot be below 0 although their
    /// unit allows it: a cost in "%" (a median cost below 0 is noise larger than the effect),
    /// where the same unit's change or error may be. Before the rows: [`Table::row`] refuses.
    pub fn at_least_zero(&mut self, names: &[&str]) -> &mut Table {
        for column in self.columns.iter_mut().filter(|c| names.contains(&c.name.as_str())) {
            column.at_least_zero = true;
        }
        self
    }

    pub fn note(&mut self, note: impl Into<String>) -> &mut Table {
        self.notes.push(note.into());
        self
    }

    /// Chooses each time column's unit for its figures (ns, µs, ms or s): the largest unit in
    /// which the column's largest figure is at least 1, so that 4 781 650.3 µs reads 4.78 s.
    /// A column whose cells show more than a plain number (a spread, a prefix) is left as its
    /// maker wrote it, and so is one whose unit stays.
    pub fn scale_time_columns(&mut self) -> &mut Table {
        const UNITS: [(&str, f64); 4] = [("ns", 1.0), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)];
        for (i, column) in self.columns.iter_mut().enumerate() {
            let Some(from) =
                column.unit.as_deref().and_then(|u| UNITS.iter().find(|(name, _)| *name == u))
            else {
                continue;
            };
            let mut largest = 0.0_f64;
            let mut plain = true;
            for row in &self.rows {
                if let Some(Cell::Number { value, shown, .. }) = row.get(i) {
                    plain &= shown.parse::<f64>().is_ok();
                    largest = largest.max(value.abs());
                }
            }
            // Nothing but zeros or missing figures: no scale to choose.
            if largest == 0.0 {
                continue;
            }
            let in_ns = largest * from.1;
            let to = UNITS.iter().rev().find(|(_, scale)| in_ns >= *scale).unwrap_or(&UNITS[0]);
            if !plain || to.0 == from.0 {
                continue;
            }
            let factor = from.1 / to.1;
            let digits = if in_ns / to.1 < 10.0 { 2 } else { 1 };
            for row in &mut self.rows {
                if let Some(Cell::Number { value, json_path, .. }) = row.get(i) {
                    let scaled = Cell::num(value * factor, digits);
                    // The JSON keeps the figure in the report's unit: its path stays.
                    row[i] = match json_path.clone() {
                        Some(path) => scaled.at(path),
                        None => scaled,
                    };
                }
            }
            column.unit = Some(to.0.to_string());
        }
        self
    }

    /// A column's heading with its unit: "hold avg (ns)"; a column named by its unit is headed
    /// by it once ("KIOPS", not "KIOPS (KIOPS)").
    pub fn heading(column: &Column) -> String {
        match &column.unit {
            Some(unit) if *unit == column.name => unit.clone(),
            Some(unit) => format!("{} ({unit})", column.name),
            None => column.name.clone(),
        }
    }

    /// The table laid out in aligned columns (numbers right-aligned), its title first and its
    /// notes after.
    pub fn to_text(&self) -> String {
        let headings: Vec<String> = self.columns.iter().map(Table::heading).collect();
        let mut widths: Vec<usize> = headings.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.shown_text().chars().count());
            }
        }
        let mut out = format!("{}\n", self.title);
        let line = |cells: Vec<(&str, bool)>| {
            let mut text = String::new();
            for ((cell, right), w) in cells.into_iter().zip(&widths) {
                let pad = w.saturating_sub(cell.chars().count());
                if right {
                    let _ = write!(text, "{}{cell}  ", " ".repeat(pad));
                } else {
                    let _ = write!(text, "{cell}{}  ", " ".repeat(pad));
                }
            }
            text.trim_end().to_string()
        };
        out.push_str(&line(headings.iter().map(|h| (h.as_str(), false)).collect()));
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row.iter().map(|c| (c.shown_text(), c.is_number())).collect()));
            out.push('\n');
        }
        for note in &self.notes {
            for (i, line) in wrap(note, NOTE_WIDTH).iter().enumerate() {
                let indent = if i == 0 { "  " } else { "    " };
                let _ = writeln!(out, "{indent}{line}");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_lays_out_its_units_and_aligns_numbers_right() {
        let mut t = Table::new("Locks", &[("lock", ""), ("hold avg", "ns"), ("occupancy", "%")]);
        t.row(vec![Cell::text("sched"), Cell::num(85.0, 0), Cell::num(41.25, 1)]);
        t.row(vec![Cell::text("queue"), Cell::num(1200.0, 0), Cell::missing("n/e")]);
        t.note("n/e: not estimable");
        let text = t.to_text();
        assert_eq!(
            text,
            concat!(
                "Locks\n",
                "lock   hold avg (ns)  occupancy (%)\n",
                "sched             85           41.2\n",
                "queue           1200  n/e\n",
                "  n/e: not estimable\n"
            )
        );
    }

    #[test]
    fn a_column_named_by_its_unit_is_headed_by_it_once() {
        let t = Table::new("Points", &[("KIOPS", "KIOPS"), ("per-thread min", "KIOPS")]);
        let headings: Vec<String> = t.columns.iter().map(Table::heading).collect();
        assert_eq!(headings, ["KIOPS", "per-thread min (KIOPS)"]);
    }

    #[test]
    fn a_time_column_takes_the_unit_its_largest_figure_reads_in() {
        let mut t = Table::new(
            "Latency",
            &[("job", ""), ("lat avg", "µs"), ("lat p99", "µs"), ("spread", "µs")],
        );
        t.row(vec![
            Cell::num(0.0, 0),
            Cell::num(4_781_650.3, 1),
            Cell::num(532.0, 1),
            Cell::shown(2e6, "2e6 ±1"),
        ]);
        t.row(vec![
            Cell::num(1.0, 0),
            Cell::num(250_000.0, 1),
            Cell::num(12.5, 1),
            Cell::missing("-"),
        ]);
        t.scale_time_columns();
        let units: Vec<Option<&str>> = t.columns.iter().map(|c| c.unit.as_deref()).collect();
        assert_eq!(
            units,
            [None, Some("s"), Some("µs"), Some("µs")],
            "µs to s; below 1 ms it stays; a shaped cell stays"
        );
        assert_eq!(t.rows[0][1], Cell::num(4.7816503, 2));
        assert_eq!((t.rows[0][1].shown_text(), t.rows[1][1].shown_text()), ("4.78", "0.25"));
        assert_eq!(
            t.rows[0][2].shown_text(),
            "532.0",
            "a column whose unit stays keeps its maker's digits"
        );
        let mut ns = Table::new("Holds", &[("hold", "ns")]);
        ns.row(vec![Cell::num(85_000.0, 0)]);
        assert_eq!(ns.scale_time_columns().rows[0][0].shown_text(), "85.0");
        assert_eq!(ns.columns[0].unit.as_deref(), Some("µs"));
        let mut zeros = Table::new("Null device", &[("lat avg", "µs"), ("lat p99", "µs")]);
        zeros.row(vec![Cell::num(0.0, 1), Cell::missing("no requests completed")]);
        zeros.scale_time_columns();
        assert_eq!(zeros.columns[0].unit.as_deref(), Some("µs"), "zeros keep their unit");
        assert_eq!(
            zeros.columns[1].unit.as_deref(),
            Some("µs"),
            "a column of missing figures keeps its unit"
        );
        assert_eq!(zeros.rows[0][0].shown_text(), "0.0");
    }

    #[test]
    fn a_long_note_is_wrapped_between_words_under_its_table() {
        let mut t = Table::new("t", &[("a", "")]);
        let words = vec!["word"; 40].join(" ");
        t.note(words.clone());
        let text = t.to_text();
        let notes: Vec<&str> = text.lines().skip(2).collect();
        assert!(
            notes.len() > 1 && notes.iter().all(|l| l.chars().count() <= NOTE_WIDTH + 4),
            "{text}"
        );
        assert!(notes[0].starts_with("  word") && notes[1].starts_with("    word"), "{text}");
        let rejoined: Vec<&str> = notes.iter().flat_map(|l| l.split_whitespace()).collect();
        assert_eq!(rejoined.join(" "), words, "no word lost or cut");
        assert_eq!(wrap("one\ntwo", 80), ["one", "two"]);
    }

    /// Issue 44, item 3, for every unit at once: a figure below 0 in a quantity that cannot be
    /// (a time, a rate, a ratio, a count), or a share above its whole, is "not estimable" with
    /// the figure and the bound it breaks; a figure at the bound stays; a column of changes or
    /// errors (a plain "%", no unit) keeps its negative figures.
    #[test]
    fn a_figure_that_breaks_its_units_bound_is_not_estimable_in_every_unit() {
        let shares = ["% of samples", "% of span", "% of busy samples", "% of CPU time"];
        let bounded = AT_LEAST_ZERO_UNITS.iter().chain(&shares);
        for unit in bounded {
            let mut t = Table::new("t", &[("cost", unit)]);
            t.row(vec![Cell::num(-51.9, 2)]);
            t.row(vec![Cell::num(0.0, 1)]);
            t.row(vec![Cell::num(-0.004, 2)]);
            t.row(vec![Cell::shown(-3.0, "-3 ±1")]);
            let shown: Vec<&str> = t.rows.iter().map(|r| r[0].shown_text()).collect();
            assert_eq!(
                shown,
                [
                    format!("not estimable: -51.90 {unit} < 0").as_str(),
                    "0.0",
                    "-0.00",
                    format!("not estimable: -3 ±1 {unit} < 0").as_str(),
                ],
                "{unit}: a figure that rounds to 0 is at the bound, not below it"
            );
        }
        for unit in shares {
            let mut t = Table::new("t", &[("held", unit)]);
            t.row(vec![Cell::num(163.04, 1)]).row(vec![Cell::num(100.0, 1)]);
            assert_eq!(t.rows[0][0], Cell::missing(format!("not estimable: 163.0 {unit} > 100")));
            assert_eq!(t.rows[1][0].shown_text(), "100.0");
        }
        for unit in ["%", ""] {
            let mut t = Table::new("t", &[("change", unit)]);
            t.row(vec![Cell::num(-7.1, 1)]).row(vec![Cell::num(163.0, 1)]);
            assert_eq!((t.rows[0][0].shown_text(), t.rows[1][0].shown_text()), ("-7.1", "163.0"));
        }
        // A cost in "%" is declared so: its negative median is refused, the change beside it
        // is not.
        let mut t = Table::new("t", &[("cost", "%"), ("change", "%")]);
        t.at_least_zero(&["cost"]).row(vec![Cell::num(-7.1, 1), Cell::num(-7.1, 1)]);
        assert_eq!(t.rows[0][0], Cell::missing("not estimable: -7.1 % < 0"));
        assert_eq!(t.rows[0][1].shown_text(), "-7.1");
    }

    #[test]
    fn a_row_of_the_wrong_length_cannot_shift_the_columns() {
        let mut t = Table::new("t", &[("a", ""), ("b", "")]);
        // Release builds pad (debug builds assert, to catch the slip in tests).
        if !cfg!(debug_assertions) {
            t.row(vec![Cell::text("x")]);
            assert_eq!(t.rows[0].len(), 2);
        }
        assert!(
            Cell::num(f64::NAN, 1) == Cell::missing("-"),
            "a non-finite number is missing, not NaN"
        );
    }
}

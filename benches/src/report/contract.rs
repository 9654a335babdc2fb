//! The report contract: what every experiment's report knows how to give after `run()`, so that
//! one function of the CLI (`src/report_out.rs::emit`) does every output the user asked for and
//! decides the exit code, for any command.
//!
//! A report gives:
//! - its **text** for the terminal ([`Report::text`]; a [`View`] says what the user asked to
//!   leave out);
//! - its **JSON** ([`Report::json`]): the report's own fields, serde's, inside one envelope that
//!   names the schema and its version and the signal that stopped the run, if one did; a figure
//!   its tables refuse as not estimable is `null` there with its reason, never its raw value, at
//!   the path its cell names (`super::table::Cell::at`), set where the row is built from the
//!   report;
//! - its **tables** as data ([`Report::tables`]: typed cells, columns with units), which the HTML
//!   page draws as real tables;
//! - its **charts** ([`Report::charts`]: SVG or why none), the first of which is `--svg`'s;
//! - its **outcome** ([`Report::outcome`]): interruption, warnings, disturbed runs, failed
//!   checks, failed runs and outputs that failed during the work, from which the exit code
//!   follows ([`Outcome::failures`]);
//! - its **page** ([`Report::page`]), assembled from all of the above by default.
//!
//! The contract for an implementer: `text`, `tables` and `charts` are pure (no I/O, no clock);
//! a figure that cannot exist physically never reaches a table as a number (it is refused where
//! it is computed and arrives as [`super::table::Cell::Missing`] with its reason).
//!
//! Judgements go through the outcome: a verdict cell (met, missed, inconclusive) is made only by
//! a [`Judge`], and a judge that may give one is made only by [`Outcome::judge`] on an outcome
//! that names no disturbed run (it holds an [`Undisturbed`], which nothing else can make). On
//! disturbed runs every verdict reads "not judged: disturbed", in the text, on the page and in
//! the JSON's `judgements`, because there is no other way to build the cell.
//!
//! Warnings are typed ([`Warning`]: a kind, a scope, a message): [`merged`] says each kind once
//! per scope and names once the rows or points one message touches; the "warning: " before a
//! warning is the renderer's.

use super::charts::ChartError;
use super::html::Page;
pub use super::outcome::{
    merged, Failure, Judge, Outcome, Scope, Undisturbed, Warning, WarningKind, NOT_JUDGED_DISTURBED,
};
#[cfg(test)]
use super::table::Verdict;
use super::table::{Cell, Judgement, Table};
use crate::files::provenance::Provenance;
use serde::Serialize;
use std::fmt;

/// What the user asked the terminal text to leave out.
#[derive(Clone, Copy, Debug, Default)]
pub struct View {
    /// `--brief`: the main tables only.
    pub brief: bool,
    /// Judge as on disturbed runs whatever the outcome says: no verdict shown. It can only take
    /// verdicts away (the tests render every report so; a caller may know of a disturbance the
    /// report does not).
    pub disturbed: bool,
}

/// A chart: its title, and its SVG or why it could not be drawn.
#[derive(Clone, Debug)]
pub struct Chart {
    pub title: String,
    pub svg: Result<String, ChartError>,
    /// An SVG with its own script (a flamegraph): kept interactive, in a frame of its own.
    pub interactive: bool,
    /// The title of the table it illustrates: the page puts it right after that table.
    pub beside: Option<String>,
}

impl Chart {
    pub fn new(title: impl Into<String>, svg: Result<String, ChartError>) -> Chart {
        Chart { title: title.into(), svg, interactive: false, beside: None }
    }

    /// Placed beside the table titled `table`.
    pub fn beside(mut self, table: impl Into<String>) -> Chart {
        self.beside = Some(table.into());
        self
    }
}

/// A report that serde could not turn into JSON (a bug of the report's type, not of the run).
#[derive(Debug)]
pub struct SerialiseError {
    /// The report's command ([`Report::COMMAND`]).
    pub command: &'static str,
    pub source: serde_json::Error,
}

impl fmt::Display for SerialiseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot serialise the {} report: {}", self.command, self.source)
    }
}

impl std::error::Error for SerialiseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// A breach of the contract found by the checks the reports' tests run
/// ([`renderings_agree`] and the test-only checks beside it): which report, and what in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractViolation {
    /// The report's command ([`Report::COMMAND`]).
    pub report: &'static str,
    /// The figure, cell or rendering at fault, and how.
    pub detail: String,
}

impl ContractViolation {
    fn of<R: Report>(detail: impl Into<String>) -> ContractViolation {
        ContractViolation { report: R::COMMAND, detail: detail.into() }
    }
}

impl fmt::Display for ContractViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the {} report: {}", self.report, self.detail)
    }
}

/// The envelope of every JSON report: the schema's name and version, the signal, the report.
#[derive(Serialize)]
struct Envelope<'a, R: Serialize> {
    /// `schedlab-<command>`.
    schema: String,
    /// Raised when a field changes meaning or goes away.
    schema_version: u32,
    /// The signal that stopped the work (SIGINT, SIGTERM, SIGHUP), if one did.
    signal: Option<&'a str>,
    /// The outcome: the stop, the disturbed runs, the failures, the warnings (merged).
    outcome: Outcome,
    /// Every verdict cell of the report's tables, as the page and the text show it.
    judgements: Vec<JudgementRow>,
    /// Every figure the report's tables refused as one its quantity cannot have; in the
    /// report's own fields each is `null` at its path, with `<field>_not_estimable` beside it
    /// ([`refuse_at`]).
    not_estimable: Vec<NotEstimableRow>,
    #[serde(flatten)]
    report: &'a R,
}

/// A refused figure in the JSON: where it stands in the tables and why, never its value.
#[derive(Serialize)]
struct NotEstimableRow {
    table: String,
    /// The row's first cell (its name).
    row: String,
    column: String,
    why: String,
    /// The report's field that held it, as a JSON Pointer into the report's own fields (now
    /// `null` there); `null` for a figure the table derives, which no field holds.
    path: Option<String>,
}

/// The envelope's own fields: the report's are the others.
const ENVELOPE_FIELDS: [&str; 5] =
    ["schema", "schema_version", "outcome", "judgements", "not_estimable"];

/// A verdict cell in the JSON: where it stands and what it says.
#[derive(Serialize)]
struct JudgementRow {
    table: String,
    /// The row's first cell (its name).
    row: String,
    column: String,
    #[serde(flatten)]
    judgement: Judgement,
}

/// Each field named in `fields`, at any depth of `value`, that holds a verdict (not `null`)
/// made to say "not judged: disturbed".
fn unjudge_fields(value: &mut serde_json::Value, fields: &[&str]) {
    match value {
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| unjudge_fields(v, fields)),
        serde_json::Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if fields.contains(&key.as_str()) && !v.is_null() {
                    *v = serde_json::Value::String(NOT_JUDGED_DISTURBED.into());
                } else {
                    unjudge_fields(v, fields);
                }
            }
        }
        _ => {}
    }
}

/// Every figure `tables` refused: where, and why (the rows), and the paths of the report's JSON
/// that hold them, with why (those the table derives have none).
fn refusals(tables: &[Table]) -> (Vec<NotEstimableRow>, Vec<(String, String)>) {
    let mut rows = Vec::new();
    let mut paths = Vec::new();
    for table in tables {
        for r in &table.refused {
            let row = table.rows.get(r.row).and_then(|cells| cells.first());
            rows.push(NotEstimableRow {
                table: table.title.clone(),
                row: row.map_or("", Cell::shown_text).to_string(),
                column: table.columns.get(r.column).map_or("", |c| c.name.as_str()).to_string(),
                why: r.why.clone(),
                path: r.json_path.clone(),
            });
            if let Some(path) = &r.json_path {
                paths.push((path.clone(), r.why.clone()));
            }
        }
    }
    (rows, paths)
}

/// Whether the JSON number `x` is the refused figure `value`: the same in the table's unit,
/// or scaled by a power of 1000 (a time kept in ns, shown in µs) or by 100 (a fraction shown
/// as a percentage), to within rounding in the last bits.
fn same_figure(x: f64, value: f64) -> bool {
    const SCALES: [f64; 9] = [1.0, 1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9, 100.0, 1e-2];
    SCALES.iter().any(|scale| (x * scale - value).abs() <= 1e-9 * value.abs())
}

/// The field a JSON Pointer ends in, unescaped (RFC 6901: `~1` is `/`, `~0` is `~`), and the
/// pointer of the value that holds it.
fn split_pointer(path: &str) -> Option<(&str, String)> {
    let (parent, key) = path.rsplit_once('/')?;
    Some((parent, key.replace("~1", "/").replace("~0", "~")))
}

/// The figure at each of the `refused` paths of `own` (the report's own fields) made `null`,
/// and, where an object holds it, `<field>_not_estimable` beside it saying why (unless the
/// report already says why there), as the reports that refuse a figure where they compute it
/// write it: the JSON says "not estimable" wherever the tables do, and never carries the value
/// refused. Only those paths: another field that happens to hold the same number stays. A path
/// that leads nowhere changes nothing ([`renderings_agree`] fails on it).
fn refuse_at(own: &mut serde_json::Value, refused: &[(String, String)]) {
    use serde_json::Value;
    for (path, why) in refused {
        let Some(figure) = own.pointer_mut(path) else { continue };
        *figure = Value::Null;
        let Some((parent, key)) = split_pointer(path) else { continue };
        if let Some(Value::Object(map)) = own.pointer_mut(parent) {
            map.entry(format!("{key}_not_estimable")).or_insert(Value::String(why.clone()));
        }
    }
}

/// Every verdict cell of `tables`.
fn judgements(tables: &[Table]) -> Vec<JudgementRow> {
    let mut out = Vec::new();
    for table in tables {
        for cells in &table.rows {
            let row = cells.first().map_or("", Cell::shown_text);
            for (column, cell) in table.columns.iter().zip(cells) {
                if let Cell::Judged(judgement) = cell {
                    out.push(JudgementRow {
                        table: table.title.clone(),
                        row: row.to_string(),
                        column: column.name.clone(),
                        judgement: judgement.clone(),
                    });
                }
            }
        }
    }
    out
}

/// Every experiment's report (see the module documentation for the contract).
pub trait Report: Serialize + Sized {
    /// The subcommand (`compare`): the page's title and the JSON schema's name.
    const COMMAND: &'static str;
    /// The JSON schema's version (raised when a field changes meaning or goes; compare's stays
    /// at 4 with `--baseline` files: its bounded figures were already `null` with their reason).
    const SCHEMA_VERSION: u32;
    /// Whether the command draws a chart for `--svg` (known before any work, so that `--svg` on
    /// a command that draws none is refused then).
    const DRAWS: bool = true;
    /// The fields of its JSON, at any depth, whose values are verdicts on measured figures: on
    /// disturbed runs the JSON says "not judged: disturbed" in their place (a `null`, no
    /// verdict, stays), as the `judgements` do ([`Report::json_in`]).
    const VERDICT_FIELDS: &'static [&'static str] = &[];

    fn provenance(&self) -> Provenance;

    /// The terminal text; its verdicts are [`Report::judge`]'s of `view`. By default the
    /// provenance line, then the tables ([`text_of_tables`]) and the outcome
    /// ([`text_of_outcome`]): a text that shows no figure its page and JSON lack.
    fn text(&self, view: View) -> String {
        let tables = text_of_tables(&self.tables(self.judge(view)));
        let outcome = text_of_outcome(&self.outcome());
        format!("{}\n\n{tables}{outcome}", self.provenance().head())
    }

    /// The tables, as data; their verdict cells made by `judge` (see the module documentation).
    fn tables(&self, judge: Judge) -> Vec<Table>;

    /// The judge of the report's figures in `view`: its outcome's, or one of disturbed runs
    /// when the view asks.
    fn judge(&self, view: View) -> Judge {
        if view.disturbed {
            Judge::disturbed()
        } else {
            self.outcome().judge()
        }
    }

    /// The charts; the first drawable one is `--svg`'s.
    fn charts(&self) -> Vec<Chart> {
        Vec::new()
    }

    /// `--svg`'s chart: by default the first of [`Report::charts`]; `None` when the command
    /// draws none (then `--svg` is refused before any work: [`Report::DRAWS`]).
    fn svg_chart(&self) -> Option<Chart> {
        self.charts().into_iter().next()
    }

    fn outcome(&self) -> Outcome;

    /// Sections of prose the page shows after the tables (notes, settings), as (heading, text).
    fn prose(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// A trace file the work wrote, linked from the page for Perfetto (`html::Page::trace`).
    fn trace(&self) -> Option<&std::path::Path> {
        None
    }

    /// The JSON document: the envelope around the report's fields.
    fn json(&self, signal: Option<&str>) -> Result<String, SerialiseError> {
        self.json_in(signal, View::default())
    }

    /// The JSON document with the verdicts of `view` ([`Report::judge`]).
    fn json_in(&self, signal: Option<&str>, view: View) -> Result<String, SerialiseError> {
        let mut outcome = self.outcome();
        outcome.warnings = merged(&outcome.warnings);
        let judge = self.judge(view);
        let tables = self.tables(judge);
        let judgements = judgements(&tables);
        let (not_estimable, refused_paths) = refusals(&tables);
        let schema = format!("schedlab-{}", Self::COMMAND);
        let schema_version = Self::SCHEMA_VERSION;
        let envelope = Envelope {
            schema,
            schema_version,
            signal,
            outcome,
            judgements,
            not_estimable,
            report: self,
        };
        let cannot = |source| SerialiseError { command: Self::COMMAND, source };
        if !judge.judges() || !refused_paths.is_empty() {
            // The report's own verdict fields and refused figures too (the fields then come in
            // alphabetical order).
            let mut value = serde_json::to_value(&envelope).map_err(cannot)?;
            if let serde_json::Value::Object(fields) = &mut value {
                // The envelope's own fields set aside: the rest are the report's, at any depth.
                let envelope: Vec<_> =
                    ENVELOPE_FIELDS.iter().filter_map(|k| fields.remove_entry(*k)).collect();
                let mut own = serde_json::Value::Object(std::mem::take(fields));
                if !judge.judges() {
                    unjudge_fields(&mut own, Self::VERDICT_FIELDS);
                }
                refuse_at(&mut own, &refused_paths);
                if let serde_json::Value::Object(own) = own {
                    *fields = own;
                }
                fields.extend(envelope);
            }
            return serde_json::to_string_pretty(&value).map(|text| text + "\n").map_err(cannot);
        }
        serde_json::to_string_pretty(&envelope).map(|text| text + "\n").map_err(cannot)
    }

    /// The HTML page: the outcome's box, each table with the charts beside it, the other
    /// charts, the prose, and the terminal text folded away at the end.
    fn page(&self, view: View) -> Page {
        let mut page = Page::new(format!("schedlab {}", Self::COMMAND), &self.provenance());
        let o = self.outcome();
        let failed = o.failures_to_say();
        page.outcome(o.interrupted, &o.disturbed, &failed, &merged(&o.warnings));
        let charts = self.charts();
        let mut placed = vec![false; charts.len()];
        for table in self.tables(self.judge(view)) {
            let title = table.title.clone();
            page.data(table);
            for (i, chart) in charts.iter().enumerate() {
                if chart.beside.as_deref() == Some(title.as_str()) {
                    add_chart(&mut page, chart);
                    placed[i] = true;
                }
            }
        }
        for (chart, _) in charts.iter().zip(&placed).filter(|(_, placed)| !**placed) {
            add_chart(&mut page, chart);
        }
        for (heading, text) in self.prose() {
            page.table(heading, text);
        }
        if let Some(trace) = self.trace() {
            page.trace(trace);
        }
        page.terminal(self.text(view));
        page
    }
}

/// The widest line of a report's text in columns, its first `skip` lines (the provenance line)
/// left out: what the reports' tests hold to 130.
#[cfg(test)]
pub(crate) fn widest_line(text: &str, skip: usize) -> usize {
    text.lines().skip(skip).map(|l| l.chars().count()).max().unwrap_or(0)
}

/// A report's terminal text, held to what every report's test holds it to: its three
/// renderings agree ([`renderings_agree`]), and no line of the text but its first `skip` (the
/// provenance line) is wider than 130 columns. Panics with the breach, or with the text.
#[cfg(test)]
#[track_caller]
pub(crate) fn text_within_contract<R: Report>(report: &R, skip: usize) -> String {
    renderings_agree(report).unwrap();
    let text = report.text(View::default());
    let widest = widest_line(&text, skip);
    assert!(widest <= 130, "a line of {widest} columns:\n{text}");
    text
}

/// The judgements and warnings of a report rendered in `view` (issue 44, item 2), for the
/// tests of every kind of report: where the report judges a figure on undisturbed runs, a
/// disturbed rendering (a disturbed outcome, or `view.disturbed`) shows "not judged: disturbed"
/// instead, in each of its tables, its text, its page and its JSON, and nowhere a verdict; and
/// no warning is said twice in the text or on the page. The verdicts it found undisturbed, or
/// the first breach.
#[cfg(test)]
pub(crate) fn judged_only_when_undisturbed<R: Report>(
    report: &R,
    view: View,
) -> Result<usize, ContractViolation> {
    if report.judge(view).judges() {
        return Err(ContractViolation::of::<R>("the view is not disturbed: nothing to check"));
    }
    let breach = ContractViolation::of::<R>;
    let undisturbed = Judge::undisturbed_for_tests();
    let verdicts = |tables: &[Table]| -> Vec<(String, usize, usize, Verdict)> {
        let mut out = Vec::new();
        for t in tables {
            for (r, cells) in t.rows.iter().enumerate() {
                for (c, cell) in cells.iter().enumerate() {
                    if let Cell::Judged(j) = cell {
                        out.push((t.title.clone(), r, c, j.verdict()));
                    }
                }
            }
        }
        out
    };
    let judged = verdicts(&report.tables(undisturbed));
    let judged: Vec<_> = judged.into_iter().filter(|v| v.3 != Verdict::NotJudged).collect();
    let tables = report.tables(report.judge(view));
    for (title, r, c, _) in &judged {
        let cell = tables.iter().find(|t| t.title == *title).and_then(|t| t.rows.get(*r)?.get(*c));
        if cell.map(Cell::shown_text) != Some(NOT_JUDGED_DISTURBED) {
            let at = format!("{title:?}, row {r}, column {c}");
            return Err(breach(format!("{at}: {cell:?} on disturbed runs")));
        }
    }
    let unjudged = |text: &str| text.matches(NOT_JUDGED_DISTURBED).count();
    let text = report.text(view);
    if unjudged(&text) < judged.len() {
        let said = unjudged(&text);
        let verdicts = judged.len();
        return Err(breach(format!("{verdicts} verdicts, the text says not judged {said} times")));
    }
    let page = report.page(view).render();
    for class in ["met", "missed", "inconclusive"] {
        if page.contains(&format!("<td class=\"{class}\"")) {
            return Err(breach(format!("a verdict ({class}) on the page of disturbed runs")));
        }
    }
    if unjudged(&page) < judged.len() {
        let said = unjudged(&page);
        let verdicts = judged.len();
        return Err(breach(format!("{verdicts} verdicts, the page says not judged {said} times")));
    }
    let json = report.json_in(None, view).map_err(|e| breach(e.to_string()))?;
    let json: serde_json::Value =
        serde_json::from_str(&json).map_err(|e| breach(format!("the JSON does not parse: {e}")))?;
    let in_json = json["judgements"].as_array().cloned().unwrap_or_default();
    if let Some(j) = in_json.iter().find(|j| j["verdict"] != "not-judged") {
        return Err(breach(format!("a verdict in the JSON of disturbed runs: {j}")));
    }
    let in_json = in_json.iter().filter(|j| j["shown"] == NOT_JUDGED_DISTURBED).count();
    if in_json < judged.len() {
        return Err(breach(format!("{} verdicts, {in_json} not judged in the JSON", judged.len())));
    }
    let mut own = json.clone();
    if let serde_json::Value::Object(fields) = &mut own {
        fields.remove("judgements");
    }
    let mut raw = Vec::new();
    verdict_values(&own, R::VERDICT_FIELDS, &mut raw);
    if let Some(v) = raw.iter().find(|v| !v.is_null() && **v != NOT_JUDGED_DISTURBED) {
        return Err(breach(format!("a verdict field of the JSON says {v} on disturbed runs")));
    }
    match said_twice(&text, &page) {
        Some(twice) => Err(breach(twice)),
        None => Ok(judged.len()),
    }
}

/// The values of the fields named `fields` at any depth of `value`.
#[cfg(test)]
fn verdict_values(value: &serde_json::Value, fields: &[&str], out: &mut Vec<serde_json::Value>) {
    match value {
        serde_json::Value::Array(items) => {
            items.iter().for_each(|v| verdict_values(v, fields, out));
        }
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                if fields.contains(&key.as_str()) {
                    out.push(v.clone());
                } else {
                    verdict_values(v, fields, out);
                }
            }
        }
        _ => {}
    }
}

/// The first warning line said twice in `text` or item said twice in the page's box, if one is.
#[cfg(test)]
fn said_twice(text: &str, page: &str) -> Option<String> {
    let warnings: Vec<&str> = text.lines().filter(|l| l.starts_with("warning: ")).collect();
    if let Some(twice) = warnings.iter().enumerate().find(|(i, w)| warnings[..*i].contains(w)) {
        return Some(format!("said twice in the text: {}", twice.1));
    }
    let start = page.find("<section class=\"warnings\"").unwrap_or(page.len());
    let the_box = &page[start..];
    let the_box = &the_box[..the_box.find("</section>").unwrap_or(the_box.len())];
    let items: Vec<&str> =
        the_box.split("<li").skip(1).map(|i| i.split("</li>").next().unwrap_or("")).collect();
    // An item without its tag's end and the prefixes a message may carry.
    let key = |i: &str| {
        let text = i.split_once('>').map_or(i, |(_, text)| text);
        text.trim_start_matches("Disturbed: ").trim_start_matches("warning: ").trim().to_string()
    };
    for (n, item) in items.iter().enumerate() {
        if items[..n].iter().any(|seen| key(seen) == key(item)) {
            return Some(format!("said twice on the page: {item}"));
        }
    }
    None
}

/// The terminal text of a report drawn from its tables: each laid out by
/// [`Table::to_text`], a blank line between them. A report whose text is this cannot show a
/// figure there that its page and JSON do not have.
pub fn text_of_tables(tables: &[Table]) -> String {
    tables.iter().map(Table::to_text).collect::<Vec<_>>().join("\n")
}

/// The outcome in the terminal, after the tables: the stop, each disturbed run, each failure
/// not said as it happened ([`Outcome::failures_to_say`]), each warning, wrapped like a table's
/// notes; empty when there is nothing to say. The page says the same in its box at the top.
pub fn text_of_outcome(outcome: &Outcome) -> String {
    let mut said = Vec::new();
    if outcome.interrupted {
        said.push("interrupted: the figures cover the part that ran".to_string());
    }
    said.extend(outcome.disturbed.iter().map(|d| format!("disturbed: {d}")));
    said.extend(outcome.failures_to_say().iter().map(|m| format!("FAILED: {m}")));
    said.extend(merged(&outcome.warnings).iter().map(|w| format!("warning: {}", w.line())));
    let mut out = String::new();
    // Each line of a message starts at the left; a line wrapped goes on indented.
    for line in said.iter().flat_map(|message| message.lines()) {
        for (i, part) in super::table::wrap(line, super::table::NOTE_WIDTH).iter().enumerate() {
            out.push_str(if i == 0 { "" } else { "  " });
            out.push_str(part);
            out.push('\n');
        }
    }
    out
}

/// A chart on a page: inline, interactive in a frame of its own, or the reason it is missing.
fn add_chart(page: &mut Page, chart: &Chart) {
    match (&chart.svg, chart.interactive) {
        (Ok(svg), false) => page.figure(chart.title.clone(), svg.clone()),
        (Ok(svg), true) => page.interactive(chart.title.clone(), svg.clone()),
        (Err(why), _) => page.undrawn(chart.title.clone(), why.to_string()),
    };
}

/// Whether a report's three renderings agree on its figures: every number and verdict of its
/// tables shows the same in the terminal text, on the page and in the JSON (a JSON number that
/// rounds to what the cell shows, in the table's unit or scaled by a power of 1000, the scale a
/// column may choose), and every figure its tables refused as not estimable is refused in the
/// JSON too: listed in `not_estimable` with its path, and `null` at that path, where the
/// report's own fields as serde writes them hold the figure refused (so the path is the
/// figure's, not a neighbour's; the path of a figure shown is checked so too, before a run
/// refuses it). A refused figure without a path ([`Cell::at`]) claims that no field holds it:
/// its value must then be in no number of the report's own fields (a field that held it would
/// keep the raw figure in the JSON: its cell needs its path). The error names the first figure
/// that does not agree. For the reports whose text is drawn from their tables
/// ([`text_of_tables`]), and the tests that hold them to it.
pub fn renderings_agree<R: Report>(report: &R) -> Result<(), ContractViolation> {
    let breach = ContractViolation::of::<R>;
    let text = report.text(View::default());
    let page = report.page(View::default()).render();
    let json = report.json(None).map_err(|e| breach(e.to_string()))?;
    let value: serde_json::Value =
        serde_json::from_str(&json).map_err(|e| breach(format!("the JSON does not parse: {e}")))?;
    let mut numbers = Vec::new();
    collect_numbers(&value, &mut numbers);
    let mut own_numbers = Vec::new();
    if let serde_json::Value::Object(fields) = &value {
        let own = fields.iter().filter(|(k, _)| !ENVELOPE_FIELDS.contains(&k.as_str()));
        own.for_each(|(_, v)| collect_numbers(v, &mut own_numbers));
    }
    let listed = value["not_estimable"].as_array().cloned().unwrap_or_default();
    // The report's own fields before any is refused: what each refusal's path must lead to.
    let raw = serde_json::to_value(report).map_err(|e| breach(e.to_string()))?;
    for table in report.tables(report.judge(View::default())) {
        for r in &table.refused {
            let column = table.columns.get(r.column).map_or("", |c| c.name.as_str());
            let at = format!("{:?}, row {}, column {column:?} ({})", table.title, r.row, r.why);
            match &r.json_path {
                Some(path) => {
                    let held = raw.pointer(path).and_then(serde_json::Value::as_f64);
                    if !held.is_some_and(|x| same_figure(x, r.value)) {
                        let held = raw.pointer(path).map_or("nothing".into(), |v| v.to_string());
                        return Err(breach(format!(
                            "{at}: its path {path} holds {held} in the report, not {}",
                            r.value
                        )));
                    }
                    match value.pointer(path) {
                        Some(serde_json::Value::Null) => {}
                        Some(x) => {
                            let shown = format!("{at}: refused in the tables, {x} at {path}");
                            return Err(breach(format!("{shown} in the JSON")));
                        }
                        None => return Err(breach(format!("{at}: no {path} in the JSON"))),
                    }
                }
                None => {
                    if let Some(x) = own_numbers.iter().find(|x| same_figure(**x, r.value)) {
                        return Err(breach(format!(
                            "{at}: refused in the tables, {x} in the JSON (a figure a field \
                             holds needs that field's path: Cell::at)"
                        )));
                    }
                }
            }
            let said = |n: &serde_json::Value| {
                n["table"] == table.title.as_str()
                    && n["column"] == column
                    && n["why"] == *r.why
                    && n["path"].as_str() == r.json_path.as_deref()
            };
            if !listed.iter().any(said) {
                return Err(breach(format!("{at}: not in the JSON's `not_estimable`")));
            }
        }
        for (row, cells) in table.rows.iter().enumerate() {
            for (column, cell) in table.columns.iter().zip(cells) {
                let shown = cell.shown_text();
                let at =
                    || format!("{:?}, row {row}, column {:?}: {shown:?}", table.title, column.name);
                if !text.contains(shown) {
                    return Err(breach(format!("{} is not in the terminal text", at())));
                }
                if !page.contains(&super::html::escape(shown)) {
                    return Err(breach(format!("{} is not on the page", at())));
                }
                if let super::table::Cell::Number { value, json_path, .. } = cell {
                    if !json_has(&numbers, shown) {
                        return Err(breach(format!("{} is in no JSON number", at())));
                    }
                    // The path a figure would be refused at is its own, refused or not.
                    let held = json_path.as_deref().map(|path| (path, raw.pointer(path)));
                    if let Some((path, held)) = held {
                        if !held.and_then(|v| v.as_f64()).is_some_and(|x| same_figure(x, *value)) {
                            let held = held.map_or("nothing".into(), |v| v.to_string());
                            return Err(breach(format!("{}: its path {path} holds {held}", at())));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

fn collect_numbers(value: &serde_json::Value, out: &mut Vec<f64>) {
    match value {
        serde_json::Value::Number(n) => out.extend(n.as_f64()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_numbers(v, out)),
        serde_json::Value::Object(fields) => fields.values().for_each(|v| collect_numbers(v, out)),
        _ => {}
    }
}

/// Whether one of `numbers`, in its unit or scaled by 1000^k (|k| ≤ 3), rounds to `shown` (a
/// plain decimal: a cell that shows more than a number is not looked up).
fn json_has(numbers: &[f64], shown: &str) -> bool {
    if shown.parse::<f64>().is_err() {
        return true;
    }
    let digits = shown.split_once('.').map_or(0, |(_, decimals)| decimals.len());
    let scales = [1.0, 1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9, 100.0];
    numbers.iter().any(|x| scales.iter().any(|scale| format!("{:.digits$}", x * scale) == shown))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(point: &str, message: &str) -> Warning {
        Warning::points(WarningKind::DisturbedByOtherLoad, vec![point.into()], message)
    }

    #[test]
    fn a_warning_is_said_once_per_kind_and_scope_naming_every_point_it_touches() {
        let loaded = "3 kernel run(s) were loaded";
        let warnings = vec![
            at("1 job", loaded),
            at("1 job", loaded),
            at("2 jobs", loaded),
            Warning::run(WarningKind::CleanUp, "clean-up: a loop device"),
            Warning::run(WarningKind::CleanUp, "clean-up: a loop device"),
            Warning::run(WarningKind::CleanUp, "clean-up: a cgroup"),
            Warning::run(WarningKind::Calibration, "no elevator cost measured"),
        ];
        let lines: Vec<String> = merged(&warnings).iter().map(Warning::line).collect();
        assert_eq!(
            lines,
            [
                format!("1 job, 2 jobs: {loaded}"),
                "clean-up: a loop device; clean-up: a cgroup".to_string(),
                "no elevator cost measured".to_string(),
            ]
        );
        let outcome = Outcome { warnings, ..Outcome::default() };
        let text = text_of_outcome(&outcome);
        assert_eq!(text.matches("warning: ").count(), 3, "the renderer's prefix, once: {text}");
        assert_eq!(text.matches(loaded).count(), 1, "{text}");
    }

    /// A report of nothing but an outcome: what every report's outcome is rendered by.
    #[derive(Serialize)]
    struct OnlyOutcome {
        #[serde(skip)]
        outcome: Outcome,
    }

    impl Report for OnlyOutcome {
        const COMMAND: &'static str = "test";
        const SCHEMA_VERSION: u32 = 1;
        fn provenance(&self) -> Provenance {
            Provenance::collect()
        }
        fn text(&self, _view: View) -> String {
            text_of_outcome(&self.outcome)
        }
        fn tables(&self, _judge: Judge) -> Vec<Table> {
            Vec::new()
        }
        fn outcome(&self) -> Outcome {
            self.outcome.clone()
        }
    }

    #[test]
    fn a_failure_told_as_it_happened_is_not_said_again_and_an_untold_one_is_never_lost() {
        let (told_run, told_output) = ("run 3 of 9 failed: no such device", "cannot write a.svg");
        let (untold_run, untold_output) = ("2 validation run(s) failed", "no chart: no points");
        let report = OnlyOutcome {
            outcome: Outcome {
                failed_runs: vec![Failure::told(told_run), Failure::untold(untold_run)],
                failed_outputs: vec![Failure::untold(untold_output), Failure::told(told_output)],
                ..Outcome::default()
            },
        };
        let text = report.text(View::default());
        let page = report.page(View::default()).render();
        for told in [told_run, told_output] {
            assert!(!text.contains(told), "said as it happened, again in the text: {text}");
            assert!(!page.contains(&super::super::html::escape(told)), "again on the page");
        }
        for untold in [untold_run, untold_output] {
            assert_eq!(text.matches(untold).count(), 1, "said once in the text: {text}");
            let shown = super::super::html::escape(untold);
            assert_eq!(page.matches(&shown).count(), 2, "in the box and the folded text");
        }
        let json: serde_json::Value = serde_json::from_str(&report.json(None).unwrap()).unwrap();
        let outcome = &json["outcome"];
        assert_eq!(outcome["failed_runs"], serde_json::json!([told_run, untold_run]));
        assert_eq!(outcome["failed_outputs"], serde_json::json!([untold_output, told_output]));
        let exit = report.outcome().failures().finish().unwrap_err();
        assert_eq!(exit.message, format!("{untold_run}; {untold_output}"));
        assert!(!exit.said_as_it_happened, "the untold ones are still to say: {exit:?}");
        let failed_outputs = vec![Failure::told(told_output)];
        let told_only = OnlyOutcome { outcome: Outcome { failed_outputs, ..Outcome::default() } };
        assert_eq!(told_only.text(View::default()), "", "nothing left to say");
        let exit = told_only.outcome().failures().finish().unwrap_err();
        assert!(exit.said_as_it_happened && exit.exit_code() == 3, "{exit:?}");
    }

    /// A report with figures its table refuses: a cost below 0 in a field and in a list; and a
    /// change, which may be below 0, in a table of its own.
    #[derive(Serialize)]
    struct Costs {
        extra_us: f64,
        per_point_us: Vec<f64>,
        own_us: f64,
        change_pct: f64,
        /// The path extra's cell names (a test names another field's).
        #[serde(skip)]
        extra_at: &'static str,
    }

    impl Report for Costs {
        const COMMAND: &'static str = "test";
        const SCHEMA_VERSION: u32 = 1;
        fn provenance(&self) -> Provenance {
            Provenance::collect()
        }
        fn text(&self, view: View) -> String {
            text_of_tables(&self.tables(self.judge(view)))
        }
        fn tables(&self, _judge: Judge) -> Vec<Table> {
            let mut t = Table::new("Costs", &[("what", ""), ("cost", "µs")]);
            t.row(vec![Cell::text("extra"), Cell::num(self.extra_us, 2).at(self.extra_at)]);
            for (i, us) in self.per_point_us.iter().enumerate() {
                let cost = Cell::num(*us, 2).at(format!("/per_point_us/{i}"));
                t.row(vec![Cell::text(format!("point {i}")), cost]);
            }
            t.row(vec![Cell::text("own"), Cell::num(self.own_us, 2).at("/own_us")]);
            let mut changes = Table::new("Changes", &[("what", ""), ("change", "%")]);
            changes.row(vec![Cell::text("extra"), Cell::num(self.change_pct, 1).at("/change_pct")]);
            vec![t, changes]
        }
        fn outcome(&self) -> Outcome {
            Outcome::default()
        }
    }

    /// The same report with its JSON changed by `edit` after the envelope made it: what the
    /// check must catch.
    struct Doctored(Costs, fn(&mut serde_json::Value));

    impl Serialize for Doctored {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            self.0.serialize(s)
        }
    }

    impl Report for Doctored {
        const COMMAND: &'static str = "test";
        const SCHEMA_VERSION: u32 = 1;
        fn provenance(&self) -> Provenance {
            self.0.provenance()
        }
        fn text(&self, view: View) -> String {
            self.0.text(view)
        }
        fn tables(&self, judge: Judge) -> Vec<Table> {
            self.0.tables(judge)
        }
        fn outcome(&self) -> Outcome {
            self.0.outcome()
        }
        fn json_in(&self, signal: Option<&str>, view: View) -> Result<String, SerialiseError> {
            let json = self.0.json_in(signal, view)?;
            let mut value: serde_json::Value = serde_json::from_str(&json).expect("its JSON");
            (self.1)(&mut value);
            Ok(value.to_string())
        }
    }

    fn costs() -> Costs {
        Costs {
            extra_us: -51.9,
            per_point_us: vec![3.25, -0.5],
            own_us: 2.5,
            change_pct: 3.0,
            extra_at: "/extra_us",
        }
    }

    #[test]
    fn a_figure_the_tables_refuse_is_refused_in_the_json_never_carried_raw() {
        let report = costs();
        renderings_agree(&report).unwrap();
        let json: serde_json::Value = serde_json::from_str(&report.json(None).unwrap()).unwrap();
        assert_eq!(json["extra_us"], serde_json::Value::Null, "{json}");
        assert_eq!(json["extra_us_not_estimable"], "not estimable: -51.90 µs < 0");
        assert_eq!(json["per_point_us"], serde_json::json!([3.25, null]));
        assert_eq!(json["own_us"], 2.5, "a figure within its bound stays");
        let listed: Vec<(&str, &str, &str)> = json["not_estimable"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                let text = |key: &str| n[key].as_str().unwrap();
                (text("row"), text("why"), text("path"))
            })
            .collect();
        let why = |shown: &str| format!("not estimable: {shown} µs < 0");
        let (extra, point) = (why("-51.90"), why("-0.50"));
        assert_eq!(
            listed,
            [
                ("extra", extra.as_str(), "/extra_us"),
                ("point 1", point.as_str(), "/per_point_us/1")
            ]
        );
        // The check fails on a JSON that carries the raw figure at its path, or does not list
        // it, or on a path that leads to another figure than the one refused.
        let raw = Doctored(costs(), |json| json["extra_us"] = serde_json::json!(-51.9));
        let e = renderings_agree(&raw).unwrap_err().to_string();
        assert!(e.contains("refused in the tables, -51.9 at /extra_us in the JSON"), "{e}");
        let unlisted = Doctored(costs(), |json| json["not_estimable"] = serde_json::json!([]));
        let e = renderings_agree(&unlisted).unwrap_err().to_string();
        assert!(e.contains("not in the JSON's `not_estimable`"), "{e}");
        let misplaced = Costs { extra_at: "/own_us", ..costs() };
        let e = renderings_agree(&misplaced).unwrap_err().to_string();
        assert!(e.contains("its path /own_us holds 2.5 in the report, not -51.9"), "{e}");
        // A figure within its bound is held to its path too, before a run refuses it.
        let shown_misplaced = Costs { extra_us: 1.0, extra_at: "/own_us", ..costs() };
        let e = renderings_agree(&shown_misplaced).unwrap_err().to_string();
        assert!(e.contains("\"1.00\": its path /own_us holds 2.5"), "{e}");
    }

    /// The figure refused is nulled where its cell says the report holds it, not wherever its
    /// value is: a change of -51.9 %, beside a cost of -51.9 µs refused, stays in the JSON
    /// (matching by value nulled both, and the check then found the change in no JSON number).
    #[test]
    fn a_field_that_holds_the_same_number_as_a_refused_figure_stays() {
        let report = Costs { change_pct: -51.9, ..costs() };
        renderings_agree(&report).unwrap();
        let json: serde_json::Value = serde_json::from_str(&report.json(None).unwrap()).unwrap();
        assert_eq!(json["extra_us"], serde_json::Value::Null, "{json}");
        assert_eq!(json["change_pct"], -51.9, "{json}");
        assert!(json.get("change_pct_not_estimable").is_none(), "{json}");
        let listed = json["not_estimable"].as_array().unwrap();
        assert!(listed.iter().all(|n| n["path"] != "/change_pct"), "{json}");
    }

    #[test]
    fn only_an_undisturbed_outcome_judges() {
        let quiet = Outcome::default();
        let met = quiet.judge().cell(Verdict::Met, "met");
        assert!(matches!(&met, Cell::Judged(j) if j.verdict() == Verdict::Met), "{met:?}");
        let loaded = Outcome { disturbed: vec!["other processes used 1.6 CPUs".into()], ..quiet };
        for judge in [loaded.judge(), Judge::disturbed()] {
            let cell = judge.cell(Verdict::Met, "met");
            let unjudged = matches!(&cell, Cell::Judged(j) if j.verdict() == Verdict::NotJudged);
            assert!(unjudged, "{cell:?}");
            assert_eq!(cell.shown_text(), NOT_JUDGED_DISTURBED);
        }
    }
}

//! One self-contained HTML file per run (`--report PATH.html`): the command line, the provenance,
//! the text tables, the charts inline, the flamegraphs inline and still interactive, the warnings
//! the run printed, and links to any trace file.
//!
//! Contract: the page references nothing outside itself: no network, no external script, font or
//! stylesheet (an inline `<style>`, system fonts). Every text is HTML-escaped; a plain chart's SVG
//! markup is inlined as it is (it comes from this workbench's own drawing code). An interactive
//! flamegraph (inferno's SVG, whose script looks its elements up by id through `document`) gets a
//! document of its own: an `<iframe>` whose `src` is a `data:image/svg+xml` URL, so that its script
//! runs and its ids cannot clash with the page's or another flamegraph's (with a guard that lets
//! its zoom and search work in such a document: [`HISTORY_GUARD`]). The only `http` text is
//! the Perfetto address printed beside a trace file's link.

use super::outcome::Warning;
use super::table::{Cell, Table, Verdict};
use crate::files::provenance::Provenance;
use std::fmt::Write as _;
use std::path::Path;

/// One part of a page, in the order added.
enum Block {
    /// A heading and the preformatted text the command printed.
    Table { heading: String, text: String },
    /// A chart: SVG markup inlined.
    Figure { title: String, svg: String },
    /// An SVG with its own script (inferno's flamegraphs), in a document of its own.
    Interactive { title: String, svg: String },
    /// A trace file to open in Perfetto.
    Trace { path: String },
    /// A table of data: column heads and rows of cells (text, escaped).
    Grid { heading: String, columns: Vec<String>, rows: Vec<Vec<String>> },
    /// A typed table (`report::table`): units in the header, numbers right-aligned, sortable.
    Data(Table),
    /// A chart that could not be drawn, and why.
    Undrawn { title: String, why: String },
    /// The terminal text, folded away (everything the command printed, as printed).
    Terminal(String),
}

/// The box at the top of a page: what the reader must know before reading any figure.
#[derive(Default)]
struct OutcomeBox {
    interrupted: bool,
    disturbed: Vec<String>,
    failed: Vec<String>,
}

/// A page being assembled; [`Page::render`] gives the file's text.
pub struct Page {
    title: String,
    provenance: Provenance,
    blocks: Vec<Block>,
    /// The report's own warnings, typed (said first, each with "warning: " before it).
    typed: Vec<Warning>,
    /// Lines the run printed (`warning: ...`, `error: ...`), said unless a typed warning, a
    /// disturbed run or a failure already says them.
    warnings: Vec<String>,
    outcome: OutcomeBox,
}

impl Page {
    pub fn new(title: impl Into<String>, provenance: &Provenance) -> Self {
        let (title, provenance) = (title.into(), provenance.clone());
        let (blocks, typed, warnings) = (Vec::new(), Vec::new(), Vec::new());
        Page { title, provenance, blocks, typed, warnings, outcome: OutcomeBox::default() }
    }

    /// A section of preformatted text (shown as text: markup in it is escaped).
    pub fn table(&mut self, heading: impl Into<String>, text: impl Into<String>) -> &mut Self {
        self.blocks.push(Block::Table { heading: heading.into(), text: text.into() });
        self
    }

    /// A table of data, drawn as an HTML table (cells are text: markup in them is escaped).
    pub fn grid(
        &mut self,
        heading: impl Into<String>,
        columns: Vec<String>,
        rows: Vec<Vec<String>>,
    ) -> &mut Self {
        self.blocks.push(Block::Grid { heading: heading.into(), columns, rows });
        self
    }

    /// A chart drawn by this workbench (SVG markup, inlined).
    pub fn figure(&mut self, title: impl Into<String>, svg: impl Into<String>) -> &mut Self {
        self.blocks.push(Block::Figure { title: title.into(), svg: svg.into() });
        self
    }

    /// Each `(title, svg)` as a figure: the hook for charts drawn by the caller.
    pub fn figures(&mut self, figures: Vec<(String, String)>) -> &mut Self {
        for (title, svg) in figures {
            self.figure(title, svg);
        }
        self
    }

    /// An SVG with its own script (a flamegraph): kept interactive in a frame of its own.
    pub fn interactive(&mut self, title: impl Into<String>, svg: impl Into<String>) -> &mut Self {
        self.blocks.push(Block::Interactive { title: title.into(), svg: svg.into() });
        self
    }

    /// A link to a trace file, with how to open it.
    pub fn trace(&mut self, path: &Path) -> &mut Self {
        self.blocks.push(Block::Trace { path: path.display().to_string() });
        self
    }

    /// A typed table, drawn as an HTML table.
    pub fn data(&mut self, table: Table) -> &mut Self {
        self.blocks.push(Block::Data(table));
        self
    }

    /// A chart that could not be drawn: its title and why.
    pub fn undrawn(&mut self, title: impl Into<String>, why: impl Into<String>) -> &mut Self {
        self.blocks.push(Block::Undrawn { title: title.into(), why: why.into() });
        self
    }

    /// The terminal text, folded away at the end of the page.
    pub fn terminal(&mut self, text: impl Into<String>) -> &mut Self {
        self.blocks.push(Block::Terminal(text.into()));
        self
    }

    /// What the reader must know before any figure, in the box at the top: the work was
    /// interrupted, runs were disturbed (each said), failures still to say (each once);
    /// `warnings` (merged: `outcome::merged`) lead the warnings' list.
    pub fn outcome(
        &mut self,
        interrupted: bool,
        disturbed: &[String],
        failed: &[String],
        warnings: &[Warning],
    ) -> &mut Self {
        self.outcome.interrupted |= interrupted;
        // Each run said once, however many of the report's parts name it.
        push_new(&mut self.outcome.disturbed, disturbed.iter());
        push_new(&mut self.outcome.failed, failed.iter());
        self.typed.extend(warnings.iter().cloned());
        self
    }

    /// The warnings and errors the run printed, listed in their own section.
    pub fn warnings(&mut self, warnings: Vec<String>) -> &mut Self {
        self.warnings.extend(warnings);
        self
    }

    /// The whole file.
    pub fn render(&self) -> String {
        let p = &self.provenance;
        let mut h = String::with_capacity(16 * 1024);
        h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        let _ = writeln!(
            h,
            "<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>",
            escape(&self.title)
        );
        let _ = writeln!(h, "<h1>{}</h1>", escape(&self.title));
        let _ = writeln!(h, "<p class=\"cmd\"><code>{}</code></p>", escape(&p.command_line));
        h.push_str("<table class=\"prov\">\n");
        let cpus = format!("{} ({})", p.cpus, p.cpu_model);
        for (k, v) in [
            ("commit", p.commit.as_str()),
            ("date", &p.date),
            ("CPUs", &cpus),
            ("OS", &p.os),
            ("rustc", &p.rustc),
            ("build", p.profile),
        ] {
            let _ = writeln!(h, "<tr><th>{k}</th><td>{}</td></tr>", escape(v));
        }
        h.push_str("</table>\n");
        let o = &self.outcome;
        // One message once: the CLI's printed copy ("schedlab: warning: ...") and the report's
        // own are the same message, and a warning that repeats a disturbed run or a failure
        // already said is not said again.
        let mut said: Vec<String> =
            o.disturbed.iter().chain(&o.failed).map(|m| message_key(m).to_string()).collect();
        let mut warnings: Vec<String> = Vec::new();
        for w in &self.typed {
            let copies = w.said_as();
            if copies.iter().all(|c| !said.iter().any(|s| s == message_key(c))) {
                warnings.push(format!("warning: {}", w.line()));
            }
            said.extend(copies.iter().map(|c| message_key(c).to_string()));
        }
        for w in &self.warnings {
            let key = message_key(w);
            if !said.iter().any(|s| s == key) {
                said.push(key.to_string());
                warnings.push(w.clone());
            }
        }
        if o.interrupted || !o.disturbed.is_empty() || !o.failed.is_empty() || !warnings.is_empty()
        {
            h.push_str(
                "<section class=\"warnings\" id=\"outcome\">\n<h2>Read this first</h2>\n<ul>\n",
            );
            if o.interrupted {
                h.push_str("<li class=\"bad\">Interrupted: the figures below cover the part that ran.</li>\n");
            }
            for f in &o.failed {
                let _ = writeln!(h, "<li class=\"bad\">{}</li>", escape(f));
            }
            for d in &o.disturbed {
                let _ = writeln!(h, "<li>Disturbed: {}</li>", escape(d));
            }
            for w in warnings {
                let _ = writeln!(h, "<li>{}</li>", escape(&w));
            }
            h.push_str("</ul>\n</section>\n");
        }
        for block in &self.blocks {
            match block {
                Block::Table { heading, text } => {
                    let _ = writeln!(
                        h,
                        "<section>\n<h2>{}</h2>\n<pre>{}</pre>\n</section>",
                        escape(heading),
                        escape(text.trim_end())
                    );
                }
                Block::Grid { heading, columns, rows } => {
                    let _ = writeln!(
                        h,
                        "<section>\n<h2>{}</h2>\n<table class=\"grid\">",
                        escape(heading)
                    );
                    h.push_str("<tr>");
                    for c in columns {
                        let _ = write!(h, "<th>{}</th>", escape(c));
                    }
                    h.push_str("</tr>\n");
                    for row in rows {
                        h.push_str("<tr>");
                        for c in row {
                            let _ = write!(h, "<td>{}</td>", escape(c));
                        }
                        h.push_str("</tr>\n");
                    }
                    h.push_str("</table>\n</section>\n");
                }
                Block::Data(table) => render_table(&mut h, table),
                Block::Undrawn { title, why } => {
                    let _ = writeln!(
                        h,
                        "<p class=\"undrawn\">{}: not drawn ({})</p>",
                        escape(title),
                        escape(why)
                    );
                }
                Block::Terminal(text) => {
                    let _ = writeln!(
                        h,
                        "<section>\n<details>\n<summary>The terminal output, as printed</summary>\n<pre>{}</pre>\n</details>\n</section>",
                        escape(text.trim_end())
                    );
                }
                Block::Figure { title, svg } => {
                    let _ = writeln!(
                        h,
                        "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>",
                        strip_prolog(svg),
                        escape(title)
                    );
                }
                Block::Interactive { title, svg } => {
                    let _ = writeln!(
                        h,
                        "<figure class=\"flame\">\n<iframe title=\"{t}\" style=\"height:{}px\" src=\"data:image/svg+xml;charset=utf-8,{}\"></iframe>\n<figcaption>{t} (interactive: click a frame to zoom, Search at the top right)</figcaption>\n</figure>",
                        svg_height(svg).unwrap_or(640) + 4,
                        percent_encode(&with_history_guard(svg)),
                        t = escape(title)
                    );
                }
                Block::Trace { path } => {
                    let _ = writeln!(
                        h,
                        "<section>\n<h2>Trace</h2>\n<p><a href=\"{}\">{}</a>: a Chrome / Perfetto trace; open it in ui.perfetto.dev (Open trace file) or chrome://tracing.</p>\n</section>",
                        escape(&file_url(path)),
                        escape(path)
                    );
                }
            }
        }
        if self.blocks.iter().any(|b| matches!(b, Block::Data(_))) {
            let _ = writeln!(h, "<script>{SORT_SCRIPT}</script>");
        }
        h.push_str("</body>\n</html>\n");
        h
    }
}

/// A typed table: a scrolling box of its own when wider than the page (the page itself never
/// scrolls sideways), units in the header, numbers right-aligned with their value for sorting,
/// verdicts styled.
/// Appends each message `list` does not hold yet (compared by [`message_key`]).
fn push_new<'a>(list: &mut Vec<String>, messages: impl Iterator<Item = &'a String>) {
    for m in messages {
        if !list.iter().any(|seen| message_key(seen) == message_key(m)) {
            list.push(m.clone());
        }
    }
}

/// A message without the prefixes its printed copy carries (`schedlab: `, `warning: `) and
/// without trailing space: what makes two messages the same.
fn message_key(message: &str) -> &str {
    let m = message.trim();
    let m = m.strip_prefix("schedlab: ").unwrap_or(m);
    m.strip_prefix("warning: ").unwrap_or(m).trim()
}

/// A table as HTML; a verdict cell styled by its verdict (on disturbed runs there is none to
/// style: `outcome::Judge`).
fn render_table(h: &mut String, table: &Table) {
    let _ = writeln!(
        h,
        "<section>\n<h2>{}</h2>\n<div class=\"scroll\"><table class=\"data\">",
        escape(&table.title)
    );
    h.push_str("<thead><tr>");
    // The unit also as an attribute, so that a test of the page can tell a column that names
    // its unit from one that does not, whatever the heading's words.
    for column in &table.columns {
        let heading = escape(&Table::heading(column));
        let _ = match &column.unit {
            Some(unit) => {
                let unit = escape(unit);
                write!(h, "<th title=\"click to sort\" data-unit=\"{unit}\">{heading}</th>")
            }
            None => write!(h, "<th title=\"click to sort\">{heading}</th>"),
        };
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for row in &table.rows {
        h.push_str("<tr>");
        for cell in row {
            let _ = match cell {
                // A short word (a variant's name) is not broken across lines.
                Cell::Text { text } if text.chars().count() <= 16 => {
                    write!(h, "<td class=\"word\">{}</td>", escape(text))
                }
                Cell::Text { text } => write!(h, "<td>{}</td>", escape(text)),
                Cell::Number { value, shown, .. } => {
                    write!(h, "<td class=\"num\" data-v=\"{value}\">{}</td>", escape(shown))
                }
                Cell::Missing { why } => write!(h, "<td class=\"missing\">{}</td>", escape(why)),
                Cell::Check { passed, shown } => {
                    write!(
                        h,
                        "<td class=\"{}\">{}</td>",
                        if *passed { "pass" } else { "fail" },
                        escape(shown)
                    )
                }
                Cell::Judged(judgement) => {
                    let class = match judgement.verdict() {
                        Verdict::Met => "met",
                        Verdict::Missed => "missed",
                        Verdict::Inconclusive => "inconclusive",
                        Verdict::NotJudged => "unjudged",
                    };
                    write!(h, "<td class=\"{class}\">{}</td>", escape(judgement.shown()))
                }
            };
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody></table></div>\n");
    for note in &table.notes {
        let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(note));
    }
    h.push_str("</section>\n");
}

/// Sorting by a column on a click on its header (numbers by their value, words as words; a
/// second click reverses). The page's one script of its own; it fetches nothing.
const SORT_SCRIPT: &str = "document.querySelectorAll('table.data').forEach(function(t){\
t.querySelectorAll('th').forEach(function(th,i){var up=true;th.addEventListener('click',function(){\
var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows);\
function key(r){var c=r.cells[i];if(!c)return '';var v=c.getAttribute('data-v');return v===null?c.textContent:parseFloat(v);}\
rows.sort(function(x,y){var a=key(x),c=key(y);var n=(typeof a==='number'&&typeof c==='number')?a-c:String(a).localeCompare(String(c));return up?n:-n;});\
up=!up;rows.forEach(function(r){b.appendChild(r);});});});});";

/// The page's only style: system fonts, tables as monospace text, figures at the column width.
const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:1.5em auto;max-width:75em;padding:0 1em;color:#222;background:#fff}\
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em;border-bottom:1px solid #ccc}\
pre,code{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:12px}\
pre{background:#f6f6f6;padding:.6em;overflow-x:auto}.cmd code{background:#eef;padding:.2em .4em}\
table.prov{border-collapse:collapse;font-size:13px}table.prov th{text-align:left;padding-right:1em;color:#555}\
figure{margin:1.5em 0}figure svg{max-width:100%;height:auto}figcaption{font-size:13px;color:#555}\
iframe{width:100%;border:1px solid #ccc}\
table.grid{border-collapse:collapse;font-size:13px}table.grid th,table.grid td{border:1px solid #ddd;padding:.2em .5em;text-align:left}table.grid th{background:#f0f0f0}\
.warnings{border:2px solid #d9a400;background:#fff8e1;padding:.2em 1em;margin:1em 0}.warnings h2{border:none;margin-top:.4em}.warnings li{color:#6a3b00}.warnings li.bad{color:#a00000;font-weight:600}\
div.scroll{overflow-x:auto;max-width:100%}table.data{border-collapse:collapse;font-size:13px}\
table.data th{background:#f0f0f0;cursor:pointer;text-align:left;vertical-align:bottom}table.data th,table.data td{border:1px solid #ddd;padding:.2em .5em}\
table.data td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}table.data td.missing{color:#888}table.data td.word{white-space:nowrap}\
td.met,td.pass{background:#e3f4e3;color:#135e13}td.missed,td.fail{background:#fbe4e4;color:#8a1010}td.unjudged{background:#eee;color:#666;font-style:italic}td.inconclusive{background:#fff4d6;color:#6b4e00}\
p.note{font-size:12px;color:#555;margin:.3em 0}p.undrawn{color:#8a4b00}details pre{max-height:40em}";

/// Text made safe for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// An SVG document's markup from its `<svg` element on (an XML declaration or doctype is not
/// allowed inside HTML).
fn strip_prolog(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |at| &svg[at..])
}

/// Inferno's script records the zoom and the search in the address (`history.replaceState` with
/// `?x=..&y=..&s=..`); a `data:` document has an opaque origin, where that call throws, and the
/// search then stops before it shows what matched. This script, put first in the SVG, makes
/// that call do nothing where it would throw: zoom and search work, the address just does not
/// keep them.
const HISTORY_GUARD: &str =
    "<script><![CDATA[(function(){var keep=history.replaceState.bind(history);\
history.replaceState=function(s,t,u){try{keep(s,t,u);}catch(e){}};})();]]></script>";

/// `svg` with [`HISTORY_GUARD`] right after its root element's opening tag (unchanged when it has
/// none).
fn with_history_guard(svg: &str) -> String {
    match svg.find("<svg").and_then(|at| svg[at..].find('>').map(|end| at + end + 1)) {
        Some(end) => format!("{}{HISTORY_GUARD}{}", &svg[..end], &svg[end..]),
        None => svg.to_string(),
    }
}

/// The pixel height an SVG's root element declares (`height="534"`), if any: its frame's height.
fn svg_height(svg: &str) -> Option<u32> {
    let root = &svg[svg.find("<svg")?..];
    let root = &root[..root.find('>')?];
    let at = root.find(" height=\"")? + " height=\"".len();
    let value = &root[at..];
    value[..value.find('"')?]
        .trim_end_matches("px")
        .parse::<f64>()
        .ok()
        .filter(|h| h.is_finite() && *h > 0.0)
        .map(|h| h.min(10_000.0) as u32)
}

/// Appends `text` to `out` with every byte percent-encoded but ASCII letters, digits and `keep`.
fn percent_encode_onto(out: &mut String, text: &str, keep: &[u8]) {
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || keep.contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
}

/// Bytes outside the unreserved set percent-encoded, for a `data:` URL.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    percent_encode_onto(&mut out, text, b"-_.~/=;,()");
    out
}

/// A link to a local file: absolute when it can be made so (the report may be opened elsewhere).
fn file_url(path: &str) -> String {
    let abs =
        std::path::absolute(path).map_or_else(|_| path.to_string(), |p| p.display().to_string());
    let mut url = String::from("file://");
    percent_encode_onto(&mut url, &abs, b"-_.~/");
    url
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::outcome::Outcome;

    fn page() -> Page {
        Page::new("schedlab test", &Provenance::collect())
    }

    fn verdicts_table(outcome: &Outcome) -> Table {
        let judge = outcome.judge();
        let mut t =
            Table::new("Goals", &[("goal", ""), ("verdict", ""), ("requests conserved", "")]);
        let met = judge.cell(Verdict::Met, "met");
        let missed = judge.cell(Verdict::Missed, "missed");
        t.row(vec![Cell::text("queue-lock ÷ sched-lock ≥ 1.2"), met, Cell::check(true, "yes")]);
        t.row(vec![Cell::text("no-stats ÷ sched-lock ≥ 1.5"), missed, Cell::check(false, "NO")]);
        t
    }

    #[test]
    fn no_verdict_is_shown_beside_a_disturbed_run_and_checks_still_are() {
        let disturbed = vec!["other processes used 1.6 CPUs".into()];
        let loaded = Outcome { disturbed, ..Outcome::default() };
        let mut p = page();
        p.outcome(false, &loaded.disturbed, &[], &[]).data(verdicts_table(&loaded));
        let html = p.render();
        assert_eq!(html.matches("not judged: disturbed").count(), 2, "{html}");
        assert!(
            !html.contains(">met<") && !html.contains(">missed<"),
            "a verdict on disturbed runs: {html}"
        );
        assert!(
            html.contains("<td class=\"pass\">yes</td>")
                && html.contains("<td class=\"fail\">NO</td>"),
            "checks stay: {html}"
        );
        // Undisturbed: the verdicts show.
        let mut p = page();
        p.data(verdicts_table(&Outcome::default()));
        let html = p.render();
        assert!(
            html.contains("<td class=\"met\">met</td>") && !html.contains("not judged: disturbed"),
            "{html}"
        );
    }

    #[test]
    fn a_message_is_said_once_in_the_box() {
        let mut p = page();
        let disturbed = "other processes used 1.6 CPU(s) during this run".to_string();
        let warning = "fair-spin with 2 jobs on 2 CPUs collapses".to_string();
        let typed = Warning::run(crate::report::outcome::WarningKind::Collapse, warning.clone());
        p.outcome(false, &[disturbed.clone(), disturbed.clone()], &[], &[typed]);
        // The CLI's printed copies come back through `warnings`, with its prefixes.
        p.warnings(vec![
            format!("schedlab: warning: {warning}"),
            format!("warning: {disturbed}"),
            format!("{warning}  "),
        ]);
        let html = p.render();
        assert_eq!(html.matches("collapses").count(), 1, "{html}");
        assert_eq!(html.matches("other processes used").count(), 1, "{html}");
        // One message at two points: one item naming both, their printed copies not again.
        let kind = crate::report::outcome::WarningKind::Calibration;
        let cost = "no elevator cost measured";
        let at = |point: &str| Warning::points(kind, vec![point.into()], cost);
        let mut p = page();
        p.outcome(false, &[], &[], &crate::report::outcome::merged(&[at("p1"), at("p2")]));
        p.warnings(vec![format!("warning: p1: {cost}"), format!("warning: p2: {cost}")]);
        let html = p.render();
        assert_eq!(html.matches(cost).count(), 1, "{html}");
        assert!(html.contains(&format!("<li>warning: p1, p2: {cost}</li>")), "{html}");
    }

    #[test]
    fn a_table_with_markup_is_shown_as_text() {
        let mut p = page();
        p.table("<b>heading</b>", "a <script>alert(1)</script> & b")
            .warnings(vec!["<img src=x>".into()]);
        let html = p.render();
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("a &lt;script&gt;alert(1)&lt;/script&gt; &amp; b"));
        assert!(html.contains("&lt;b&gt;heading&lt;/b&gt;"));
    }

    #[test]
    fn figures_are_inline_and_nothing_is_fetched() {
        let svg = "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><rect id=\"r\"/></svg>";
        let flame = "<svg xmlns=\"http://www.w3.org/2000/svg\"><script><![CDATA[var a = document.getElementById('x');]]></script></svg>";
        let mut p = page();
        p.figures(vec![("chart".into(), svg.into())])
            .interactive("flame", flame)
            .trace(Path::new("t.json"));
        let html = p.render();
        assert!(
            html.contains("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\""),
            "the chart is inline markup"
        );
        assert!(!html.contains("<?xml"));
        assert!(!html.contains("<img"), "no image is loaded from a file");
        assert!(
            html.contains("src=\"data:image/svg+xml;charset=utf-8,%3Csvg"),
            "the flamegraph is a data: URL"
        );
        assert!(!html.contains("<script"), "the flamegraph's script stays inside its own document");
        // The only http(s) text besides SVG namespaces: none (Perfetto is named, not fetched).
        let outside_namespaces =
            html.replace("http://www.w3.org/2000/svg", "").replace("http%3A", "");
        assert!(
            !outside_namespaces.contains("http://") && !outside_namespaces.contains("https://"),
            "{outside_namespaces}"
        );
        assert!(!html.contains(" src=\"http") && !html.contains("href=\"http"));
        assert!(html.contains("ui.perfetto.dev"));
        assert_eq!(svg_height(svg), Some(10));
        assert_eq!(svg_height(flame), None);
        let guarded = with_history_guard(flame);
        assert!(
            guarded.starts_with(
                "<svg xmlns=\"http://www.w3.org/2000/svg\"><script><![CDATA[(function(){var keep"
            ),
            "{guarded}"
        );
        assert!(html.contains("href=\"file:///"));
    }

    #[test]
    fn the_command_line_and_provenance_are_shown() {
        let mut prov = Provenance::collect();
        prov.command_line = "schedlab compare --report r.html".into();
        let html = Page::new("t", &prov).render();
        assert!(html.contains("<code>schedlab compare --report r.html</code>"));
        assert!(html.contains(&escape(&prov.commit)));
    }
}

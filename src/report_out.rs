//! `--report PATH.html`: every experiment's self-contained HTML report
//! (`schedlab_benches::report::html`). The path is claimed with `check_output` before any work
//! like every output; the page is written atomically after the work, with the warnings and errors
//! the run printed (kept by [`layer`], a `tracing` layer beside the log's: what is printed does
//! not change). A write that fails is an output failure (exit 3); a written one says `wrote PATH`.

use crate::ExperimentError;
use schedlab_benches::experiment::Failures;
use schedlab_benches::files::output::OutputFile;
use schedlab_benches::report::html::Page;
use std::sync::Mutex;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::Context;
use tracing_subscriber::Layer;

/// Every warning and error logged so far, as printed (`message key=value ...`), in order.
static PRINTED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The fields of one event as one line.
#[derive(Default)]
struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write;
        let sep = if self.0.is_empty() { "" } else { " " };
        let _ = match field.name() {
            "message" => write!(self.0, "{sep}{value:?}"),
            name => write!(self.0, "{sep}{name}={value:?}"),
        };
    }
}

/// Keeps the events it sees (see [`layer`]).
struct Keep;

impl<S: Subscriber> Layer<S> for Keep {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut line = Line::default();
        event.record(&mut line);
        let level = if *event.metadata().level() == tracing::Level::ERROR { "error" } else { "warning" };
        if let Ok(mut kept) = PRINTED.lock() {
            kept.push(format!("{level}: {}", line.0));
        }
    }
}

/// The layer that keeps the warnings and errors for the report (added by `logging::init`).
pub fn layer<S: Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>>() -> impl Layer<S> {
    Keep.with_filter(LevelFilter::WARN)
}

/// Keeps a line said outside the log (`out::error`, `out::warning`) for the report.
pub fn keep(line: String) {
    if let Ok(mut kept) = PRINTED.lock() {
        kept.push(line);
    }
}

/// The warnings and errors printed so far.
pub fn printed() -> Vec<String> {
    PRINTED.lock().map(|k| k.clone()).unwrap_or_default()
}

/// Writes the report, when one was asked for: `page` assembled now, the printed warnings added.
/// A failure is logged and added to `failures` (exit 3); success prints `wrote PATH`.
pub fn write(out: Option<&OutputFile>, page: impl FnOnce() -> Page, failures: &mut Failures) {
    let Some(out) = out else { return };
    let mut page = page();
    page.warnings(printed());
    if crate::write_output(out, page.render().as_bytes()) {
        outln!("wrote {}", out.path().display());
    } else {
        failures.add(ExperimentError::output_failed(String::new()));
    }
}

//! Where the CLI's diagnostics go: one `tracing` subscriber for the whole process.
//!
//! | layer | filter | output |
//! | --- | --- | --- |
//! | human-readable log (`tracing-subscriber`'s fmt) | `RUST_LOG` if set, else `-v` count: none = warn, `-v` = info, `-vv` = debug, `-vvv` = trace | stderr; without `-v`/`RUST_LOG` a line is `schedlab: message` (errors) or `schedlab: warning: message`, so bad input stays one line |
//! | trace file (`tracing-chrome`, `run --trace FILE`) | schedlab's targets, only while the capture window is open ([`schedlab_core::trace::capturing`]), and `--trace-filter` (default `schedlab=trace`: everything) | Chrome / Perfetto JSON: one track per thread, spans as B/E slices, events as instants |
//!
//! | kept for `--report` ([`Keep`], into `out.rs`) | warn and error | the report's Warnings section |
//!
//! `main` hands every command a [`Start`], and the command starts the log with it once, before
//! its work: `run` after checking its options and opening its trace file (so that bad input
//! creates no trace file), the others first.
//! Errors (exit code 2) are `tracing::error!` events, so they take the same path as every other
//! line. The trace file is complete once the returned [`Logging`] is dropped (tracing-chrome's
//! writer thread finishes the JSON array then).

use schedlab_benches::experiment::ExperimentError;
use schedlab_benches::files::output::StreamWriter;
use std::fmt;
use std::io::IsTerminal;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::{dynamic_filter_fn, EnvFilter, FilterExt, LevelFilter};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{Layer, Registry};

/// Keeps the trace file's writer alive; dropping it completes the file.
pub struct Logging {
    trace: Option<tracing_chrome::FlushGuard>,
}

impl Logging {
    /// Finishes the trace file now (it is also finished on drop). `writer_thread` is the trace
    /// writer's OS thread id: it ran at nice 19 during the run (see [`build_chrome_layer`]); it
    /// is put back to nice 0 first, so that writing its backlog is not starved by other
    /// processes (a loaded machine made that take seconds after a signal). Only a process
    /// allowed to lower a nice value (root, or RLIMIT_NICE) can; otherwise it stays at 19.
    pub fn finish(&mut self, writer_thread: Option<i64>) {
        #[cfg(target_os = "linux")]
        if let Some(tid) = writer_thread {
            // SAFETY: setpriority has no memory-safety preconditions; a failure (no permission)
            // only leaves the writer at nice 19.
            unsafe {
                libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 0);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = writer_thread;
        drop(self.trace.take());
    }
}

/// The terse format of a run without `-v`: only warnings and errors reach it.
struct Terse;

impl<S, N> FormatEvent<S, N> for Terse
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        write!(writer, "schedlab: ")?;
        match *event.metadata().level() {
            Level::ERROR => {}
            Level::WARN => write!(writer, "warning: ")?,
            other => write!(writer, "{}: ", other.as_str().to_ascii_lowercase())?,
        }
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// The target of the trace file's markers (`run interrupted`): recorded whether or not the
/// capture window is open, whatever `--trace-filter` keeps.
pub const MARKER_TARGET: &str = "schedlab::marker";

/// How the command line asked to log (`-v`): what `main` hands every command, which starts the
/// log with it once (see the module documentation).
pub struct Start {
    verbose: u8,
    /// The parsed command line, for the debug log.
    parsed: String,
}

/// `run --trace FILE`: where the trace goes and what it keeps.
pub struct TraceRequest<'a> {
    /// The trace file's stream (checked and opened by the caller).
    pub file: StreamWriter,
    /// `--trace-filter`: which targets and levels the trace keeps (env-filter syntax).
    pub filter: &'a str,
    /// Record the spans' fields (lock, path, group, pid, ...); about halves the requests per
    /// second while the window is open.
    pub args: bool,
}

impl Start {
    pub fn new(verbose: u8, parsed: String) -> Self {
        Start { verbose, parsed }
    }

    /// Starts the log. A bad `RUST_LOG` is bad input.
    pub fn logs(self) -> Result<Logging, ExperimentError> {
        self.with_trace(None)
    }

    /// Starts the log and, when asked, the trace file. A bad `RUST_LOG` or `--trace-filter` is
    /// bad input.
    pub fn with_trace(self, trace: Option<TraceRequest<'_>>) -> Result<Logging, ExperimentError> {
        let request = match trace {
            Some(t) => LogRequest {
                verbose: self.verbose,
                trace_file: Some(t.file),
                trace_filter: t.filter,
                trace_args: t.args,
            },
            None => LogRequest::logs(self.verbose),
        };
        let (logging, problem) = init(&request);
        problem.map_err(|bad| ExperimentError::bad_input(bad.to_string()))?;
        tracing::debug!(command = %self.parsed, "parsed");
        Ok(logging)
    }
}

/// How the run was asked to log.
struct LogRequest<'a> {
    pub verbose: u8,
    /// `run --trace FILE`: where the trace goes (an output stream, checked and opened by the
    /// caller).
    pub trace_file: Option<StreamWriter>,
    /// `run --trace-filter`: which targets and levels the trace keeps (env-filter syntax).
    pub trace_filter: &'a str,
    /// Record the spans' fields (lock, path, group, pid, ...) in the trace; about halves the
    /// requests per second while the window is open.
    pub trace_args: bool,
}

impl LogRequest<'_> {
    /// Logs only (no trace file).
    fn logs(verbose: u8) -> LogRequest<'static> {
        LogRequest { verbose, trace_file: None, trace_filter: "", trace_args: false }
    }
}

/// A filter the user gave that `tracing` cannot read: bad input, said in one line.
#[derive(Debug)]
enum BadFilter {
    /// `RUST_LOG`, and the first line of the parser's complaint.
    RustLog { why: String },
    /// `--trace-filter`, as given, and the first line of the parser's complaint.
    TraceFilter { filter: String, why: String },
}

impl fmt::Display for BadFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadFilter::RustLog { why } => write!(f, "RUST_LOG is not a valid filter: {why}"),
            BadFilter::TraceFilter { filter, why } => {
                write!(f, "--trace-filter `{filter}` is not a valid filter: {why}")
            }
        }
    }
}

impl std::error::Error for BadFilter {}

/// Installs the process's subscriber. The error is one line for the user (a bad `RUST_LOG` or
/// `--trace-filter`); the subscriber is installed even then, so that the caller can report it
/// through `tracing::error!`.
fn init(request: &LogRequest<'_>) -> (Logging, Result<(), BadFilter>) {
    let mut problem = Ok(());
    let from_env = std::env::var_os("RUST_LOG").is_some_and(|v| !v.is_empty());
    let default_level = match request.verbose {
        0 => LevelFilter::WARN,
        1 => LevelFilter::INFO,
        2 => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    };
    let filter = if from_env {
        EnvFilter::builder().with_default_directive(default_level.into()).from_env().unwrap_or_else(
            |e| {
                problem = Err(BadFilter::RustLog { why: first_line(&e.to_string()).to_string() });
                EnvFilter::new(default_level.to_string())
            },
        )
    } else {
        EnvFilter::new(default_level.to_string())
    };
    let ansi = std::io::stderr().is_terminal();
    let log: Box<dyn Layer<Registry> + Send + Sync> = if request.verbose > 0 || from_env {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(ansi)
            .with_timer(tracing_subscriber::fmt::time::uptime())
            .with_thread_names(true)
            .with_filter(filter)
            .boxed()
    } else {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(ansi)
            .event_format(Terse)
            .with_filter(filter)
            .boxed()
    };
    let mut guard = None;
    let trace: Option<Box<dyn Layer<Registry> + Send + Sync>> = match request.trace_file.clone() {
        Some(file) if problem.is_ok() => match EnvFilter::builder().parse(request.trace_filter) {
            Err(e) => {
                problem = Err(BadFilter::TraceFilter {
                    filter: request.trace_filter.to_string(),
                    why: first_line(&e.to_string()).to_string(),
                });
                None
            }
            Ok(targets) => {
                let (layer, flush) = build_chrome_layer(file, request.trace_args);
                guard = Some(flush);
                // Dynamic: the answer changes when the capture window opens and closes, so it
                // must not be cached per callsite.
                let window = dynamic_filter_fn(|meta, _| {
                    schedlab_core::trace::capturing() && meta.target().starts_with("schedlab")
                })
                .with_max_level_hint(LevelFilter::TRACE);
                let marker = dynamic_filter_fn(|meta, _| meta.target() == MARKER_TARGET);
                Some(layer.with_filter(window.and(targets).or(marker)).boxed())
            }
        },
        _ => None,
    };
    // One layer list over the registry: both layers see the same spans, each through its filter.
    // The report's copy of the warnings and errors ([`Keep`]) sees what the log prints.
    let kept: Box<dyn Layer<Registry> + Send + Sync> = Keep.with_filter(LevelFilter::WARN).boxed();
    let subscriber = Registry::default()
        .with(std::iter::once(log).chain(trace).chain(Some(kept)).collect::<Vec<_>>());
    // Only fails if a subscriber is already installed, which `main` never does twice.
    let _ = tracing::subscriber::set_global_default(subscriber);
    (Logging { trace: guard }, problem)
}

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

/// The layer that keeps every warning and error logged, as printed (`message key=value ...`),
/// for `--report` (`crate::out::keep`).
struct Keep;

impl<S: Subscriber> Layer<S> for Keep {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut line = Line::default();
        event.record(&mut line);
        let level = if *event.metadata().level() == Level::ERROR { "error" } else { "warning" };
        crate::out::keep(format!("{level}: {}", line.0));
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

/// The trace-file layer. tracing-chrome serialises on a writer thread of its own, spawned by
/// `build`; on a machine with as many CPUs as jobs that thread would take a job's CPU away while
/// the window is open (measured on 2 vCPUs: one job descheduled for milliseconds at a time). So it
/// is built on a helper thread whose nice value is 19, which the writer thread inherits (on Linux
/// the nice value is per thread): the writer then runs mostly when a CPU is free, and catches up
/// at the latest when the run ends (the channel in between is unbounded).
fn build_chrome_layer(
    file: StreamWriter,
    args: bool,
) -> (tracing_chrome::ChromeLayer<Registry>, tracing_chrome::FlushGuard) {
    std::thread::scope(|s| {
        s.spawn(move || {
            #[cfg(target_os = "linux")]
            {
                // SAFETY: gettid and setpriority have no memory-safety preconditions; a failure
                // (e.g. a seccomp filter) only leaves the writer at normal priority.
                unsafe {
                    let tid = libc::gettid();
                    libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 19);
                }
            }
            tracing_chrome::ChromeLayerBuilder::new()
                .writer(std::io::BufWriter::new(file))
                .include_args(args)
                .include_locations(false)
                .build()
        })
        .join()
        .expect("building the trace layer does not panic")
    })
}

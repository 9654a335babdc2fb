//! One shape for every experiment: a configuration in, a stop flag and an observer passed in, a
//! serialisable report and a typed error out.
//!
//! ```text
//! fn run(cfg: &Config, stop: &AtomicBool, observer: &mut dyn Observer) -> Result<Report, ExperimentError>
//! ```
//!
//! - The **configuration** is checked by the experiment itself before any work; a bad one is an
//!   [`ErrorKind::BadInput`] error, which the CLI turns into one line and exit code 2.
//! - The **stop flag** is polled; when it is set the experiment finishes what it can within about
//!   a second and returns its report marked interrupted (a stop is not an error: what finished is
//!   kept).
//! - The **observer** hears progress (steps done of steps planned) and warnings; the CLI draws a
//!   progress bar and prints the warnings, a test records them.
//! - The **report** is `Serialize`: the CLI prints tables from it and writes it as JSON, with its
//!   provenance inside.
//! - The **error** carries its kind, and the kind its exit code (the README's table), so that the
//!   code does not depend on where a message was caught.
//!
//! Every experiment is in this shape: [`kernel`] (the first), [`compare`], [`sweep`] (whose
//! configuration also names the CSV each point is written to as it is measured, so that a stopped
//! sweep keeps every finished point), [`predict`] (with [`validate`]), [`simulate`],
//! [`roundtrip`], [`run`] (one run: `schedlab run`), [`flamegraph`] and [`trace_summary`] (which
//! write their drawings themselves).

pub mod compare;
pub mod flamegraph;
pub mod kernel;
pub mod observer;
pub mod options;
pub mod predict;
pub mod roundtrip;
pub mod run;
pub mod simulate;
pub mod sweep;
#[cfg(test)]
mod testing;
pub mod trace_summary;
pub mod validate;

pub use crate::error::{ErrorKind, ExperimentError, Failures};
pub use observer::{Event, Observer, Recorder, Silent};

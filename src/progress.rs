//! The CLI's one observer of every experiment: a line saying what will run and for how long, a
//! progress bar on stderr, warnings and failures as log lines printed around the bar, and each
//! finished step in the log (`-v`).

use indicatif::{ProgressBar, ProgressStyle};
use schedlab_benches::experiment::{Event, Observer};

pub struct Bar {
    /// The command's name, for the opening line (`schedlab compare: 12 runs, about 40 s ...`).
    title: &'static str,
    /// What a step is called in the opening line and on the bar (runs, points, rounds).
    unit: &'static str,
    bar: Option<ProgressBar>,
    /// How far an experiment that adds steps is ([`Event::Progress`]), shown before each label.
    note: String,
}

impl Bar {
    pub fn new(title: &'static str, unit: &'static str) -> Self {
        Bar { title, unit, bar: None, note: String::new() }
    }

    fn log(&self, print: impl FnOnce()) {
        match &self.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }
}

impl Observer for Bar {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Planned { steps, estimated_s } => {
                crate::out::progress(format_args!(
                    "{}: {steps} {}, about {estimated_s:.0} s (Ctrl-C, SIGTERM or \
                        SIGHUP stops it and keeps what finished)\n",
                    self.title, self.unit
                ));
                let bar = ProgressBar::new(steps as u64);
                let template = format!(
                    "{{bar:30}} {{pos}}/{{len}} {}, {{elapsed}} (about {{eta}} left) {{msg}}",
                    self.unit
                );
                if let Ok(style) = ProgressStyle::with_template(&template) {
                    bar.set_style(style);
                }
                self.bar = Some(bar);
            }
            Event::Progress { steps, note } => {
                if let Some(bar) = &self.bar {
                    bar.set_length(steps as u64);
                }
                self.note = format!("{note} · ");
                tracing::info!("{note}");
            }
            Event::Step { done, label } => {
                if let Some(bar) = &self.bar {
                    bar.set_position(done as u64);
                    bar.set_message(format!("{}{label}", self.note));
                }
                tracing::debug!("{label}");
            }
            Event::StepDone { done, summary } => {
                if let Some(bar) = &self.bar {
                    bar.set_position(done as u64);
                }
                tracing::info!("{summary}");
            }
            Event::Warning(w) => self.log(|| crate::out::warning(w)),
            Event::Failure(f) => self.log(|| crate::out::error(f)),
            Event::Finished => {
                if let Some(bar) = self.bar.take() {
                    bar.finish_and_clear();
                }
            }
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

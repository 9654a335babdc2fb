//! A criterion profiler: flamegraphs of the benches under `--profile-time`.

use super::flamegraph::write_flamegraph;
use super::sampling::{Sampling, DEFAULT_FREQUENCY};
use std::path::Path;

/// A criterion profiler: with `--profile-time N`, writes `flamegraph.svg` (and the folded stacks)
/// into each benchmark's `target/criterion/<group>/<bench>/profile/`. pprof's own criterion hook
/// is for criterion 0.5; this is the same thing for the workspace's criterion.
#[derive(Debug)]
pub struct CriterionFlamegraph {
    frequency: i32,
    active: Option<Sampling>,
}

impl CriterionFlamegraph {
    pub fn new(frequency: i32) -> Self {
        CriterionFlamegraph { frequency, active: None }
    }
}

/// `Criterion::default()` with [`CriterionFlamegraph`] as its profiler: a bench file's
/// `criterion_group! { name = benches; config = schedlab_benches::profile::criterion_config(); targets = ... }`
/// gets a flamegraph per benchmark from `cargo bench -- --profile-time N`.
pub fn criterion_config() -> criterion::Criterion {
    criterion::Criterion::default().with_profiler(CriterionFlamegraph::new(DEFAULT_FREQUENCY))
}

impl criterion::profiler::Profiler for CriterionFlamegraph {
    fn start_profiling(&mut self, _benchmark_id: &str, _benchmark_dir: &Path) {
        self.active = Some(Sampling::start(self.frequency).expect("start the profiler"));
    }

    fn stop_profiling(&mut self, benchmark_id: &str, benchmark_dir: &Path) {
        let Some(sampling) = self.active.take() else { return };
        let folded = sampling.finish().expect("read the profile");
        std::fs::create_dir_all(benchmark_dir).expect("create the benchmark's profile directory");
        std::fs::write(benchmark_dir.join("stacks.folded"), folded.to_text())
            .expect("write the folded stacks");
        let path = benchmark_dir.join("flamegraph.svg");
        let file = std::fs::File::create(&path).expect("create flamegraph.svg");
        let subtitle = format!(
            "{} samples at {} Hz over {:.1} s (criterion --profile-time)",
            folded.samples(),
            folded.frequency,
            folded.wall_s
        );
        match write_flamegraph(&folded, benchmark_id, &subtitle, std::io::BufWriter::new(file)) {
            Ok(()) => eprintln!("flamegraph: {}", path.display()),
            Err(e) => eprintln!("flamegraph for {benchmark_id}: {e}"),
        }
    }
}

//! The seeds' figures: the ratios of the seeds' table (kernel-bfq.md §1), the later kernels'
//! published figures and the goals. Reference data, not a job: `compare` sets its measured
//! ratios beside these, and the model's predictions are read against them.

use serde::Serialize;

/// A ratio of the seeds' table (kernel-bfq.md §1) or a goal of the issue.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Seed {
    pub name: &'static str,
    pub numerator: &'static str,
    pub denominator: &'static str,
    /// The seeds' ratio (None for a goal that is not a seed).
    pub seed: Option<f64>,
    /// The range the seeds' KIOPS ranges allow.
    pub seed_range: Option<(f64, f64)>,
    pub source: &'static str,
    /// The goal: measured ratio at least this.
    pub goal_at_least: Option<f64>,
}

/// The seeds' ratios, the later kernels' published figures, and the goals, in report order.
pub const SEEDS: [Seed; 9] = [
    Seed {
        name: "deferred stats",
        numerator: "queue-lock",
        denominator: "sched-lock",
        seed: Some(1.24),
        seed_range: Some((310.0 / 260.0, 316.0 / 250.0)),
        source: "250-260 -> 310-316 KIOPS (BFQ 4.15)",
        goal_at_least: Some(1.0),
    },
    Seed {
        name: "debug stats off",
        numerator: "debug-off",
        denominator: "sched-lock",
        seed: Some(1.6),
        seed_range: Some((400.0 / 260.0, 400.0 / 250.0)),
        source: "250-260 -> 400 KIOPS",
        goal_at_least: None,
    },
    Seed {
        name: "no stats",
        numerator: "no-stats",
        denominator: "sched-lock",
        seed: Some(1.55),
        seed_range: Some((404.0 / 260.0, 404.0 / 250.0)),
        source: "250-260 -> 404 KIOPS (+55 %)",
        goal_at_least: None,
    },
    Seed {
        name: "debug off vs deferred",
        numerator: "debug-off",
        denominator: "queue-lock",
        seed: Some(1.28),
        seed_range: Some((400.0 / 316.0, 400.0 / 310.0)),
        source: "310-316 -> 400 KIOPS (+30 %)",
        goal_at_least: None,
    },
    Seed {
        name: "dropping the queue lock",
        numerator: "unlocked",
        denominator: "queue-lock",
        seed: Some(1.05),
        seed_range: Some((1.0, 1.05)),
        source: "\"at most ~5 %\" (patch 3/4)",
        goal_at_least: None,
    },
    Seed {
        name: "epoch keeps every stat",
        numerator: "epoch",
        denominator: "debug-off",
        seed: None,
        seed_range: None,
        source: "issue goal: >= 0.95",
        goal_at_least: Some(0.95),
    },
    Seed {
        name: "rstat vs debug off",
        numerator: "rstat",
        denominator: "debug-off",
        seed: None,
        seed_range: None,
        source:
            "no published throughput figure (the 6.2 lists were for flush cost with many cgroups)",
        goal_at_least: None,
    },
    Seed {
        name: "insertion lists (2024)",
        numerator: "rstat+lists",
        denominator: "rstat",
        seed: Some(1550.0 / 567.0),
        seed_range: Some((1550.0 / 567.0, 1550.0 / 567.0)),
        source: "567 K -> 1550 K IOPS: 32 jobs, 512 B randread, NVMe, Ryzen 7950X (BFQ, 2024)",
        goal_at_least: None,
    },
    Seed {
        name: "lists, 2017 stats",
        numerator: "queue-lock+lists",
        denominator: "queue-lock",
        seed: None,
        seed_range: None,
        source: "no published figure: the seeds' deferred statistics on the 2024 insert path",
        goal_at_least: None,
    },
];

/// One row of the seed's idling table (seed 002, CFQ 2015; notes/results/2026-11-29-idling.md):
/// fio randread, bs 4k, iodepth 64, numjobs 10, 10 s, group reporting, on a real device.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct IdlingSeed {
    pub device: &'static str,
    /// Whether `slice_idle` was on (8 ms) or off (0).
    pub idling: bool,
    pub iops: f64,
}

/// The seed's idling table, in its order: idling off gives ×4.15 on the cloud SSD, ×1.12 on
/// the local SSD.
pub const IDLING_SEEDS: [IdlingSeed; 4] = [
    IdlingSeed { device: "cloud SSD", idling: true, iops: 7054.0 },
    IdlingSeed { device: "cloud SSD", idling: false, iops: 29255.0 },
    IdlingSeed { device: "local SSD", idling: true, iops: 19320.0 },
    IdlingSeed { device: "local SSD", idling: false, iops: 21626.0 },
];

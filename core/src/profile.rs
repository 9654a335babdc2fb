//! Which of BFQ's lock sites a kernel generation has, and the order in which every call of the
//! request cycle takes the scheduler's locks: one description, read by the driver (which sites a
//! job's submission runs), the calibration and `predict` (where each measured hold sits in a
//! call), and the test that checks the description against what the paths really take
//! (`benches/tests/lock_sites.rs`).
//!
//! The kernel takes `bfqd->lock` at up to five places per I/O:
//!
//! | site | kernel function | since | here |
//! | --- | --- | --- | --- |
//! | bio merge | `bfq_bio_merge` → `blk_mq_sched_try_merge` | 4.12 (BFQ's arrival in blk-mq) | [`crate::Process::bio_merge`] |
//! | depth limit | `bfq_limit_depth` → `bfqq_request_over_limit` | the hook in 4.16 (a52a69ea89dc, lock-free then); the locked per-cgroup walk in 5.18 (76f1df88bbc2, "bfq: Limit number of requests consumed by each cgroup") | [`crate::Process::limit_depth`] |
//! | insert | `bfq_insert_requests` | 4.12; still under `bfqd->lock` in 6.18 (the January 2024 insertion-lists patch for BFQ was never merged, see below) | [`crate::Process::insert`] |
//! | dispatch | `bfq_dispatch_request` | 4.12 | [`crate::Scheduler::dispatch`] |
//! | completion | `bfq_finish_requeue_request` | 4.12 | [`crate::Dispatched::complete`] |
//!
//! A [`KernelProfile`] names a generation: the sites its submission path runs and its insert
//! path. The seeds' kernels (4.12–4.14) have the bio merge and no locked depth limit; today's
//! (6.18) has both. Both insert directly under the scheduler lock: Jens Axboe's January 2024
//! series proposed insertion lists for BFQ ("block/bfq: use separate insertion lists", patch 8/8
//! of its first version), but that patch did not reach mainline. This machine's 6.18 kernel says
//! so itself: its BTF (`bpftrace -lv 'struct bfq_data'`) shows one `spinlock_t lock` and no
//! insertion list, and its contention tracepoints see `bfq_insert_requests` wait on that lock.
//! The workbench's `lists` insert path stays what it was built as: the proposed design.

use crate::insert::InsertPathKind;

/// A kernel generation's set of lock sites (see the module documentation).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum KernelProfile {
    /// Linux 4.12–4.14, the seeds' kernels: bio merge, insert, dispatch, completion.
    #[default]
    #[serde(rename = "4.12")]
    Seeds,
    /// Linux 5.18–6.18: the seeds' sites plus the locked depth limit, inserting directly.
    #[serde(rename = "6.18")]
    Mainline,
    /// No kernel: the model as it was before the early sites, insert, dispatch and completion
    /// only, kept for before-and-after comparisons.
    #[serde(rename = "bare")]
    Bare,
}

/// A lock site of the submission path, in the order a submission runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SubmitSite {
    /// `bfq_bio_merge`: may end the submission (the bio joined a queued request).
    BioMerge,
    /// `bfq_limit_depth`: takes the lock on every submission (6.13 on; see `Process::limit_depth`).
    LimitDepth,
    /// `bfq_insert_requests`.
    Insert,
}

/// The calls of the request cycle whose lock order is described here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CycleCall {
    /// One request's submission: the profile's [`SubmitSite`]s in order.
    Submit,
    /// A dispatch that finds a request.
    Dispatch,
    /// A dispatch that finds nothing.
    EmptyDispatch,
    /// A completion.
    Complete,
}

impl KernelProfile {
    /// Every profile, oldest first.
    pub const ALL: [KernelProfile; 3] =
        [KernelProfile::Seeds, KernelProfile::Mainline, KernelProfile::Bare];

    /// The name on the command line (`--kernel NAME`) and in reports.
    pub fn name(self) -> &'static str {
        match self {
            KernelProfile::Seeds => "4.12",
            KernelProfile::Mainline => "6.18",
            KernelProfile::Bare => "bare",
        }
    }

    /// The profile called `name`.
    pub fn from_name(name: &str) -> Option<KernelProfile> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// One line on what it is.
    pub fn summary(self) -> &'static str {
        match self {
            KernelProfile::Seeds => "Linux 4.12-4.14 (the seeds): bio merge, insert, dispatch, completion under the scheduler lock; direct insert",
            KernelProfile::Mainline => "Linux 5.18-6.18: bio merge, depth limit, insert, dispatch, completion under the scheduler lock; direct insert",
            KernelProfile::Bare => "no kernel: insert, dispatch, completion only (the model before the early sites), for before-and-after comparisons",
        }
    }

    /// The lock sites a submission runs, in order.
    pub fn submit_sites(self) -> &'static [SubmitSite] {
        match self {
            KernelProfile::Seeds => &[SubmitSite::BioMerge, SubmitSite::Insert],
            KernelProfile::Mainline => {
                &[SubmitSite::BioMerge, SubmitSite::LimitDepth, SubmitSite::Insert]
            }
            KernelProfile::Bare => &[SubmitSite::Insert],
        }
    }

    pub fn has(self, site: SubmitSite) -> bool {
        self.submit_sites().contains(&site)
    }

    /// Scheduler-lock acquisitions per request when every site takes it (the fidelity table's
    /// "5 = 5": submission sites, dispatch, completion).
    pub fn sched_lock_sites(self) -> usize {
        self.submit_sites().len() + 2
    }
}

impl std::fmt::Display for KernelProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The locks (by class name) one call takes, in program order, on `insert` under `profile`.
///
/// `queue` stands for the deferred statistics window (`run_deferred`): taken only by a variant
/// whose deferred updates run under the queue lock, and then after the scheduler lock is
/// released. A site that takes a lock only sometimes (the depth limit, when the queue is idle;
/// the lists' `release_listed` hold) is still named: a measured figure says how often.
pub fn lock_sequence(
    call: CycleCall,
    insert: InsertPathKind,
    profile: KernelProfile,
) -> Vec<&'static str> {
    let lists = insert != InsertPathKind::Direct;
    match call {
        CycleCall::Submit => {
            let mut order = Vec::new();
            for site in profile.submit_sites() {
                match site {
                    // Process::bio_merge: [sched: group lookup, merge lookup] then, after a
                    // merge, run_deferred [queue].
                    SubmitSite::BioMerge => order.push("sched"),
                    // Process::limit_depth: [sched: the walk up the hierarchy].
                    SubmitSite::LimitDepth => order.push("sched"),
                    // Lists::insert: [insert lock: push]; direct: [sched: insert] then
                    // run_deferred [queue].
                    SubmitSite::Insert if lists => order.push("insert"),
                    SubmitSite::Insert => order.extend(["sched", "queue"]),
                }
            }
            order
        }
        // take_listed [insert], [sched: splice + dispatch_one], run_deferred [queue],
        // [sched: release_listed]; direct: [sched: dispatch_one] then run_deferred [queue].
        CycleCall::Dispatch if lists => vec!["insert", "sched", "queue", "sched"],
        CycleCall::Dispatch => vec!["sched", "queue"],
        CycleCall::EmptyDispatch if lists => vec!["insert", "sched"],
        CycleCall::EmptyDispatch => vec!["sched"],
        // finish_body: run_deferred [queue] before [sched: complete].
        CycleCall::Complete => vec!["queue", "sched"],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_the_mainline_profile_has_five_sites() {
        for p in KernelProfile::ALL {
            assert_eq!(KernelProfile::from_name(p.name()), Some(p));
        }
        assert_eq!(KernelProfile::from_name("5.0"), None);
        assert_eq!(KernelProfile::Mainline.sched_lock_sites(), 5);
        assert_eq!(KernelProfile::Seeds.sched_lock_sites(), 4);
        assert!(!KernelProfile::Seeds.has(SubmitSite::LimitDepth));
    }

    #[test]
    fn a_submission_on_the_lists_path_takes_the_scheduler_lock_only_at_its_early_sites() {
        let lists = InsertPathKind::from_name("lists").unwrap();
        assert_eq!(
            lock_sequence(CycleCall::Submit, lists, KernelProfile::Mainline),
            ["sched", "sched", "insert"]
        );
        assert_eq!(
            lock_sequence(CycleCall::Submit, InsertPathKind::Direct, KernelProfile::Seeds),
            ["sched", "sched", "queue"]
        );
    }
}

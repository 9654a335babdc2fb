//! `direct`: the insert path of BFQ through 2023. `bfq_insert_request` takes the scheduler lock,
//! merges or queues the request, routes its statistics, and runs the deferred ones after the
//! unlock. Nothing waits outside the scheduler.

use super::{InsertPath, Listed};
use crate::scheduler::{Process, Scheduler};
use crate::state::{InsertOutcome, RequestSpec};
use crate::StatsPolicy;

/// Insert under the scheduler lock.
#[derive(Debug)]
pub struct Direct;

impl InsertPath for Direct {
    const NAME: &'static str = "direct";
    const SUMMARY: &'static str = "insert under the scheduler lock (BFQ through 2023)";

    #[inline(always)]
    fn insert<P: StatsPolicy>(process: &Process<'_, P>, spec: RequestSpec) -> InsertOutcome {
        process.insert_locked(spec)
    }

    #[inline(always)]
    fn take_listed<P: StatsPolicy>(_sched: &Scheduler<P>) -> Vec<Listed> {
        Vec::new()
    }
}

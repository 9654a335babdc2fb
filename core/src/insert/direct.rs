//! `direct`: the insert path of BFQ through 2023. `bfq_insert_request` takes the scheduler lock,
//! merges or queues the request, routes its statistics, and runs the deferred ones after the
//! unlock. Nothing waits outside the scheduler.

use super::{DispatchSite, InsertOutcome, InsertPath, InsertSite, Listed, RequestSpec};

/// Insert under the scheduler lock.
#[derive(Debug)]
pub struct Direct;

impl InsertPath for Direct {
    const NAME: &'static str = "direct";
    const SUMMARY: &'static str = "insert under the scheduler lock (BFQ through 2023)";

    #[inline(always)]
    fn insert(site: &impl InsertSite, spec: RequestSpec) -> InsertOutcome {
        site.insert_locked(spec)
    }

    #[inline(always)]
    fn take_listed(_site: &impl DispatchSite) -> Vec<Listed> {
        Vec::new()
    }
}

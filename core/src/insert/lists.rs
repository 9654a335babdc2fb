//! `lists`: separate insertion lists (BFQ, January 2024, "block/bfq: use separate insertion
//! lists", after the same change to mq-deadline). Insert takes only a small insertion lock, puts
//! the request on a list (at-head requests on their own) and returns; the next dispatch takes the
//! lists and, under the scheduler lock, does the insert work for each request before it selects
//! one. The scheduler lock is then held by dispatches alone. The patch's published throughput and
//! contention figures are in `../shared/reference/kernel-bfq.md`, "The headline numbers".
//!
//! NOTE: merging moves with the insert work: a listed request is merged (or merges a queued one)
//! when it is spliced, not when it is listed, so two requests listed between dispatches can merge
//! with each other only in splice order; the kernel's patch likewise left listed requests out of
//! the scheduler's merge lookups until their insertion (kernel-map.md D45). A request's
//! statistics (io_add, io_merged, ...) are emitted at the splice, in the dispatcher's deferred
//! batch.

use super::{DispatchSite, InsertOutcome, InsertPath, InsertSite, Listed, RequestSpec};
use crate::lockstat::{self, LockPath};

/// Insert onto a list; the dispatcher splices.
#[derive(Debug)]
pub struct Lists;

impl InsertPath for Lists {
    const NAME: &'static str = "lists";
    const SUMMARY: &'static str =
        "insert onto a list under a small lock; dispatch splices it in (proposed for BFQ, 2024)";

    fn insert(site: &impl InsertSite, spec: RequestSpec) -> InsertOutcome {
        let _path = lockstat::enter(LockPath::Insert);
        let mut lists = site.insert_lists().lock();
        // The listed request pins the queue until the splice has applied its statistics; the
        // process holds a reference now, so the queue is allocated (I1a).
        site.pin_queue_for_listing();
        let listed = Listed { queue: site.queue_id(), spec };
        if spec.at_head {
            lists.head.push(listed);
        } else {
            lists.tail.push(listed);
        }
        InsertOutcome::Listed
    }

    fn take_listed(site: &impl DispatchSite) -> Vec<Listed> {
        let mut lists = site.insert_lists().lock();
        if lists.is_empty() {
            return Vec::new();
        }
        lists.take_all()
    }
}

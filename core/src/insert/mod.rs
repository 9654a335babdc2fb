//! The insert-path axis, orthogonal to the statistics policy: how a request gets from
//! `bfq_insert_request`'s caller into the scheduler.
//!
//! | path | insert | dispatch | kernel |
//! | --- | --- | --- | --- |
//! | [`direct`] | under the scheduler lock: merge or queue the request, route its statistics | select and take a request | BFQ through 2023 |
//! | [`lists`] | under a small insertion lock: put the request on a list and return | first splice the lists into the scheduler (the insert work above, under the scheduler lock), then select | proposed for BFQ in January 2024 ("block/bfq: use separate insertion lists", patch 8/8 of the first series); not in mainline (6.18's `struct bfq_data` has one lock and no list) |
//!
//! A path is one file implementing [`InsertPath`] plus one line in the registry below; the
//! scheduler picks one per instance ([`crate::SchedConfig::insert`]) and every statistics
//! variant runs on either. Paths live in the core because they do the locked work of the
//! scheduler itself.
//!
//! Lifetime on the lists path: a listed request has no request reference on its queue yet (the
//! kernel's listed request holds its io context, not its bfqq), so a listed request *pins* its
//! queue with a pending count on the queue ([`crate::QueueShared`]): the process may exit, the
//! queue stays until every listed request of it has been spliced and the statistics of the splice
//! applied (notes/invariants.md I1a). Group removal while requests are listed moves the queue as
//! usual: the splice inserts into the queue's group at that time.

use crate::stats::Op;
use crate::sync::Lock;

pub mod direct;
pub mod lists;

/// What an insert did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertOutcome {
    /// The request entered the scheduler; `idle_timer_disabled` when it ended an idle wait.
    Queued { idle_timer_disabled: bool },
    /// The request was back-merged into a queued one and freed.
    Merged,
    /// The request waits on an insertion list; the next dispatch inserts it (`lists.rs`).
    Listed,
}

/// What the caller asks to insert.
#[derive(Clone, Copy, Debug)]
pub struct RequestSpec {
    pub sector: u64,
    pub sectors: u32,
    pub op: Op,
    /// Insert at the head of the priority dispatch list (`at_head`), bypassing the queues.
    pub at_head: bool,
    /// The submitter's own identifier, handed back at completion.
    pub tag: u64,
}

/// What an insert path needs of the process inserting: the scheduler implements it
/// (`scheduler.rs`, for `Process`). The paths sit below the scheduler and reach it only through
/// this and [`DispatchSite`].
pub trait InsertSite {
    /// The insert work under the scheduler lock: merge or queue, route the statistics, run the
    /// deferred ones (all of the `direct` path).
    fn insert_locked(&self, spec: RequestSpec) -> InsertOutcome;
    /// The scheduler's insertion lists.
    fn insert_lists(&self) -> &Lock<InsertLists>;
    /// The process's queue (a slot of the scheduler's queue table).
    fn queue_id(&self) -> usize;
    /// Pins the process's queue for one listed request (its pending count; the process holds a
    /// reference meanwhile, so the queue is allocated).
    fn pin_queue_for_listing(&self);
}

/// What an insert path needs of a dispatch: the scheduler implements it.
pub trait DispatchSite {
    /// The scheduler's insertion lists.
    fn insert_lists(&self) -> &Lock<InsertLists>;
}

/// One insert path (see the module documentation).
pub trait InsertPath {
    /// The name on the command line (`--insert NAME`) and in reports.
    const NAME: &'static str;
    /// One line on what it does.
    const SUMMARY: &'static str;

    /// `bfq_insert_request` for the process of `site`.
    fn insert(site: &impl InsertSite, spec: RequestSpec) -> InsertOutcome;

    /// What waits outside the scheduler, taken at the start of a dispatch (before the scheduler
    /// lock) to be inserted under it.
    fn take_listed(site: &impl DispatchSite) -> Vec<Listed>;
}

/// A request on an insertion list, with the queue it will enter (pinned by the queue's pending
/// count while listed).
#[derive(Clone, Copy, Debug)]
pub struct Listed {
    pub(crate) queue: usize,
    pub(crate) spec: RequestSpec,
}

/// The insertion lists (`bfqd->insert_list` and the at-head list), under their own lock.
#[derive(Debug, Default)]
pub struct InsertLists {
    pub(crate) head: Vec<Listed>,
    pub(crate) tail: Vec<Listed>,
}

impl InsertLists {
    /// Requests listed.
    pub fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Everything listed, at-head requests first, and the lists empty.
    pub(crate) fn take_all(&mut self) -> Vec<Listed> {
        // At-head requests go to the front of the dispatch list one by one as they are spliced,
        // so the newest ends up first: the order direct inserts give them.
        let mut all = std::mem::take(&mut self.head);
        all.append(&mut self.tail);
        all
    }
}

macro_rules! insert_paths {
    ($($module:ident :: $path:ident),* $(,)?) => {
        /// Which insert path a scheduler uses.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum InsertPathKind {
            #[default]
            $($path),*
        }

        impl InsertPathKind {
            /// Every path, in report order.
            pub const ALL: &'static [InsertPathKind] = &[$(InsertPathKind::$path),*];

            /// The name on the command line and in reports.
            pub fn name(self) -> &'static str {
                match self {
                    $(InsertPathKind::$path => <$module::$path as InsertPath>::NAME),*
                }
            }

            /// One line on what it does.
            pub fn summary(self) -> &'static str {
                match self {
                    $(InsertPathKind::$path => <$module::$path as InsertPath>::SUMMARY),*
                }
            }

            /// The path called `name`.
            pub fn from_name(name: &str) -> Option<InsertPathKind> {
                Self::ALL.iter().copied().find(|k| k.name() == name)
            }

            pub(crate) fn insert(self, site: &impl InsertSite, spec: RequestSpec) -> InsertOutcome {
                match self {
                    $(InsertPathKind::$path => <$module::$path as InsertPath>::insert(site, spec)),*
                }
            }

            pub(crate) fn take_listed(self, site: &impl DispatchSite) -> Vec<Listed> {
                match self {
                    $(InsertPathKind::$path => <$module::$path as InsertPath>::take_listed(site)),*
                }
            }
        }

        impl std::fmt::Display for InsertPathKind {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

// The registry: one line per path (the first is the default).
insert_paths![direct::Direct, lists::Lists,];

//! Groups, as in bfq-cgroup.c: creating a group under its parent, moving a queue between groups
//! (`bfq_bfqq_move`), taking a group offline (`bfq_pd_offline`: its queues and statistics go to the
//! parent), dropping its online reference, and tearing everything down when the scheduler goes.
//! All of it runs under the scheduler lock.

use super::{
    Entity, EntityKey, Expiration, GroupSched, Ledger, NullSink, PolicyState, QueueId, RqId,
    SchedData, SchedState, StatSink,
};
use crate::fault::{self, Fault};
use crate::insert::Listed;
use crate::objects::{GroupPtr, GroupShared};

impl SchedState {
    /// `bfq_bfqq_move`: the queue changes group (cgroup move, or its group goes offline).
    pub(crate) fn move_queue(&mut self, q: QueueId, to: usize, now: u64, sink: &mut impl StatSink) {
        // The fault `MoveKeepsStatsGroup`: the statistics keep following the group left behind.
        let publish = !fault::active(Fault::MoveKeepsStatsGroup);
        self.move_queue_publishing(q, to, now, sink, publish);
    }

    /// [`SchedState::move_queue`]; `publish` false is the `OfflineMovesOnlyBusyQueues` fault: the
    /// queue's shared pointer keeps naming the old group after its reference moved.
    fn move_queue_publishing(
        &mut self,
        q: QueueId,
        to: usize,
        now: u64,
        sink: &mut impl StatSink,
        publish: bool,
    ) {
        if self.in_service == Some(q) && fault::active(Fault::ExpireWithoutOwnReference) {
            if self.fault_expire_without_own_reference(q, now, sink) {
                // not a branch point: the fault's
                return; // not a branch point: the fault's
            }
        } else if self.in_service == Some(q) {
            branch!("move.preempts-in-service");
            // The in-service reference may have been the last one.
            self.queues[q].refs += 1;
            self.expire(q, Expiration::Preempted, now, sink);
            if self.queues[q].refs == 1 {
                self.put_queue(q);
                if self.queues.get(q).is_none() {
                    branch!("move.expired-its-last-holder");
                    return;
                }
                // No reference is left, but listed requests pin the queue (`put_queue` keeps it
                // for their splice): it still has to leave the group, which may be going offline
                // (found by `lists_three_actors_idle_hint_vs_insert_and_exit`).
                branch!("move.expired-queue-still-listed");
            } else {
                branch!("move.expires-in-service");
                self.queues[q].refs -= 1;
            }
        } else {
            branch!("move.not-in-service");
        }
        if self.queues[q].entity.on_tree {
            branch!("move.takes-off-tree");
            self.tree_remove(EntityKey::Queue(q));
        } else {
            branch!("move.off-tree");
        }
        let from = self.queues[q].group;
        if from == to {
            if !self.queues[q].sort_list.is_empty() {
                branch!("move.same-group-reactivates");
                self.activate(EntityKey::Queue(q));
            } else {
                branch!("move.same-group-idle");
            }
            return;
        }
        let old_idx = self.queues[q].member_idx;
        let members = &mut self.groups[from].members;
        members.swap_remove(old_idx);
        if let Some(&moved) = members.get(old_idx) {
            branch!("move.member-moved");
            self.queues[moved].member_idx = old_idx;
        } else {
            branch!("move.last-member");
        }
        let new_idx = self.groups[to].members.len();
        self.groups[to].members.push(q);
        let (from_shared, to_shared) = (self.groups[from].shared, self.groups[to].shared);
        // SAFETY: `to` is online (in the slab): its online reference keeps it allocated.
        unsafe { to_shared.get(&self.groups[to]) }.get();
        let qs = &mut self.queues[q];
        qs.group = to;
        qs.member_idx = new_idx;
        qs.entity.parent = to;
        // Virtual times are per tree: start afresh in the new one.
        qs.entity.start = 0;
        qs.entity.finish = 0;
        if publish {
            // not a branch point: false only under a fault
            // SAFETY: the queue is in the locked state, so it is allocated.
            unsafe { qs.shared.get() }.set_group(to_shared);
        }
        if let Some(retired) = GroupShared::put(from_shared) {
            branch!("move.retires-old-group");
            self.retired.push(retired);
        } else {
            branch!("move.old-group-still-held");
        }
        if !self.queues[q].sort_list.is_empty() {
            branch!("move.reactivates");
            self.activate(EntityKey::Queue(q));
        } else {
            branch!("move.idle-queue");
        }
    }

    pub(crate) fn create_group(
        &mut self,
        parent: usize,
        weight: u64,
        state: PolicyState,
    ) -> (usize, u64) {
        let serial = self.next_serial;
        self.next_serial += 1;
        let p = &mut self.groups[parent];
        // (With `CreateSplitsLookup` the creator took it already, outside the lock.)
        if !fault::active(Fault::ChildDoesNotPinParent) && !fault::active(Fault::CreateSplitsLookup)
        {
            // SAFETY: the parent is online: its online reference keeps it allocated.
            unsafe { p.shared.get(&*p) }.get(); // the child's reference on its parent
        }
        let shared = GroupShared::allocate(
            Some(p.shared),
            self.cfg.slots,
            serial,
            &self.census,
            state,
            self.rstat.as_ref(),
        );
        p.online_children += 1;
        let depth = p.depth + 1;
        let key = self.groups.insert(GroupSched {
            shared,
            serial,
            entity: Entity::new(weight, parent, self.cfg.max_budget),
            sd: SchedData::default(),
            parent: Some(parent),
            online_children: 0,
            members: Vec::new(),
            depth,
            ledger: Ledger::default(),
        });
        self.blkg_index.insert(serial, key);
        (key, serial)
    }

    pub(crate) fn online_children(&self, g: usize) -> usize {
        self.groups[g].online_children
    }

    /// `bfq_pd_offline`: move the queues to the parent, hand the statistics to the parent, drop
    /// the online reference. The memory goes when the last reference does.
    ///
    /// NOTE: the kernel reparents only the active queues, to the root group; here every queue
    /// moves, to the parent, so that later completions find a live group (kernel-map.md D20).
    pub(crate) fn offline_group(
        &mut self,
        g: usize,
        now: u64,
        sink: &mut impl StatSink,
    ) -> GroupPtr {
        let parent = self.groups[g].parent.expect("the root never goes offline");
        debug_assert_eq!(self.groups[g].online_children, 0);
        let members = self.groups[g].members.clone();
        for q in members {
            if self.queues.get(q).is_some_and(|qs| qs.group == g) {
                branch!("offline.moves-queue");
                // bfq_reparent_active_queues moved only busy queues: an idle one kept pointing at
                // the offline group (the fault leaves its shared pointer there).
                let busy = self.queues[q].entity.on_tree || self.queues[q].entity.in_service;
                let publish = busy || !fault::active(Fault::OfflineMovesOnlyBusyQueues);
                self.move_queue_publishing(q, parent, now, sink, publish);
            } else {
                branch!("offline.member-already-gone");
            }
        }
        let gs = self.groups.remove(g);
        self.blkg_index.remove(&gs.serial);
        debug_assert!(gs.members.is_empty() && gs.sd.backlogged == 0);
        debug_assert!(!gs.entity.on_tree && !gs.entity.in_service);
        let root_shared = self.groups[self.root].shared;
        let p = &mut self.groups[parent];
        p.online_children -= 1;
        // I7: what `g` was charged is its parent's now, as its statistics are.
        p.ledger.absorb(gs.ledger);
        // The 4.15 reparenting target (kernel-map.md D20): the root group, not the parent.
        let into = if fault::active(Fault::OfflineStatsToRoot) { root_shared } else { p.shared };
        // SAFETY: `g` (`gs`) still holds its online reference and a reference on `parent`; the
        // root is online for the scheduler's (`self`'s) whole life.
        let (child, into) = unsafe { (gs.shared.get(&gs), into.get(&*self)) };
        // bfqg_stats_xfer_dead: "IOs completing after this point" reach the parent through
        // their queue, which now points there.
        child.stats().transfer_into(into.stats());
        gs.shared
    }

    /// Drops the online reference of a group that went offline.
    pub(crate) fn put_online_ref(&mut self, group: GroupPtr) {
        if let Some(retired) = GroupShared::put(group) {
            branch!("offline.retires-at-once");
            self.retired.push(retired);
        } else {
            branch!("offline.queues-hold-it");
        }
    }

    /// Frees what is left when the scheduler goes away: queued requests are dropped, every queue
    /// and group is released (children before parents). Returns the number of requests dropped.
    pub(crate) fn teardown(&mut self, listed: Vec<Listed>) -> usize {
        let now = 0;
        let mut sink = NullSink;
        // Requests still listed are dropped: their pins go, their queues are released below.
        for l in &listed {
            // SAFETY: the listed request pins its queue, so it is allocated.
            unsafe { self.queues[l.queue].shared.get() }.release_pending();
        }
        if let Some(q) = self.in_service {
            self.expire(q, Expiration::Preempted, now, &mut sink);
        }
        let dropped = self.requests.len() + listed.len();
        let ids: Vec<RqId> = self.requests.iter().map(|(id, _)| id).collect();
        self.dispatch_list.clear();
        for rq in ids {
            let r = self.requests.remove(rq);
            let qs = &mut self.queues[r.queue];
            if qs.sort_list.remove(&(r.sector, rq)) {
                qs.fifo.remove(&(r.fifo_deadline, rq));
                if qs.sort_list.is_empty() && qs.entity.on_tree {
                    self.tree_remove(EntityKey::Queue(r.queue));
                }
            }
            self.put_queue(r.queue);
        }
        // Whatever queue is left is held by nobody but the scheduler now.
        let leftover: Vec<QueueId> = self.queues.iter().map(|(q, _)| q).collect();
        for q in leftover {
            self.queues[q].refs = 1;
            self.put_queue(q);
        }
        let mut by_depth: Vec<(u32, usize)> =
            self.groups.iter().map(|(g, gs)| (gs.depth, g)).collect();
        by_depth.sort_unstable_by(|a, b| b.cmp(a));
        self.blkg_index.clear();
        for (_, g) in by_depth {
            let gs = self.groups.remove(g);
            if let Some(retired) = GroupShared::put(gs.shared) {
                self.retired.push(retired);
            }
        }
        dropped
    }
}

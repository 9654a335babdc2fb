//! Service trees and virtual time, as in bfq-wf2q.c: entities (`struct bfq_entity`), a group's
//! scheduling data (`struct bfq_sched_data`), and the B-WF2Q+ arithmetic done under the scheduler
//! lock: activation, removal, the choice of the next entity and queue, charging service, and
//! requeueing the in-service path on expiration. The model is in the parent module's doc.

use super::{QueueId, SchedState};
use crate::sorted::SortedVec;

/// Fixed-point shift of virtual time (`WFQ_SERVICE_SHIFT` in bfq).
const WFQ_SERVICE_SHIFT: u32 = 22;

/// `bfq_delta`: service converted to virtual time for an entity of `weight`.
#[inline]
fn vdelta(service: u64, weight: u64) -> u64 {
    (service << WFQ_SERVICE_SHIFT) / weight.max(1)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum EntityKey {
    Group(usize),
    Queue(QueueId),
}

/// `struct bfq_entity`.
#[derive(Clone, Debug)]
pub(crate) struct Entity {
    pub(super) weight: u64,
    pub(super) start: u64,
    pub(super) finish: u64,
    pub(super) budget: u64,
    pub(super) service: u64,
    pub(super) on_tree: bool,
    pub(super) in_service: bool,
    /// The group whose tree this entity belongs to.
    pub(super) parent: usize,
    /// Requests allocated to this entity or below it and not yet freed (`entity->allocated`, the
    /// depth limit's count).
    pub(super) allocated: u32,
}

impl Entity {
    pub(super) fn new(weight: u64, parent: usize, budget: u64) -> Self {
        Entity {
            weight,
            start: 0,
            finish: 0,
            budget,
            service: 0,
            on_tree: false,
            in_service: false,
            parent,
            allocated: 0,
        }
    }
}

/// `struct bfq_sched_data` with one service tree (one I/O priority class).
#[derive(Debug, Default)]
pub(crate) struct SchedData {
    pub(super) vtime: u64,
    pub(super) wsum: u64,
    /// Active (queued, not in service) entities by (finish, key, start).
    pub(super) by_finish: SortedVec<(u64, EntityKey, u64)>,
    /// The same entities by (start, key): the minimum start moves `vtime` forward.
    pub(super) by_start: SortedVec<(u64, EntityKey)>,
    pub(super) in_service: Option<EntityKey>,
    /// Entities on the tree plus the one in service.
    pub(super) backlogged: usize,
}

impl SchedState {
    pub(super) fn entity(&self, key: EntityKey) -> &Entity {
        match key {
            EntityKey::Group(g) => &self.groups[g].entity,
            EntityKey::Queue(q) => &self.queues[q].entity,
        }
    }

    pub(super) fn entity_mut(&mut self, key: EntityKey) -> &mut Entity {
        match key {
            EntityKey::Group(g) => &mut self.groups[g].entity,
            EntityKey::Queue(q) => &mut self.queues[q].entity,
        }
    }

    pub(super) fn tree_insert(&mut self, key: EntityKey, start: u64, finish: u64) {
        let e = self.entity_mut(key);
        e.start = start;
        e.finish = finish;
        e.on_tree = true;
        let parent = e.parent;
        let sd = &mut self.groups[parent].sd;
        sd.by_finish.insert((finish, key, start));
        sd.by_start.insert((start, key));
    }

    /// `bfq_activate_entity`: the entity became backlogged; so may its ancestors.
    pub(super) fn activate(&mut self, mut key: EntityKey) {
        loop {
            let e = self.entity(key);
            if e.on_tree || e.in_service {
                return;
            }
            let (parent, weight, prev_finish, budget) = (e.parent, e.weight, e.finish, e.budget);
            let sd = &mut self.groups[parent].sd;
            // WF2Q+: S = max(V, F_prev): an entity returning from idleness gets no credit.
            let start = sd.vtime.max(prev_finish);
            sd.wsum += weight;
            sd.backlogged += 1;
            self.tree_insert(key, start, start + vdelta(budget, weight));
            if parent == self.root {
                return;
            }
            key = EntityKey::Group(parent);
        }
    }

    /// Takes a queued (not in service) entity off its tree; deactivates ancestors left empty.
    pub(super) fn tree_remove(&mut self, mut key: EntityKey) {
        loop {
            let e = self.entity(key);
            debug_assert!(e.on_tree && !e.in_service);
            let (parent, weight, start, finish) = (e.parent, e.weight, e.start, e.finish);
            let sd = &mut self.groups[parent].sd;
            sd.by_finish.remove(&(finish, key, start));
            sd.by_start.remove(&(start, key));
            sd.wsum -= weight;
            sd.backlogged -= 1;
            let now_empty = sd.backlogged == 0;
            self.entity_mut(key).on_tree = false;
            if parent == self.root || !now_empty || !self.groups[parent].entity.on_tree {
                return;
            }
            key = EntityKey::Group(parent);
        }
    }

    /// `__bfq_lookup_next_entity` + extraction: the eligible entity with the smallest finish.
    pub(super) fn lookup_next(&mut self, group: usize) -> Option<EntityKey> {
        let sd = &mut self.groups[group].sd;
        let &(min_start, _) = sd.by_start.first()?;
        if min_start > sd.vtime {
            sd.vtime = min_start; // bfq_update_vtime: jump to the first eligible start
        }
        let vtime = sd.vtime;
        let found = *sd.by_finish.iter().find(|&&(_, _, start)| start <= vtime)?;
        let (_, key, start) = found;
        sd.by_finish.remove(&found);
        sd.by_start.remove(&(start, key));
        sd.in_service = Some(key);
        let e = self.entity_mut(key);
        e.on_tree = false;
        e.in_service = true;
        Some(key)
    }

    /// `bfq_get_next_queue`: descend from the root, choosing at each level.
    pub(super) fn get_next_queue(&mut self) -> Option<QueueId> {
        let mut group = self.root;
        loop {
            let key = match self.groups[group].sd.in_service {
                Some(key) => key,
                None => self.lookup_next(group)?,
            };
            match key {
                EntityKey::Queue(q) => return Some(q),
                EntityKey::Group(child) => group = child,
            }
        }
    }

    /// `bfq_bfqq_served`: charge service to the queue and every ancestor; advance virtual time.
    pub(super) fn served(&mut self, q: QueueId, sectors: u64) {
        let mut key = EntityKey::Queue(q);
        loop {
            let e = self.entity_mut(key);
            e.service += sectors;
            let parent = e.parent;
            let sd = &mut self.groups[parent].sd;
            sd.vtime += vdelta(sectors, sd.wsum);
            if parent == self.root {
                return;
            }
            key = EntityKey::Group(parent);
        }
    }

    /// Expiration in the trees: each entity on the in-service path is charged and requeued
    /// (still backlogged) or deactivated.
    pub(super) fn expire_path(&mut self, q: QueueId, queue_backlogged: bool) {
        let mut key = EntityKey::Queue(q);
        let mut backlogged = queue_backlogged;
        loop {
            let e = self.entity_mut(key);
            debug_assert!(e.in_service);
            e.in_service = false;
            e.finish = e.start + vdelta(e.service, e.weight);
            e.service = 0;
            let (parent, weight, finish, budget) = (e.parent, e.weight, e.finish, e.budget);
            self.groups[parent].sd.in_service = None;
            if backlogged {
                self.tree_insert(key, finish, finish + vdelta(budget, weight));
            } else {
                let sd = &mut self.groups[parent].sd;
                sd.wsum -= weight;
                sd.backlogged -= 1;
            }
            if parent == self.root {
                return;
            }
            key = EntityKey::Group(parent);
            backlogged = self.groups[parent].sd.backlogged > 0;
        }
    }
}

//! An ordered set in a sorted vector: the scheduler's red-black trees (`sort_list`, `fifo`,
//! the service trees) hold a handful to a few hundred entries, are emptied and refilled on every
//! request at low queue depth, and must not allocate on the hot path. A `BTreeSet` frees its last
//! node when it empties and allocates one when it refills (measured: B-tree node management was
//! the largest share of a round trip's instructions); a sorted vector keeps its capacity, and
//! binary search plus a short `memmove` is cheaper than a tree at these sizes.

/// A set of `T`, kept sorted.
#[derive(Clone, Debug)]
pub(crate) struct SortedVec<T> {
    items: Vec<T>,
}

impl<T> Default for SortedVec<T> {
    fn default() -> Self {
        SortedVec { items: Vec::new() }
    }
}

impl<T: Ord + Copy> SortedVec<T> {
    /// Inserts `item`; returns false if it was there already.
    pub(crate) fn insert(&mut self, item: T) -> bool {
        match self.items.binary_search(&item) {
            Ok(_) => false,
            Err(at) => {
                self.items.insert(at, item);
                true
            }
        }
    }

    /// Removes `item`; returns whether it was there.
    #[inline]
    pub(crate) fn remove(&mut self, item: &T) -> bool {
        match self.items.binary_search(item) {
            Ok(at) => {
                self.items.remove(at);
                true
            }
            Err(_) => false,
        }
    }

    pub(crate) fn first(&self) -> Option<&T> {
        self.items.first()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub(crate) fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// The smallest item `>= bound`.
    pub(crate) fn first_at_or_after(&self, bound: &T) -> Option<&T> {
        self.items.get(self.items.partition_point(|x| x < bound))
    }

    /// The largest item `< bound`.
    pub(crate) fn last_before(&self, bound: &T) -> Option<&T> {
        let at = self.items.partition_point(|x| x < bound);
        at.checked_sub(1).map(|i| &self.items[i])
    }
}

#[cfg(test)]
mod tests {
    use super::SortedVec;

    #[test]
    fn behaves_like_an_ordered_set() {
        let mut s = SortedVec::default();
        for x in [5u64, 1, 9, 3, 7] {
            assert!(s.insert(x));
        }
        assert!(!s.insert(3));
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), [1, 3, 5, 7, 9]);
        assert_eq!(s.first(), Some(&1));
        assert_eq!(s.first_at_or_after(&4), Some(&5));
        assert_eq!(s.first_at_or_after(&10), None);
        assert_eq!(s.last_before(&5), Some(&3));
        assert_eq!(s.last_before(&1), None);
        assert!(s.remove(&5));
        assert!(!s.remove(&5));
        assert_eq!(s.first_at_or_after(&4), Some(&7));
    }
}

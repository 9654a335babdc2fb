//! Oracles: what the models observe about the scheduler without being part of what they check.
//! Plain `std` types that no checker tracks: the liveness word that makes "freed" observable,
//! and the pointer and mutex of the bookkeeping that watches the scheduler (census, lock
//! statistics' registries).

use super::{violation, MODEL_CHECKING};

/// A reference-counted pointer that loom does not track: for oracle objects (live-object
/// counters) shared by objects that may be quarantined by [`reclaim`](super::reclaim) under loom.
pub type OracleArc<T> = std::sync::Arc<T>;

/// A mutex that loom does not model: for the lock statistics' own bookkeeping (registries and
/// merges, off the hot path), which observes the scheduler and is not part of what is checked.
pub type OracleMutex<T> = std::sync::Mutex<T>;

/// A poison-on-drop word that makes "freed" observable to the models.
///
/// It is a plain `std` atomic, not a loom one: it is an oracle, not part of the algorithm. Loom
/// runs one model thread at a time, so the word always reflects the interleaving being explored.
/// Outside a model checker [`Liveness::assert_alive`] does nothing (the memory may really be gone:
/// valgrind is the tool there).
#[derive(Debug)]
pub struct Liveness(std::sync::atomic::AtomicU32);

const ALIVE: u32 = 0x00A1_1FE0;
const FREED: u32 = 0x00DE_AD00;

impl Liveness {
    pub fn new() -> Self {
        Liveness(std::sync::atomic::AtomicU32::new(ALIVE))
    }

    /// Marks the object freed (call from its `Drop`).
    pub fn poison(&self) {
        self.0.store(FREED, std::sync::atomic::Ordering::Relaxed);
    }

    /// Under a model checker, reports a [`violation`] if the object was freed.
    #[inline(always)]
    pub fn assert_alive(&self, what: &str) {
        if MODEL_CHECKING {
            let word = self.0.load(std::sync::atomic::Ordering::Relaxed);
            if word != ALIVE {
                violation(format!("{what} used after it was freed (liveness word {word:#x})"));
            }
        }
    }
}

impl Default for Liveness {
    fn default() -> Self {
        Self::new()
    }
}

//! Slots of (source, destination) port pairs. A dense table, one entry per pair, is the fastest
//! lookup but costs ports² whatever a trace uses (30,000 ports: 3.6 GB at 4 bytes a pair);
//! past [`dense_max_ports`] ports the slots are hashed instead, so a large fabric costs by the
//! pairs in use. Which one is used never changes a result: only where a pair's slot is kept.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// No slot.
pub const NONE: u32 = u32::MAX;

/// Most ports whose pair tables are dense by default: 2,048² pairs are 16 MB at 4 bytes.
pub const DENSE_MAX_PORTS: usize = 2048;

static DENSE_MAX: AtomicUsize = AtomicUsize::new(DENSE_MAX_PORTS);

/// Most ports whose pair tables are dense (default [`DENSE_MAX_PORTS`]).
pub fn dense_max_ports() -> usize {
    DENSE_MAX.load(Ordering::Relaxed)
}

/// Sets [`dense_max_ports`] for the whole process, for tests and benches comparing the two
/// layouts (0: always hashed). Tables made before keep their layout.
pub fn set_dense_max_ports(ports: usize) {
    DENSE_MAX.store(ports, Ordering::Relaxed);
}

/// Whether pair tables of a `ports`-port fabric are dense.
pub fn dense_for(ports: usize) -> bool {
    ports <= dense_max_ports()
}

/// A u32 per port pair, [`NONE`] where unset.
#[derive(Debug, Clone)]
pub enum PairIndex {
    /// `slots[src * ports + dst]`.
    Dense { ports: usize, slots: Vec<u32> },
    /// Only the pairs set, keyed by `src << 32 | dst`.
    Sparse {
        ports: usize,
        slots: HashMap<u64, u32>,
    },
}

impl Default for PairIndex {
    fn default() -> Self {
        PairIndex::Dense {
            ports: 0,
            slots: Vec::new(),
        }
    }
}

impl PairIndex {
    /// An empty index of a `ports`-port fabric, dense or hashed by [`dense_for`].
    pub fn new(ports: usize) -> Self {
        if dense_for(ports) {
            PairIndex::Dense {
                ports,
                slots: vec![NONE; ports * ports],
            }
        } else {
            PairIndex::Sparse {
                ports,
                slots: HashMap::new(),
            }
        }
    }

    pub fn ports(&self) -> usize {
        match self {
            PairIndex::Dense { ports, .. } | PairIndex::Sparse { ports, .. } => *ports,
        }
    }

    #[inline]
    pub fn get(&self, src: u32, dst: u32) -> u32 {
        match self {
            PairIndex::Dense { ports, slots } => slots[src as usize * ports + dst as usize],
            PairIndex::Sparse { slots, .. } => slots.get(&key(src, dst)).copied().unwrap_or(NONE),
        }
    }

    /// Sets the pair's slot; [`NONE`] unsets it (and frees its entry when hashed).
    #[inline]
    pub fn set(&mut self, src: u32, dst: u32, slot: u32) {
        match self {
            PairIndex::Dense { ports, slots } => slots[src as usize * *ports + dst as usize] = slot,
            PairIndex::Sparse { slots, .. } => {
                if slot == NONE {
                    slots.remove(&key(src, dst));
                } else {
                    slots.insert(key(src, dst), slot);
                }
            }
        }
    }

    /// Unsets every pair, hashed ones at once.
    pub fn clear_sparse(&mut self) {
        if let PairIndex::Sparse { slots, .. } = self {
            slots.clear();
        }
    }
}

fn key(src: u32, dst: u32) -> u64 {
    (src as u64) << 32 | dst as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_layouts_hold_the_same_slots_and_only_the_dense_one_costs_ports_squared() {
        let dense = PairIndex::Dense {
            ports: 5,
            slots: vec![NONE; 25],
        };
        let sparse = PairIndex::Sparse {
            ports: 5,
            slots: HashMap::new(),
        };
        for mut ix in [dense, sparse] {
            ix.set(4, 0, 7);
            ix.set(0, 4, 9);
            assert_eq!((ix.get(4, 0), ix.get(0, 4), ix.get(1, 1)), (7, 9, NONE));
            ix.set(4, 0, NONE);
            assert_eq!(ix.get(4, 0), NONE);
            assert_eq!(ix.ports(), 5);
        }
        // A fabric past the dense limit allocates nothing per pair.
        let big = PairIndex::new(DENSE_MAX_PORTS + 1);
        assert!(matches!(big, PairIndex::Sparse { ref slots, .. } if slots.capacity() == 0));
    }
}

//! pfp's live pairs kept per uplink, each uplink's in its heads' key order, and the greedy
//! over them.
//!
//! The greedy over one global order serves a pair iff both its ports still have room when its
//! turn comes; ports only fill. So it is also: repeatedly serve the smallest key among the
//! pairs whose two ports have room. Per uplink, that pair is the first of its list whose
//! downlink has room; a heap over the uplinks gives the smallest. An uplink's candidate only
//! moves forward (downlinks only fill), and an uplink that fills leaves for good, so a pass
//! looks only at the pairs whose uplink has room (FB: about 2,500 of 15,000 per pass), and the
//! serves come out in the same order with the same rates, bit for bit.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Key, Pair};
use crate::alloc::Budget;

#[derive(Debug, Default)]
pub(super) struct Uplinks {
    /// Per uplink: its live pairs, by code, in key order.
    lists: Vec<Vec<u32>>,
    /// Per uplink, during a pass: the position of its candidate.
    at: Vec<u32>,
    /// Uplinks with a candidate, by the candidate's key (possibly stale: a candidate whose
    /// downlink filled since is moved on when it comes up, to a larger key).
    heap: BinaryHeap<Reverse<(Key, u32)>>,
    /// Scratch: (uplink, position) of the pairs leaving their place in a re-keying.
    gone: Vec<(u32, u32)>,
}

/// The first position from `from` on in `list` whose downlink has room.
#[inline]
fn first_open(list: &[u32], from: usize, down: &[f64], floor: f64, mask: u32) -> Option<usize> {
    (from..list.len()).find(|&i| down[(list[i] & mask) as usize] > floor)
}

/// What a greedy pass needs of the pairs.
pub(super) struct PassIn<'a> {
    pub shift: u32,
    pub slot: &'a [u32],
    pub keys: &'a [Key],
}

/// What it writes: the served pairs in key order with their positions in their uplink's list,
/// and each one's rate in `pairs[p].next`.
pub(super) struct PassOut<'a> {
    pub pairs: &'a mut [Pair],
    pub served: &'a mut Vec<u32>,
    pub served_at: &'a mut Vec<u32>,
}

impl Uplinks {
    /// Start over with `uplinks` empty lists.
    pub(super) fn clear(&mut self, uplinks: usize) {
        self.lists.resize_with(uplinks, Vec::new);
        self.lists.truncate(uplinks);
        for l in &mut self.lists {
            l.clear();
        }
        self.at.clear();
        self.at.resize(uplinks, 0);
    }

    /// Append a pair: calls come in key order.
    pub(super) fn push(&mut self, src: u32, code: u32) {
        self.lists[src as usize].push(code);
    }

    /// The code at position `i` of uplink `src`'s list.
    pub(super) fn code_at(&self, src: u32, i: usize) -> Option<u32> {
        self.lists[src as usize].get(i).copied()
    }

    /// A re-keyed pair at position `i` of uplink `src`'s list leaves it (taken out by
    /// [`Uplinks::settle`]).
    pub(super) fn leave(&mut self, src: u32, i: u32) {
        self.gone.push((src, i));
    }

    /// Drop the pairs that left, then put `moved` (re-keyed pairs, keys in `keys`) back in key
    /// order. Lists hold about a hundred pairs on FB: a block move each is cheap.
    pub(super) fn settle(&mut self, moved: &[u32], ends: &[[u32; 2]], input: &PassIn) {
        self.gone.sort_unstable_by(|a, b| b.cmp(a));
        for &(src, i) in &self.gone {
            self.lists[src as usize].remove(i as usize);
        }
        self.gone.clear();
        let (keys, slot) = (input.keys, input.slot);
        for &p in moved {
            let [src, dst] = ends[p as usize];
            let k = keys[p as usize];
            let list = &mut self.lists[src as usize];
            let pos = list.partition_point(|&c| keys[slot[c as usize] as usize] < k);
            list.insert(pos, src << input.shift | dst);
        }
    }

    /// Each head in key order takes all its two ports have left (see the module docs).
    pub(super) fn greedy(&mut self, b: &mut Budget, input: &PassIn, out: PassOut) {
        out.served.clear();
        out.served_at.clear();
        let floor = b.floor;
        // Once every uplink or every downlink is full nobody else can get anything.
        let mut open_up = b.up.iter().filter(|&&x| x > floor).count();
        let mut open_down = b.down.iter().filter(|&&x| x > floor).count();
        if open_up == 0 || open_down == 0 {
            return;
        }
        let (up, down) = (&mut b.up[..], &mut b.down[..]);
        let mask = (1 << input.shift) - 1;
        let (slot, keys) = (input.slot, input.keys);
        let key_of = |c: u32| keys[slot[c as usize] as usize];
        let mut heap = std::mem::take(&mut self.heap).into_vec();
        heap.clear();
        for (src, list) in self.lists.iter().enumerate() {
            if up[src] <= floor {
                continue;
            }
            if let Some(i) = first_open(list, 0, down, floor, mask) {
                self.at[src] = i as u32;
                heap.push(Reverse((key_of(list[i]), src as u32)));
            }
        }
        let mut heap = BinaryHeap::from(heap);
        // An uplink in the heap has room: only its own pairs take from it, and it is not
        // pushed again once full.
        while let Some(Reverse((_, src))) = heap.pop() {
            let list = &self.lists[src as usize];
            let i = self.at[src as usize] as usize;
            let c = list[i];
            let dst = (c & mask) as usize;
            let (u, d) = (up[src as usize], down[dst]);
            if d > floor {
                // `headroom > floor`, with the same rate and takes as `Budget`'s.
                let r = u.min(d);
                up[src as usize] = (u - r).max(0.0);
                down[dst] = (d - r).max(0.0);
                open_up -= (up[src as usize] <= floor) as usize;
                open_down -= (down[dst] <= floor) as usize;
                let p = slot[c as usize];
                out.pairs[p as usize].next = r;
                out.served.push(p);
                out.served_at.push(i as u32);
                if open_up == 0 || open_down == 0 {
                    break;
                }
                if up[src as usize] <= floor {
                    continue;
                }
            }
            // Served with room left, or its downlink filled since it was pushed: move on.
            if let Some(j) = first_open(list, i + 1, down, floor, mask) {
                self.at[src as usize] = j as u32;
                heap.push(Reverse((key_of(list[j]), src)));
            }
        }
        self.heap = heap;
    }
}

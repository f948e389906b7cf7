//! pfp's live pairs per port, on both sides, each port's in its heads' key order: what the
//! greedy walks ([`super::pass`]). Each pair knows its two places, so a re-keyed head is found
//! without a search, and most stay put: a head that sent a little keeps its place among
//! pairs that sent nothing (FB: 94 %).

use super::{Key, Slots};

/// Sides: a pair is listed at its uplink and at its downlink.
pub(super) const UP: usize = 0;
pub(super) const DOWN: usize = 1;

#[derive(Debug, Default)]
pub(super) struct Orders {
    /// Per side and port: its live pairs' keys in ascending order, and their codes.
    keys: [Vec<Vec<Key>>; 2],
    codes: [Vec<Vec<u32>>; 2],
    /// Per side and port: where its list starts in `keys` and `codes` (the places before are
    /// those of pairs that left from near the front, whose leaving moved the shorter side).
    start: [Vec<u32>; 2],
    /// Per pair: its positions at its uplink and at its downlink (in the whole vectors).
    at: Vec<[u32; 2]>,
}

impl Orders {
    /// Start over with `up` uplinks and `down` downlinks, all empty, for `pairs` pairs.
    pub(super) fn clear(&mut self, up: usize, down: usize, pairs: usize) {
        self.at.clear();
        self.at.resize(pairs, [0; 2]);
        for (side, n) in [(UP, up), (DOWN, down)] {
            let (keys, codes) = (&mut self.keys[side], &mut self.codes[side]);
            keys.resize_with(n, Vec::new);
            keys.truncate(n);
            keys.iter_mut().for_each(Vec::clear);
            codes.resize_with(n, Vec::new);
            codes.truncate(n);
            codes.iter_mut().for_each(Vec::clear);
            self.start[side].clear();
            self.start[side].resize(n, 0);
        }
    }

    /// Append pair `p`: calls come in key order.
    pub(super) fn push(&mut self, p: u32, ends: [u32; 2], code: u32, key: Key) {
        for side in [UP, DOWN] {
            let port = ends[side] as usize;
            self.at[p as usize][side] = self.keys[side][port].len() as u32;
            self.keys[side][port].push(key);
            self.codes[side][port].push(code);
        }
    }

    pub(super) fn keys(&self, side: usize, port: usize) -> &[Key] {
        &self.keys[side][port][self.start[side][port] as usize..]
    }

    pub(super) fn codes(&self, side: usize, port: usize) -> &[u32] {
        &self.codes[side][port][self.start[side][port] as usize..]
    }

    /// Pair `p` (with `code` between `ends`) now has key `new` (`None`: it left). Each list
    /// stays sorted after every call; the pairs it passes are rotated by one place, and their
    /// positions follow (`slot[code]` names the pair with that code).
    pub(super) fn rekey(
        &mut self,
        p: u32,
        ends: [u32; 2],
        code: u32,
        new: Option<Key>,
        slot: &Slots,
    ) {
        for side in [UP, DOWN] {
            let port = ends[side] as usize;
            let (keys, codes) = (&mut self.keys[side][port], &mut self.codes[side][port]);
            let start = &mut self.start[side][port];
            let i = self.at[p as usize][side] as usize;
            debug_assert_eq!(codes[i], code);
            let old = keys[i];
            let first = *start as usize;
            let (from, to) = match new {
                // Leaving: the pairs on the shorter side close the gap (an incast's pairs
                // leave from the front, one per flow).
                None if i - first < keys.len() - 1 - i => {
                    keys[first..=i].rotate_right(1);
                    codes[first..=i].rotate_right(1);
                    *start += 1;
                    (first + 1, i + 1)
                }
                None => {
                    keys.remove(i);
                    codes.remove(i);
                    (i, codes.len())
                }
                Some(k) if k < old => {
                    if i == first || keys[i - 1] < k {
                        keys[i] = k;
                        continue;
                    }
                    let j = first + keys[first..i].partition_point(|x| *x < k);
                    keys[j..=i].rotate_right(1);
                    codes[j..=i].rotate_right(1);
                    keys[j] = k;
                    (j, i + 1)
                }
                Some(k) => {
                    if i + 1 == keys.len() || k < keys[i + 1] {
                        keys[i] = k;
                        continue;
                    }
                    let j = i + keys[i + 1..].partition_point(|x| *x < k);
                    keys[i..=j].rotate_left(1);
                    codes[i..=j].rotate_left(1);
                    keys[j] = k;
                    (i, j + 1)
                }
            };
            for (n, &c) in codes[from..to].iter().enumerate() {
                self.at[slot[c as usize] as usize][side] = (from + n) as u32;
            }
        }
    }
}

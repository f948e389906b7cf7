//! pfp's greedy: each head in key order takes all its two ports have left. Run from scratch
//! at a decision, and again after flows end by looking only where the answer can change.
//!
//! The greedy over one global order serves a pair iff both its ports have room when its turn
//! comes, and ports only fill. So it is also: serve, in key order, the pairs whose two ports
//! have room, which a *walk* per port finds: a port's pairs in key order, skipping those whose
//! other end is full (for good: ports only fill), until the port fills. A decision walks every
//! uplink (a heap of the walks gives the next pair), looking only at pairs whose uplink has
//! room rather than at all of them.
//!
//! After flows end, only the heads that had a rate have new keys (the others sent nothing),
//! and the last pass tells why every other pair got nothing: a port of it was full by its
//! turn, filled by the pair served at some key below its own. A pass again then looks at:
//! - the heads that had a rate, at their new keys;
//! - for each port the last pass filled, at the key of the pair that filled it: if the port
//!   still has room, its pairs above that key (the ones it may have blocked) by a walk.
//!
//! A pair the last pass blocked at port P and this one serves has P with room at its turn,
//! so P filled later than before (or not at all), so P's walk from its old filling key
//! reaches it. Everything happens in key order, and the ports' leftovers follow from the same
//! serves in the same order as a pass from scratch: the same rates, bit for bit.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::orders::{Orders, DOWN, UP};
use super::{Key, Pair, Slots};
use crate::alloc::Budget;

/// A port's side and index in one number.
fn port_id(side: usize, port: usize) -> u32 {
    (side as u32) << 31 | port as u32
}

fn side_port(id: u32) -> (usize, usize) {
    ((id >> 31) as usize, (id & !(1 << 31)) as usize)
}

#[derive(Debug, Default)]
pub(super) struct Pass {
    /// Walks under way: (key of the walk's next pair, port, the pair's position there).
    walks: BinaryHeap<Reverse<(Key, u32, u32)>>,
    /// The ports the last pass filled, each with the key of the pair that filled it, in key
    /// order.
    filled: Vec<(Key, u32)>,
    next_filled: Vec<(Key, u32)>,
    /// Ports with room on each side at full capacity, counted by the last pass from
    /// scratch: a pass again starts from the same capacities (one fabric per decision).
    open_full: [usize; 2],
}

/// What a pass reads.
pub(super) struct PassIn<'a> {
    pub shift: u32,
    /// `slot[code]`: the pair with that code.
    pub slot: &'a Slots,
    pub orders: &'a Orders,
}

/// What it writes: the served pairs in key order, and each one's rate in `pairs[p].next`.
pub(super) struct PassOut<'a> {
    pub pairs: &'a mut [Pair],
    pub served: &'a mut Vec<u32>,
}

/// One pass under way.
struct Run<'a, 'b> {
    input: &'a PassIn<'b>,
    out: PassOut<'a>,
    up: &'a mut [f64],
    down: &'a mut [f64],
    floor: f64,
    mask: u32,
    /// Ports with room, per side: once a side has none nobody else can get anything.
    open: [usize; 2],
    walks: &'a mut BinaryHeap<Reverse<(Key, u32, u32)>>,
    filled: &'a mut Vec<(Key, u32)>,
}

impl Run<'_, '_> {
    fn room(&self, side: usize, port: usize) -> bool {
        let left = if side == UP {
            self.up[port]
        } else {
            self.down[port]
        };
        left > self.floor
    }

    fn over(&self) -> bool {
        self.open[UP] == 0 || self.open[DOWN] == 0
    }

    /// The pair with `code` (key `key`) takes all its ports have left, if both have room:
    /// the same rate and takes as `Budget`'s.
    fn serve(&mut self, code: u32, key: Key) {
        let (src, dst) = (
            (code >> self.input.shift) as usize,
            (code & self.mask) as usize,
        );
        let (u, d) = (self.up[src], self.down[dst]);
        if u <= self.floor || d <= self.floor {
            return;
        }
        let r = u.min(d);
        self.up[src] = (u - r).max(0.0);
        self.down[dst] = (d - r).max(0.0);
        if self.up[src] <= self.floor {
            self.open[UP] -= 1;
            self.filled.push((key, port_id(UP, src)));
        }
        if self.down[dst] <= self.floor {
            self.open[DOWN] -= 1;
            self.filled.push((key, port_id(DOWN, dst)));
        }
        let p = self.input.slot[code as usize];
        self.out.pairs[p as usize].next = r;
        self.out.served.push(p);
    }

    /// Walk `port` of `side` on from position `from`: its next pair whose other end has room.
    fn walk(&mut self, side: usize, port: usize, from: usize) {
        let codes = self.input.orders.codes(side, port);
        let (shift, mask, floor) = (self.input.shift, self.mask, self.floor);
        let found = if side == UP {
            (from..codes.len()).find(|&i| self.down[(codes[i] & mask) as usize] > floor)
        } else {
            (from..codes.len()).find(|&i| self.up[(codes[i] >> shift) as usize] > floor)
        };
        if let Some(j) = found {
            let key = self.input.orders.keys(side, port)[j];
            self.walks
                .push(Reverse((key, port_id(side, port), j as u32)));
        }
    }

    /// A walk's pair comes up: served if its other end still has room; the walk goes on
    /// while its port has room.
    fn step(&mut self, key: Key, id: u32, at: u32) {
        let (side, port) = side_port(id);
        if !self.room(side, port) {
            return;
        }
        let code = self.input.orders.codes(side, port)[at as usize];
        self.serve(code, key);
        if self.room(side, port) {
            self.walk(side, port, at as usize + 1);
        }
    }
}

impl Pass {
    fn run<'a, 'b>(
        &'a mut self,
        b: &'a mut Budget,
        input: &'a PassIn<'b>,
        out: PassOut<'a>,
        open: [usize; 2],
    ) -> Run<'a, 'b> {
        out.served.clear();
        self.walks.clear();
        self.next_filled.clear();
        let floor = b.floor;
        Run {
            input,
            out,
            up: &mut b.up,
            down: &mut b.down,
            floor,
            mask: (1 << input.shift) - 1,
            open,
            walks: &mut self.walks,
            filled: &mut self.next_filled,
        }
    }

    /// A pass from scratch on the full budget `b`: a walk per uplink.
    pub(super) fn full(&mut self, b: &mut Budget, input: &PassIn, out: PassOut) {
        let floor = b.floor;
        self.open_full = [
            b.up.iter().filter(|&&x| x > floor).count(),
            b.down.iter().filter(|&&x| x > floor).count(),
        ];
        let open = self.open_full;
        let mut run = self.run(b, input, out, open);
        if !run.over() {
            for src in 0..run.up.len() {
                if run.room(UP, src) {
                    run.walk(UP, src, 0);
                }
            }
            while let Some(Reverse((key, id, at))) = run.walks.pop() {
                run.step(key, id, at);
                if run.over() {
                    break;
                }
            }
        }
        std::mem::swap(&mut self.filled, &mut self.next_filled);
    }

    /// A pass on the full budget `b` (the capacities of the last pass from scratch) after
    /// only the heads in `heads` (new key, code; sorted)
    /// changed since the last pass (see the module docs).
    pub(super) fn again(
        &mut self,
        b: &mut Budget,
        input: &PassIn,
        out: PassOut,
        heads: &[(Key, u32)],
    ) {
        let old = std::mem::take(&mut self.filled);
        let open = self.open_full;
        let mut run = self.run(b, input, out, open);
        let (mut h, mut f) = (0, 0);
        // Merge the three sources by key (keys are unique within each); a key no pair has
        // marks a source run dry.
        const END: Key = (u64::MAX, u64::MAX, u64::MAX);
        while !run.over() {
            let head = heads.get(h).map_or(END, |x| x.0);
            let fill = old.get(f).map_or(END, |x| x.0);
            let walk = run.walks.peek().map_or(END, |w| w.0 .0);
            if head <= fill && head <= walk {
                if head == END {
                    break;
                }
                run.serve(heads[h].1, head);
                h += 1;
            } else if fill <= walk {
                let (side, port) = side_port(old[f].1);
                f += 1;
                if run.room(side, port) {
                    let from = input
                        .orders
                        .keys(side, port)
                        .partition_point(|x| *x <= fill);
                    run.walk(side, port, from);
                }
            } else {
                let Reverse((key, id, at)) = run.walks.pop().expect("peeked");
                run.step(key, id, at);
            }
        }
        self.filled = old;
        std::mem::swap(&mut self.filled, &mut self.next_filled);
    }
}

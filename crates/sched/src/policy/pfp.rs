//! `pfp`: per-flow prioritization, the pFabric/PDQ proxy of the Varys evaluation: shortest
//! remaining flow first (SRTF), earliest deadline first when flows have deadlines; each flow in
//! that order takes all its two ports have left.
//!
//! Only the best flow of each (uplink, downlink) pair can get any rate: it takes all that one of
//! the pair's two ports has left, so every later flow of the pair finds that port full. So a
//! decision groups the flows by pair, keeps each pair's best flow (its head), sorts the heads
//! and hands out bandwidth greedily in that order.
//!
//! When flows end between coflow events, the same greedy runs again ([`Scheduler::redistribute`])
//! without a full decision: only the heads that had a rate can have a new key (they sent bytes,
//! or finished and their pair has a new head), so only they are re-sorted and merged back into
//! the last order. The rates are those a full decision would give at that instant (same keys,
//! same order, same greedy), at O(pairs) per flow end instead of O(flows + pairs log pairs).

use crate::alloc::{Budget, Freed};
use crate::machinery::Machinery;
use crate::{Decision, FlowCompletion, Rates, Scheduler, Snapshot};

/// Priority key: deadline, remaining bytes (in grains, see [`GRAIN_S`]), then (coflow position
/// (arrival order), flow position). Times are non-negative, and the bits of a non-negative float
/// order as the float does: plain integers sort several times faster than float comparisons.
type Key = (u64, u64, u64);

/// Remaining sizes are compared in grains of what the fastest port sends in this time (1 ns:
/// an eighth of a byte at 1 Gbit/s). Two flows left with the same bytes in exact arithmetic
/// (common in traces that split a reducer's bytes evenly over its mappers) differ by rounding
/// errors after floating-point progress, absolute errors of about 1e-3 bytes on large flows,
/// and those would pick the winner, differently for a full decision and a redistribution.
/// Rounded to grains they tie, and arrival order decides.
const GRAIN_S: f64 = 1e-9;

fn key(deadline: f64, remaining: f64, grain: f64, ci: usize, fi: usize) -> Key {
    (
        bits(deadline),
        (remaining.max(0.0) / grain).round() as u64,
        (ci as u64) << 32 | fi as u64,
    )
}

/// The flow a key names: (coflow index, flow index).
fn head(k: &Key) -> (u32, u32) {
    ((k.2 >> 32) as u32, k.2 as u32)
}

/// Order-preserving bits of a float that is non-negative, or else taken as 0.
fn bits(x: f64) -> u64 {
    if x > 0.0 {
        x.to_bits()
    } else {
        0
    }
}

/// The flows of one (uplink, downlink) pair in the last decision.
#[derive(Debug, Clone, Copy)]
struct Pair {
    /// Its flows: `members[start..end]`.
    start: u32,
    end: u32,
    live: bool,
    /// Its head's rate in the allocation being computed.
    next: f64,
}

#[derive(Debug, Default)]
pub struct Pfp {
    /// `Redistribute` (the default) re-runs the greedy on a flow's end without a full
    /// decision; `Recompute` takes a full decision; `Ignore` leaves the bandwidth idle.
    pub on_flow_completion: FlowCompletion,
    budget: Budget,
    /// `slot[src * ports + dst]`: the pair's index in `pairs` while grouping, else `u32::MAX`.
    slot: Vec<u32>,
    pairs: Vec<Pair>,
    members: Vec<(u32, u32)>,
    /// Per pair: (uplink, downlink), and its head's key. Kept apart from `pairs` so that the
    /// greedy pass and the binary searches read small, dense arrays.
    ends: Vec<[u32; 2]>,
    keys: Vec<Key>,
    /// Live pairs in their heads' priority order.
    order: Vec<u32>,
    /// Scratch: heads to sort in a full decision; pairs re-keyed in a redistribution, and a
    /// bit per pair marking them.
    sorting: Vec<(Key, u32)>,
    moved: Vec<u32>,
    moved_bits: Vec<u64>,
    /// Pairs whose head has a rate, and those of the allocation being computed.
    served: Vec<u32>,
    next_served: Vec<u32>,
    /// The time of the last full decision: the snapshot's bytes are as of then.
    decided_at: f64,
    /// Bytes per step of the remaining-size keys.
    grain: f64,
}

impl Pfp {
    pub fn new(on_flow_completion: FlowCompletion) -> Self {
        Pfp {
            on_flow_completion,
            ..Default::default()
        }
    }

    /// Group the snapshot's flows by pair (a counting sort).
    fn group(&mut self, snap: &Snapshot) {
        let ports = snap.fabric.ports();
        if self.slot.len() != ports * ports {
            self.slot = vec![u32::MAX; ports * ports];
        }
        self.pairs.clear();
        self.ends.clear();
        for c in snap.coflows {
            for f in &c.flows {
                let s = &mut self.slot[f.src as usize * ports + f.dst as usize];
                if *s == u32::MAX {
                    *s = self.pairs.len() as u32;
                    self.pairs.push(Pair {
                        start: 0,
                        end: 0,
                        live: true,
                        next: 0.0,
                    });
                    self.ends.push([f.src, f.dst]);
                }
                self.pairs[*s as usize].end += 1;
            }
        }
        let mut at = 0;
        for p in &mut self.pairs {
            let n = p.end;
            p.start = at;
            p.end = at;
            at += n;
        }
        self.members.clear();
        self.members.resize(at as usize, (0, 0));
        for (ci, c) in snap.coflows.iter().enumerate() {
            for (fi, f) in c.flows.iter().enumerate() {
                let p =
                    &mut self.pairs[self.slot[f.src as usize * ports + f.dst as usize] as usize];
                self.members[p.end as usize] = (ci as u32, fi as u32);
                p.end += 1;
            }
        }
        for &[src, dst] in &self.ends {
            self.slot[src as usize * ports + dst as usize] = u32::MAX;
        }
        self.keys.clear();
        self.keys.resize(self.pairs.len(), (0, 0, 0));
        self.moved_bits.clear();
        self.moved_bits.resize(self.pairs.len().div_ceil(64), 0);
    }

    /// Find pair `p`'s best unfinished flow at `snap.now_s`: it becomes the head and its key
    /// is stored; false if every flow of the pair is done. Bytes in the snapshot are as of the
    /// last decision, so a flow with a rate has sent `rate * dt` more since.
    fn lead(&mut self, snap: &Snapshot, rates: &Rates, p: usize) -> bool {
        let dt = snap.now_s - self.decided_at;
        let pair = &mut self.pairs[p];
        let mut best: Option<Key> = None;
        for &(ci, fi) in &self.members[pair.start as usize..pair.end as usize] {
            let c = &snap.coflows[ci as usize];
            let f = &c.flows[fi as usize];
            if f.remaining_bytes <= 0.0 {
                continue; // finished
            }
            let left = f.remaining_bytes - rates.per_coflow[ci as usize][fi as usize] * dt;
            let k = key(
                c.deadline_s.unwrap_or(f64::INFINITY),
                left,
                self.grain,
                ci as usize,
                fi as usize,
            );
            if best.is_none_or(|b| k < b) {
                best = Some(k);
            }
        }
        pair.live = best.is_some();
        self.keys[p] = best.unwrap_or_default();
        pair.live
    }

    /// Each head in `order` takes all its two ports have left; the served pairs go to
    /// `next_served` with their rate in `next`.
    fn greedy(&mut self, snap: &Snapshot) {
        let b = &mut self.budget;
        b.reset(snap.fabric);
        self.next_served.clear();
        // Once every uplink or every downlink is full nobody else can get anything.
        let mut open_up = b.up.iter().filter(|&&x| x > b.floor).count();
        let mut open_down = b.down.iter().filter(|&&x| x > b.floor).count();
        for &p in &self.order {
            if open_up == 0 || open_down == 0 {
                break;
            }
            let [src, dst] = self.ends[p as usize];
            let r = b.headroom(src, dst);
            if r > b.floor {
                b.take(src, dst, r);
                open_up -= (b.up[src as usize] <= b.floor) as usize;
                open_down -= (b.down[dst as usize] <= b.floor) as usize;
                self.pairs[p as usize].next = r;
                self.next_served.push(p);
            }
        }
    }

    /// Put the re-keyed pairs (`moved`, sorted) back into `order`, the others keeping their
    /// places: one pass to drop them, then from the back a binary search per re-keyed pair
    /// and a block move of what follows it. O(pairs) moves of 4 bytes, O(k log pairs) reads.
    fn reorder(&mut self) {
        let bits = &self.moved_bits;
        self.order
            .retain(|&p| bits[p as usize / 64] & (1 << (p % 64)) == 0);
        let keys = &self.keys;
        let mut hi = self.order.len();
        self.order.resize(hi + self.moved.len(), 0);
        let mut w = self.order.len();
        for &m in self.moved.iter().rev() {
            let k = keys[m as usize];
            let pos = self.order[..hi].partition_point(|&p| keys[p as usize] < k);
            let len = hi - pos;
            self.order.copy_within(pos..hi, w - len);
            w -= len + 1;
            self.order[w] = m;
            hi = pos;
        }
    }
}

impl Scheduler for Pfp {
    fn name(&self) -> &str {
        "pfp"
    }

    fn clairvoyant(&self) -> bool {
        true
    }

    fn on_flow_completion(&self) -> FlowCompletion {
        self.on_flow_completion
    }

    fn allocate(&mut self, snap: &Snapshot, rates: &mut Rates) -> Decision {
        self.decided_at = snap.now_s;
        let fastest = (snap.fabric.up_bytes_per_s.iter())
            .chain(&snap.fabric.down_bytes_per_s)
            .fold(0.0, |a: f64, &b| a.max(b));
        self.grain = if fastest > 0.0 {
            fastest * GRAIN_S
        } else {
            1.0
        };
        self.group(snap);
        self.sorting.clear();
        for p in 0..self.pairs.len() {
            if self.lead(snap, rates, p) {
                self.sorting.push((self.keys[p], p as u32));
            }
        }
        self.sorting.sort_unstable(); // keys are unique
        self.order.clear();
        self.order.extend(self.sorting.iter().map(|&(_, p)| p));
        self.greedy(snap);
        for &p in &self.next_served {
            let pair = &mut self.pairs[p as usize];
            let (ci, fi) = head(&self.keys[p as usize]);
            rates.per_coflow[ci as usize][fi as usize] = pair.next;
            pair.next = 0.0;
        }
        std::mem::swap(&mut self.served, &mut self.next_served);
        Decision::none()
    }
}

impl Machinery for Pfp {
    fn redistribute(&mut self, snap: &Snapshot, rates: &mut Rates, freed: &mut Freed) -> bool {
        if self.on_flow_completion != FlowCompletion::Redistribute {
            return false;
        }
        // Only heads with a rate changed since the order was made: they sent bytes (their
        // key fell) or finished (the pair has a new head, or none).
        self.moved.clear();
        for i in 0..self.served.len() {
            let p = self.served[i];
            self.moved_bits[p as usize / 64] |= 1 << (p % 64);
            if self.lead(snap, rates, p as usize) {
                self.moved.push(p);
            }
        }
        let keys = &self.keys;
        self.moved.sort_unstable_by_key(|&p| keys[p as usize]);
        self.reorder();
        for &p in &self.served {
            self.moved_bits[p as usize / 64] = 0;
        }

        self.greedy(snap);
        // Hand out the differences; a pair in both lists is settled on its first visit.
        for &p in self.served.iter().chain(&self.next_served) {
            let pair = &self.pairs[p as usize];
            if !pair.live {
                continue;
            }
            let (ci, fi) = head(&self.keys[p as usize]);
            let rate = &mut rates.per_coflow[ci as usize][fi as usize];
            let add = pair.next - *rate;
            if add != 0.0 {
                *rate = pair.next;
                freed.changed.push((ci, fi, add));
                let [src, dst] = self.ends[p as usize];
                let up = &mut freed.spare.up[src as usize];
                *up = (*up - add).max(0.0);
                let down = &mut freed.spare.down[dst as usize];
                *down = (*down - add).max(0.0);
            }
        }
        for &p in &self.next_served {
            self.pairs[p as usize].next = 0.0;
        }
        std::mem::swap(&mut self.served, &mut self.next_served);
        true
    }
}

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
//! or finished and their pair has a new head), so only they move in the order, which is kept
//! per port ([`orders`]), and the greedy looks again only where its answer can change
//! ([`pass`]). The rates are those a full decision would give at that instant (same keys, same
//! order, same greedy, bit for bit), at a cost that follows the heads with a rate and the
//! ports whose filling moves, not the pairs.

mod orders;
mod pass;
#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;

use crate::alloc::{Budget, Freed};
use crate::machinery::Machinery;
use crate::{Decision, FlowCompletion, Rates, Scheduler, Snapshot};
use orders::Orders;
use pass::{Pass, PassIn, PassOut};

/// Priority key: deadline, remaining bytes (in grains, see [`GRAIN_S`]), then (coflow position
/// (arrival order), flow position). Times are non-negative, and the bits of a non-negative float
/// order as the float does: plain integers sort several times faster than float comparisons.
pub(super) type Key = (u64, u64, u64);

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
        round(remaining.max(0.0) / grain),
        (ci as u64) << 32 | fi as u64,
    )
}

/// `x.round() as u64` for `x >= 0`, bit for bit, without a call into libm: the fraction of a
/// non-negative float is exact, and ties go up as `round`'s do (away from zero).
fn round(x: f64) -> u64 {
    if x >= 4503599627370496.0 || x.is_nan() {
        return x as u64; // 2^52 and up: whole already (saturating as `as` does)
    }
    let whole = x as u64;
    whole + u64::from(x - whole as f64 >= 0.5)
}

/// The flow a key names: (coflow index, flow index).
fn head(k: &Key) -> (u32, u32) {
    ((k.2 >> 32) as u32, k.2 as u32)
}

/// The deadline a key orders by: none when deadlines are ignored.
fn deadline_of(d: Option<f64>, ignore: bool) -> f64 {
    match d {
        Some(d) if !ignore => d,
        _ => f64::INFINITY,
    }
}

/// Order-preserving bits of a float that is non-negative, or else taken as 0.
fn bits(x: f64) -> u64 {
    if x > 0.0 {
        x.to_bits()
    } else {
        0
    }
}

/// `slot[code]`: the pair with that [`Pfp::code`], else `u32::MAX`. A table over every code
/// while that stays small; past [`Slots::DENSE_MAX`] codes a map of the pairs in use (an
/// incast of 32,000 mappers has 32,000 pairs, and 2^30 codes: a 4 GB table).
#[derive(Debug, Default)]
pub(super) struct Slots {
    codes: usize,
    dense: Vec<u32>,
    sparse: Option<std::collections::HashMap<u32, u32>>,
}

impl Slots {
    const DENSE_MAX: usize = 1 << 22;

    fn new(codes: usize) -> Self {
        if codes <= Self::DENSE_MAX {
            Slots {
                codes,
                dense: vec![u32::MAX; codes],
                sparse: None,
            }
        } else {
            Slots {
                codes,
                dense: Vec::new(),
                sparse: Some(Default::default()),
            }
        }
    }
}

impl std::ops::Index<usize> for Slots {
    type Output = u32;

    #[inline]
    fn index(&self, code: usize) -> &u32 {
        match &self.sparse {
            None => &self.dense[code],
            Some(m) => m.get(&(code as u32)).unwrap_or(&u32::MAX),
        }
    }
}

impl std::ops::IndexMut<usize> for Slots {
    #[inline]
    fn index_mut(&mut self, code: usize) -> &mut u32 {
        match &mut self.sparse {
            None => &mut self.dense[code],
            Some(m) => m.entry(code as u32).or_insert(u32::MAX),
        }
    }
}

/// The flows of one (uplink, downlink) pair in the last decision.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pair {
    /// Its flows: `members[start..end]`.
    start: u32,
    end: u32,
    live: bool,
    /// Its head's rate in the allocation being computed.
    pub(super) next: f64,
    /// Its head's present rate, as this policy last set it (worlds only zero the rates of
    /// flows that end): read here rather than from the world's table, at random.
    rate: f64,
}

#[derive(Debug, Default)]
pub struct Pfp {
    /// `Redistribute` (the default) re-runs the greedy on a flow's end without a full
    /// decision; `Recompute` takes a full decision; `Ignore` leaves the bandwidth idle.
    pub on_flow_completion: FlowCompletion,
    /// Order by bytes left only, even when coflows have deadlines (SRTF, as the reference
    /// simulator's PDQ does in its deadline mode: it sorts a port's flows by size alone).
    pub ignore_deadlines: bool,
    budget: Budget,
    /// `slot[code]`: the index in `pairs` of the pair with that [`Pfp::code`] in the last
    /// decision, else `u32::MAX`.
    slot: Slots,
    /// Bits of a downlink in a pair's code.
    shift: u32,
    pairs: Vec<Pair>,
    members: Vec<(u32, u32)>,
    /// Per pair: (uplink, downlink), and its head's key. Kept apart from `pairs` so that the
    /// greedy pass and the binary searches read small, dense arrays.
    ends: Vec<[u32; 2]>,
    keys: Vec<Key>,
    /// Live pairs in their heads' priority order, per port; the greedy and what its last
    /// pass filled.
    orders: Orders,
    pass: Pass,
    /// Scratch: heads to sort, (key, pair) in a full decision, (key, code) after flow ends.
    sorting: Vec<(Key, u32)>,
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

    /// A pair's (uplink, downlink) in one number.
    fn code(&self, src: u32, dst: u32) -> u32 {
        src << self.shift | dst
    }

    /// Group the snapshot's flows by pair (a counting sort).
    fn group(&mut self, snap: &Snapshot) {
        let ports = snap.fabric.ports();
        let shift = usize::BITS - ports.saturating_sub(1).leading_zeros();
        if self.slot.codes != ports << shift || self.shift != shift {
            self.shift = shift;
            self.slot = Slots::new(ports << shift);
        } else if let Some(m) = &mut self.slot.sparse {
            m.clear();
        } else {
            for i in 0..self.ends.len() {
                let [src, dst] = self.ends[i];
                let c = self.code(src, dst);
                self.slot[c as usize] = u32::MAX;
            }
        }
        self.pairs.clear();
        self.ends.clear();
        for c in snap.coflows {
            for f in &c.flows {
                let s = &mut self.slot[(f.src << shift | f.dst) as usize];
                if *s == u32::MAX {
                    *s = self.pairs.len() as u32;
                    self.pairs.push(Pair {
                        start: 0,
                        end: 0,
                        live: true,
                        next: 0.0,
                        rate: 0.0,
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
                let p = &mut self.pairs[self.slot[(f.src << shift | f.dst) as usize] as usize];
                self.members[p.end as usize] = (ci as u32, fi as u32);
                p.end += 1;
            }
        }
        self.keys.clear();
        self.keys.resize(self.pairs.len(), (0, 0, 0));
    }

    /// Find pair `p`'s best unfinished flow at `snap.now_s`: it becomes the head and its key
    /// is stored and returned; `None` if every flow of the pair is done. Bytes in the
    /// snapshot are as of the last decision, so a flow with a rate has sent `rate * dt` more
    /// since.
    fn lead(&mut self, snap: &Snapshot, rates: &Rates, p: usize) -> Option<Key> {
        let dt = snap.now_s - self.decided_at;
        let ignore = self.ignore_deadlines;
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
                deadline_of(c.deadline_s, ignore),
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
        best
    }

    /// [`Pfp::lead`] for a pair whose head had a rate. Only heads have rates, so the pair's
    /// other flows sent nothing since the last decision and their keys stand, all above the
    /// head's; the head's key only falls as it sends. So while the head runs it stays the
    /// head, and only its key is new: O(1) instead of a look at every flow of the pair.
    fn lead_served(&mut self, snap: &Snapshot, rates: &Rates, p: usize) -> Option<Key> {
        let (ci, fi) = head(&self.keys[p]);
        let c = &snap.coflows[ci as usize];
        let f = &c.flows[fi as usize];
        if f.remaining_bytes <= 0.0 {
            self.pairs[p].rate = 0.0; // the next head has none yet
            return self.lead(snap, rates, p); // finished: look for the next head
        }
        let dt = snap.now_s - self.decided_at;
        let rate = self.pairs[p].rate;
        debug_assert_eq!(rate, rates.per_coflow[ci as usize][fi as usize]);
        let left = f.remaining_bytes - rate * dt;
        let deadline = deadline_of(c.deadline_s, self.ignore_deadlines);
        let k = key(deadline, left, self.grain, ci as usize, fi as usize);
        self.keys[p] = k;
        Some(k)
    }

    /// The greedy from scratch, or again after only the heads in `sorting` (new key, code)
    /// changed: the served pairs go to `next_served` with their rate in `next`.
    fn greedy(&mut self, snap: &Snapshot, again: bool) {
        if again {
            // Only the ports the last pass served at moved from their capacities: put those
            // back (the same values a reset copies), not every port of the fabric.
            let (up, down) = (&snap.fabric.up_bytes_per_s, &snap.fabric.down_bytes_per_s);
            for &p in &self.served {
                let [src, dst] = self.ends[p as usize];
                self.budget.up[src as usize] = up[src as usize];
                self.budget.down[dst as usize] = down[dst as usize];
            }
        } else {
            self.budget.reset(snap.fabric);
        }
        let input = PassIn {
            shift: self.shift,
            slot: &self.slot,
            orders: &self.orders,
        };
        let out = PassOut {
            pairs: &mut self.pairs,
            served: &mut self.next_served,
        };
        if again {
            (self.pass).again(&mut self.budget, &input, out, &self.sorting);
        } else {
            self.pass.full(&mut self.budget, &input, out);
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
            if let Some(k) = self.lead(snap, rates, p) {
                self.sorting.push((k, p as u32));
            }
        }
        self.sorting.sort_unstable(); // keys are unique
        let fabric = snap.fabric;
        let (up, down) = (fabric.up_bytes_per_s.len(), fabric.down_bytes_per_s.len());
        self.orders.clear(up, down, self.pairs.len());
        for &(k, p) in &self.sorting {
            let [src, dst] = self.ends[p as usize];
            self.orders.push(p, [src, dst], src << self.shift | dst, k);
        }
        self.greedy(snap, false);
        for &p in &self.next_served {
            let pair = &mut self.pairs[p as usize];
            let (ci, fi) = head(&self.keys[p as usize]);
            rates.per_coflow[ci as usize][fi as usize] = pair.next;
            pair.rate = pair.next;
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
        // Only heads with a rate changed since the last pass: they sent bytes (their key
        // fell) or finished (the pair has a new head, or none). They move in the orders, and
        // the greedy runs again from them.
        self.sorting.clear();
        for j in 0..self.served.len() {
            let p = self.served[j] as usize;
            let new = self.lead_served(snap, rates, p);
            let [src, dst] = self.ends[p];
            let code = src << self.shift | dst;
            (self.orders).rekey(p as u32, [src, dst], code, new, &self.slot);
            if let Some(k) = new {
                self.sorting.push((k, code));
            }
        }
        // Served in key order, and their order rarely changes: an insertion sort is linear.
        insertion_sort(&mut self.sorting);
        self.greedy(snap, true);
        // Hand out the differences; a pair in both lists is settled on its first visit.
        for &p in self.served.iter().chain(&self.next_served) {
            let pair = &mut self.pairs[p as usize];
            if !pair.live {
                continue;
            }
            let add = pair.next - pair.rate;
            if add != 0.0 {
                pair.rate = pair.next;
                let (ci, fi) = head(&self.keys[p as usize]);
                rates.per_coflow[ci as usize][fi as usize] = pair.next;
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

    /// Nothing runs: a full decision now would key every pair's best flow by bytes that are
    /// those of the last pass (flows without a rate sent nothing), so it orders the pairs as
    /// the kept orders do once the served heads, all finished, are re-keyed, and its greedy
    /// is the pass again: [`Pfp::redistribute`] from now (the bytes are current at `now`).
    fn idle(&mut self, snap: &Snapshot, rates: &mut Rates, freed: &mut Freed) -> bool {
        if self.on_flow_completion != FlowCompletion::Redistribute {
            return false;
        }
        self.decided_at = snap.now_s;
        self.redistribute(snap, rates, freed)
    }
}

/// Sort `v`, in time linear in its length plus the pairs out of order.
fn insertion_sort<T: Ord + Copy>(v: &mut [T]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1] > x {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

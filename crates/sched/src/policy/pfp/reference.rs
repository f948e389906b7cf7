//! The streaming greedy pfp had before its per-port orders (commit cfd8018), kept verbatim
//! but for its name as the reference the property tests hold the new code to, bit for bit.

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
pub(super) struct Reference {
    /// `Redistribute` (the default) re-runs the greedy on a flow's end without a full
    /// decision; `Recompute` takes a full decision; `Ignore` leaves the bandwidth idle.
    pub on_flow_completion: FlowCompletion,
    budget: Budget,
    /// `slot[code]`: the index in `pairs` of the pair with that [`Reference::code`] in the last
    /// decision, else `u32::MAX`.
    slot: Vec<u32>,
    /// Bits of a downlink in a pair's code.
    shift: u32,
    pairs: Vec<Pair>,
    members: Vec<(u32, u32)>,
    /// Per pair: (uplink, downlink), and its head's key. Kept apart from `pairs` so that the
    /// greedy pass and the binary searches read small, dense arrays.
    ends: Vec<[u32; 2]>,
    keys: Vec<Key>,
    /// Live pairs in their heads' priority order, by [`Reference::code`]: the greedy reads their
    /// ports from the order itself, in sequence, rather than from a table at random.
    order: Vec<u32>,
    /// Scratch: heads to sort in a full decision; pairs re-keyed in a redistribution, and a
    /// bit per pair marking them.
    sorting: Vec<(Key, u32)>,
    moved: Vec<u32>,
    moved_bits: Vec<u64>,
    /// Pairs whose head has a rate, and those of the allocation being computed, with their
    /// positions in `order` when the greedy served them.
    served: Vec<u32>,
    next_served: Vec<u32>,
    served_at: Vec<u32>,
    next_served_at: Vec<u32>,
    /// Scratch: positions in `order` of the pairs leaving their place in a redistribution.
    gone: Vec<u32>,
    /// The time of the last full decision: the snapshot's bytes are as of then.
    decided_at: f64,
    /// Bytes per step of the remaining-size keys.
    grain: f64,
}

impl Reference {
    pub fn new(on_flow_completion: FlowCompletion) -> Self {
        Reference {
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
        if self.slot.len() != ports << shift || self.shift != shift {
            self.shift = shift;
            self.slot = vec![u32::MAX; ports << shift];
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

    /// [`Reference::lead`] for a pair whose head had a rate. Only heads have rates, so the pair's
    /// other flows sent nothing since the last decision and their keys stand, all above the
    /// head's; the head's key only falls as it sends. So while the head runs it stays the
    /// head, and only its key is new: O(1) instead of a look at every flow of the pair.
    fn lead_served(&mut self, snap: &Snapshot, rates: &Rates, p: usize) -> bool {
        let (ci, fi) = head(&self.keys[p]);
        let c = &snap.coflows[ci as usize];
        let f = &c.flows[fi as usize];
        if f.remaining_bytes <= 0.0 {
            return self.lead(snap, rates, p); // finished: look for the next head
        }
        let dt = snap.now_s - self.decided_at;
        let left = f.remaining_bytes - rates.per_coflow[ci as usize][fi as usize] * dt;
        let deadline = c.deadline_s.unwrap_or(f64::INFINITY);
        self.keys[p] = key(deadline, left, self.grain, ci as usize, fi as usize);
        true
    }

    /// Each head in `order` takes all its two ports have left; the served pairs go to
    /// `next_served` with their rate in `next`.
    fn greedy(&mut self, snap: &Snapshot) {
        let b = &mut self.budget;
        b.reset(snap.fabric);
        self.next_served.clear();
        self.next_served_at.clear();
        let floor = b.floor;
        // Once every uplink or every downlink is full nobody else can get anything.
        let mut open_up = b.up.iter().filter(|&&x| x > floor).count();
        let mut open_down = b.down.iter().filter(|&&x| x > floor).count();
        if open_up == 0 || open_down == 0 {
            return;
        }
        // Locals, so that the walk keeps them in registers: it is most of pfp's time, and
        // almost every pair it visits finds a port full.
        let (up, down) = (&mut b.up[..], &mut b.down[..]);
        let (shift, mask) = (self.shift, (1 << self.shift) - 1);
        for (i, &c) in self.order.iter().enumerate() {
            let (src, dst) = ((c >> shift) as usize, (c & mask) as usize);
            let (u, d) = (up[src], down[dst]);
            // `headroom > floor`, with the same rate and takes as `Budget`'s.
            if u > floor && d > floor {
                let r = u.min(d);
                up[src] = (u - r).max(0.0);
                down[dst] = (d - r).max(0.0);
                open_up -= (up[src] <= floor) as usize;
                open_down -= (down[dst] <= floor) as usize;
                let p = self.slot[c as usize];
                self.pairs[p as usize].next = r;
                self.next_served.push(p);
                self.next_served_at.push(i as u32);
                if open_up == 0 || open_down == 0 {
                    break;
                }
            }
        }
    }

    /// Put the re-keyed pairs (`moved`, sorted) back into `order`, the others keeping their
    /// places: drop the positions in `gone` (sorted) with block moves, then from the back a
    /// binary search per re-keyed pair and a block move of what follows it. O(pairs) moves of
    /// 4 bytes, O(k log pairs) reads.
    fn reorder(&mut self) {
        let mut w = self.gone.first().map_or(self.order.len(), |&g| g as usize);
        for (j, &g) in self.gone.iter().enumerate() {
            let end = self
                .gone
                .get(j + 1)
                .map_or(self.order.len(), |&n| n as usize);
            let from = g as usize + 1;
            self.order.copy_within(from..end, w);
            w += end - from;
        }
        self.order.truncate(w);
        let (keys, slot) = (&self.keys, &self.slot);
        let mut hi = self.order.len();
        self.order.resize(hi + self.moved.len(), 0);
        let mut w = self.order.len();
        for &m in self.moved.iter().rev() {
            let k = keys[m as usize];
            let pos = self.order[..hi].partition_point(|&c| keys[slot[c as usize] as usize] < k);
            let len = hi - pos;
            self.order.copy_within(pos..hi, w - len);
            w -= len + 1;
            let [src, dst] = self.ends[m as usize];
            self.order[w] = src << self.shift | dst;
            hi = pos;
        }
    }
}

impl Reference {
    /// Whether re-keyed pair `p` at position `i` of `order` may keep its place: both its
    /// neighbours keep theirs (they are not re-keyed) and its new key lies between theirs.
    /// Then the order stays sorted around it whatever else moves.
    fn stays(&self, i: usize, p: u32) -> bool {
        let k = self.keys[p as usize];
        let fixed = |q: u32| self.moved_bits[q as usize / 64] & (1 << (q % 64)) == 0;
        let before = i == 0 || {
            let q = self.slot[self.order[i - 1] as usize];
            fixed(q) && self.keys[q as usize] < k
        };
        let after = i + 1 == self.order.len() || {
            let q = self.slot[self.order[i + 1] as usize];
            fixed(q) && k < self.keys[q as usize]
        };
        before && after
    }
}

impl Scheduler for Reference {
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
        for i in 0..self.sorting.len() {
            let [src, dst] = self.ends[self.sorting[i].1 as usize];
            let c = self.code(src, dst);
            self.order.push(c);
        }
        self.greedy(snap);
        for &p in &self.next_served {
            let pair = &mut self.pairs[p as usize];
            let (ci, fi) = head(&self.keys[p as usize]);
            rates.per_coflow[ci as usize][fi as usize] = pair.next;
            pair.next = 0.0;
        }
        std::mem::swap(&mut self.served, &mut self.next_served);
        std::mem::swap(&mut self.served_at, &mut self.next_served_at);
        Decision::none()
    }
}

impl Machinery for Reference {
    fn redistribute(&mut self, snap: &Snapshot, rates: &mut Rates, freed: &mut Freed) -> bool {
        if self.on_flow_completion != FlowCompletion::Redistribute {
            return false;
        }
        // Only heads with a rate changed since the order was made: they sent bytes (their
        // key fell) or finished (the pair has a new head, or none). Most keep their place: a
        // head whose neighbours in the order kept theirs, with its new key between theirs,
        // stays where it is (FB: 86 of 123 per redistribution). The others leave and are put
        // back in key order.
        for &p in &self.served {
            self.moved_bits[p as usize / 64] |= 1 << (p % 64);
        }
        self.moved.clear();
        self.gone.clear();
        for j in 0..self.served.len() {
            let (p, i) = (self.served[j], self.served_at[j] as usize);
            if self.lead_served(snap, rates, p as usize) {
                if self.stays(i, p) {
                    continue;
                }
                self.moved.push(p);
            }
            self.gone.push(i as u32);
        }
        let keys = &self.keys;
        self.moved.sort_unstable_by_key(|&p| keys[p as usize]);
        self.gone.sort_unstable();
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
        std::mem::swap(&mut self.served_at, &mut self.next_served_at);
        true
    }
}

//! Redistribution between decisions. When flows finish, the bandwidth they held goes back to
//! the unfinished flows on the same ports in the priority order of the last decision, greedily
//! as that decision's backfill would hand it out. A flow that gets a freed port but finds its
//! other port held by lower-priority flows takes it from them (lowest priority first), and the
//! ports those flows free are topped up in turn (without further yielding, which bounds the
//! work): priority is kept, not only work.
//!
//! Why: a full decision per flow completion costs O(active flows) and the FB trace has 700 k
//! flows; a top-up costs what the freed ports touch. Without the preemption a coflow served
//! whole-port (Sincronia's greedy rates) keeps a lower-priority flow in the way of a higher one
//! until it ends, which triples Sincronia's average CCT on the FB trace. It is work conserving:
//! afterwards every freed port is full or each of its waiting flows is blocked at its other end
//! by flows of at least its priority. Rates inside a coflow are not re-planned (no new MADD);
//! `SimOptions::refresh_s` adds periodic full decisions for that.
//!
//! Cost: flows are indexed by port pair, so a scan of a freed port looks at each peer at most
//! once (the head of the pair's queue). A port freed by finished flows walks its peers sorted
//! by head and stops once full, checking a passed-over peer with two reads (FB: 16 M peers
//! looked at in 1 M walks, where passes over every peer looked at 116 M). A port freed by a
//! preemption offers only to peers with spare, found by a bit row intersection. Finished
//! flows leave their pair's queue once, for good.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use super::budget::Budget;
use super::pair_index::dense_for;
use super::portbits::{ones, PortBits};
use crate::state::{CoflowState, Rates};

/// The ports whose bandwidth came back, and what changed when it was handed out.
#[derive(Debug, Default, Clone)]
pub struct Freed {
    /// Capacity minus the current rates, per uplink and downlink (the world keeps it). Between
    /// two calls of [`TopUp::apply`] it may only grow, and only at the ports listed below.
    pub spare: Budget,
    pub up: Vec<u32>,
    pub down: Vec<u32>,
    /// Rate changes: (coflow index, flow index, bytes per second added; negative if taken).
    pub changed: Vec<(u32, u32, f64)>,
}

impl Freed {
    pub fn clear_ports(&mut self) {
        self.up.clear();
        self.down.clear();
        self.changed.clear();
    }
}

/// What a top-up writes: rates, the spare they leave, the changes, and the ports to scan.
struct Out<'a> {
    rates: &'a mut Rates,
    spare: &'a mut Budget,
    changed: &'a mut Vec<(u32, u32, f64)>,
    work: &'a mut Vec<(u32, usize, bool)>,
}

/// The end of a chain of entries.
const NIL: u32 = u32::MAX;

/// A flow's priority: (rank of its coflow) << 32 | (flow index); smaller is higher.
type Key = u64;

fn key(rank: u32, flow: u32) -> Key {
    (rank as u64) << 32 | flow as u64
}

/// A pair's key in [`TopUp::slots`].
fn pair_key(src: u32, dst: u32) -> u64 {
    (src as u64) << 32 | dst as u64
}

/// The flows of the last decision indexed by port pair, in priority order.
#[derive(Debug, Default, Clone)]
pub struct TopUp {
    ports: usize,
    /// Coflow index of each rank (a key's rank names its coflow).
    by_rank: Vec<u32>,
    /// Flows as (rank, flow index) in priority order, and per entry the next entry of its
    /// (uplink, downlink) pair: each pair's flows form a chain in priority order. Both sides
    /// read the same chains: a downlink's pair (`dst`, `src`) is the uplink pair (`src`, `dst`).
    entries: Vec<(u32, u32)>,
    next: Vec<u32>,
    /// Per group: the first entry not yet skipped (`NIL`: none left); the entries before it
    /// are finished flows, skipped for good (whichever side skipped them). `tail` is the last
    /// entry while indexing, `NIL` everywhere between indexings.
    head: Vec<u32>,
    tail: Vec<u32>,
    /// Per side and pair `port * ports + peer`: the key under which the pair is listed in
    /// `order`, that of its head or an earlier (finished) flow of its group (a dense row per
    /// port, so a scan of a port's peers reads one cache-friendly row).
    head_key: [Vec<Key>; 2],
    /// Per side and port: the peers it still has unfinished flows towards (dense only).
    live: [PortBits; 2],
    /// Past [`dense_for`]'s ports, the pair arrays (`head`, `tail`, `head_key`) hold a slot
    /// per pair in use, found here by `src << 32 | dst` (both sides share it), and the scans
    /// read a port's live peers from `order` instead of `live`: memory by the pairs used.
    slots: Option<HashMap<u64, u32>>,
    /// Per side and port: those peers as (key at the pair's head, peer), sorted by key.
    order: [Vec<Vec<(Key, u32)>>; 2],
    /// Per side: the ports with spare capacity (above the floor).
    open: [PortBits; 2],
    open_valid: bool,
    /// What of the index is still to build: it is built at the first [`TopUp::apply`] after a
    /// decision, from that hand-on's snapshot (the decision's, its finished flows at 0 bytes
    /// and 0 rate), so a decision followed by another decision builds nothing.
    pending: Pending,
    /// Flows with a rate, per side and port, sorted by key; a flow that yielded all of its
    /// rate may stay listed at its other port (checked when it comes up there).
    holders: [Vec<Vec<Key>>; 2],
    /// Per side and port: 1 + the largest key among `holders` (0: none). It may name a flow
    /// that since stopped: it only prunes candidates, which are then checked exactly.
    worst: [Vec<u64>; 2],
    work: Vec<(u32, usize, bool)>,
    candidates: BinaryHeap<Reverse<(Key, usize)>>,
    /// Peers already offered bandwidth in the current scan.
    done: Vec<u64>,
    /// Freed ports go to flows that find spare at their other end only: nobody yields (for a
    /// policy whose leftovers are not handed out by priority, see [`TopUp::set_yielding`]).
    no_yield: bool,
}

const UP: usize = 0;
const DOWN: usize = 1;

/// The parts of the index a decision left to build (see `TopUp::pending`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Pending {
    #[default]
    Nothing,
    /// The holders (the pairs' chains are built).
    Holders,
    /// The pairs' chains and the holders.
    All,
}

/// Passes over a port's peers in one scan before its remaining candidates are sorted.
const LINEAR_PASSES: usize = 4;

fn spare_of(spare: &mut Budget, side: usize) -> &mut Vec<f64> {
    if side == UP {
        &mut spare.up
    } else {
        &mut spare.down
    }
}

impl TopUp {
    /// The coflows last indexed, as indices into that snapshot, highest priority first.
    pub fn order(&self) -> &[u32] {
        &self.by_rank
    }

    /// Index the flows of the coflows in `order` (highest priority first; flows in their
    /// coflow's order) and those of them the decision's rates serve. Coflows not listed never
    /// get redistributed bandwidth nor yield any. The index itself is built at the first
    /// [`TopUp::apply`], from the snapshot and rates it is given then.
    pub fn index(&mut self, ports: usize, order: impl IntoIterator<Item = usize>) {
        self.set_order(ports, order);
        self.pending = Pending::All;
    }

    /// Whether a flow handed a freed port takes the other end from lower-priority flows (the
    /// default) or only what is spare there.
    pub fn set_yielding(&mut self, on: bool) {
        self.no_yield = !on;
    }

    fn set_order(&mut self, ports: usize, order: impl IntoIterator<Item = usize>) {
        self.ports = ports;
        self.by_rank.clear();
        self.by_rank.extend(order.into_iter().map(|ci| ci as u32));
        self.open_valid = false;
    }

    /// [`TopUp::index`]'s part that needs no rates, built now: the pairs' chains and the peer
    /// orders. A policy that knows its priority order before its rates may build it on
    /// another core while it decides the rates, then call [`TopUp::index_holders`].
    pub fn index_pairs(
        &mut self,
        ports: usize,
        coflows: &[CoflowState],
        order: impl IntoIterator<Item = usize>,
    ) {
        self.set_order(ports, order);
        self.build_pairs(coflows);
    }

    /// [`TopUp::index`]'s second part, after [`TopUp::index_pairs`]: the flows with a rate,
    /// per port, in priority order (built at the first [`TopUp::apply`]).
    pub fn index_holders(&mut self) {
        self.pending = Pending::Holders;
    }

    /// The pairs' chains and the peer orders of the coflows of `by_rank`.
    fn build_pairs(&mut self, coflows: &[CoflowState]) {
        let ports = self.ports;
        if !dense_for(ports) {
            return self.index_sparse_pairs(ports, coflows);
        }
        if self.slots.take().is_some() {
            // Back from the sparse layout: its slots are not the dense pairs' `NIL` tails.
            self.head.clear();
            self.tail.clear();
        }
        // Pair arrays are written and read only where `live` has the pair: no clearing of
        // ports² entries per decision.
        let pairs = ports * ports;
        for side in [UP, DOWN] {
            self.live[side].reset(ports, ports);
            self.open[side].reset(1, ports);
            self.head_key[side].resize(pairs.max(self.head_key[side].len()), 0);
            self.order[side].resize_with(ports, Vec::new);
            self.order[side].iter_mut().for_each(Vec::clear);
        }
        for v in [&mut self.head, &mut self.tail] {
            v.resize(pairs.max(v.len()), NIL);
        }
        // One pass: each flow joins its pair's chain. Flows come in priority order, so a
        // pair's first flow is its head, the chains are in priority order, and the peer
        // orders come out sorted. The fields are borrowed apart and the arrays sized up
        // front, so the loop keeps them in registers (it runs over every active flow at every
        // decision); `tail` is `NIL` for every pair between calls, so it also says which
        // pairs the pass has met.
        let TopUp {
            by_rank,
            entries,
            next,
            head,
            tail,
            head_key: [key_up, key_down],
            live: [live_up, live_down],
            order: [order_up, order_down],
            ..
        } = self;
        let total: usize = by_rank
            .iter()
            .map(|&ci| coflows[ci as usize].flows.len())
            .sum();
        entries.clear();
        entries.reserve(total);
        next.clear();
        next.resize(total, NIL);
        let (head, tail) = (&mut head[..pairs], &mut tail[..pairs]);
        let (key_up, key_down) = (&mut key_up[..pairs], &mut key_down[..pairs]);
        let mut i = 0u32;
        for (r, &ci) in by_rank.iter().enumerate() {
            let r = r as u32;
            let flows = &coflows[ci as usize].flows;
            entries.extend((0..flows.len() as u32).map(|fi| (r, fi)));
            for (fi, f) in flows.iter().enumerate() {
                let (src, dst) = (f.src as usize, f.dst as usize);
                let pair = src * ports + dst;
                let last = tail[pair];
                if last == NIL {
                    let k = key(r, fi as u32);
                    live_up.set(src, dst, true);
                    live_down.set(dst, src, true);
                    head[pair] = i;
                    key_up[pair] = k;
                    key_down[dst * ports + src] = k;
                    order_up[src].push((k, dst as u32));
                    order_down[dst].push((k, src as u32));
                } else {
                    next[last as usize] = i;
                }
                tail[pair] = i;
                i += 1;
            }
        }
        for (src, peers) in order_up.iter().enumerate() {
            for &(_, dst) in peers {
                tail[src * ports + dst as usize] = NIL;
            }
        }
    }

    /// Build what of the index is still to build, from `coflows` and `rates` as they are now.
    fn build_pending(&mut self, coflows: &[CoflowState], rates: &Rates) {
        match std::mem::take(&mut self.pending) {
            Pending::Nothing => {}
            Pending::Holders => self.build_holders(coflows, rates),
            Pending::All => {
                self.build_pairs(coflows);
                self.build_holders(coflows, rates);
            }
        }
    }

    /// [`TopUp::index_pairs`] on a fabric too large for dense pair arrays: a slot per pair in
    /// use, handed out in order of first flow; the same chains, keys and peer orders.
    fn index_sparse_pairs(&mut self, ports: usize, coflows: &[CoflowState]) {
        let slots = self.slots.get_or_insert_with(HashMap::new);
        slots.clear();
        for side in [UP, DOWN] {
            // No rows: only the width, which sizes a scan's `done` bits.
            self.live[side].reset(0, ports);
            self.open[side].reset(1, ports);
            self.head_key[side].clear();
            self.order[side].resize_with(ports, Vec::new);
            self.order[side].iter_mut().for_each(Vec::clear);
        }
        self.head.clear();
        self.tail.clear();
        self.entries.clear();
        self.next.clear();
        for r in 0..self.by_rank.len() {
            let ci = self.by_rank[r];
            for (fi, f) in coflows[ci as usize].flows.iter().enumerate() {
                let (i, k) = (self.entries.len() as u32, key(r as u32, fi as u32));
                self.entries.push((r as u32, fi as u32));
                self.next.push(NIL);
                match slots.entry(pair_key(f.src, f.dst)) {
                    Entry::Vacant(e) => {
                        e.insert(self.head.len() as u32);
                        self.head.push(i);
                        self.tail.push(i);
                        self.head_key[UP].push(k);
                        self.head_key[DOWN].push(k);
                        self.order[UP][f.src as usize].push((k, f.dst));
                        self.order[DOWN][f.dst as usize].push((k, f.src));
                    }
                    Entry::Occupied(e) => {
                        let s = *e.get() as usize;
                        self.next[self.tail[s] as usize] = i;
                        self.tail[s] = i;
                    }
                }
            }
        }
    }

    /// Where pair (`p`, `q`) of `side` keeps its head key, and where its group (the chain of
    /// the uplink pair) keeps its head.
    fn at(&self, side: usize, p: usize, q: usize) -> (usize, usize) {
        let (src, dst) = if side == UP { (p, q) } else { (q, p) };
        match &self.slots {
            None => (p * self.ports + q, src * self.ports + dst),
            Some(slots) => {
                let s = slots[&pair_key(src as u32, dst as u32)] as usize;
                (s, s)
            }
        }
    }

    /// The index built now, as a decision built it before it was built lazily.
    #[cfg(test)]
    pub(crate) fn build_now(&mut self, coflows: &[CoflowState], rates: &Rates) {
        self.build_pending(coflows, rates);
    }

    /// The flows `rates` serves, per port, in priority order.
    fn build_holders(&mut self, coflows: &[CoflowState], rates: &Rates) {
        let ports = self.ports;
        for side in [UP, DOWN] {
            self.holders[side].resize_with(ports, Vec::new);
            self.holders[side].iter_mut().for_each(Vec::clear);
        }
        // Keys come in increasing order: every holder is a push, and a port's worst is its
        // last holder (what `hold` keeps, without its checks per flow).
        let TopUp {
            by_rank,
            holders: [up, down],
            worst,
            ..
        } = self;
        for (r, &ci) in by_rank.iter().enumerate() {
            let ci = ci as usize;
            for (fi, (f, &x)) in coflows[ci]
                .flows
                .iter()
                .zip(&rates.per_coflow[ci])
                .enumerate()
            {
                if x > 0.0 {
                    let k = key(r as u32, fi as u32);
                    up[f.src as usize].push(k);
                    down[f.dst as usize].push(k);
                }
            }
        }
        for (w, held) in worst.iter_mut().zip([&*up, &*down]) {
            w.clear();
            w.extend(held.iter().map(|h| h.last().map_or(0, |&k| k + 1)));
        }
    }

    /// `k` now holds bandwidth at port `p` of `side`. Holders stay sorted: a decision indexes
    /// them in key order (a push each), and a port holds few enough for an insert to be cheap.
    fn hold(&mut self, side: usize, p: usize, k: Key) {
        let list = &mut self.holders[side][p];
        if list.last().is_none_or(|&l| l < k) {
            list.push(k);
        } else if let Err(i) = list.binary_search(&k) {
            list.insert(i, k);
        }
        let w = &mut self.worst[side][p];
        *w = (*w).max(k + 1);
    }

    fn release(&mut self, side: usize, p: usize, k: Key) {
        let list = &mut self.holders[side][p];
        if list.last() == Some(&k) {
            list.pop();
        } else if let Ok(i) = list.binary_search(&k) {
            list.remove(i);
        }
        if self.worst[side][p] == k + 1 {
            self.worst[side][p] = list.last().map_or(0, |&w| w + 1);
        }
    }

    /// Record whether port `p` of `side` has spare capacity.
    fn mark(&mut self, spare: &Budget, side: usize, p: usize) {
        let room = if side == UP {
            spare.up[p]
        } else {
            spare.down[p]
        };
        self.open[side].set(0, p, room > spare.floor);
    }

    /// The first unfinished flow of pair (`p`, `q`) on `side`, skipping finished ones for good
    /// (and moving the pair's place in `p`'s peer order along with its head).
    fn first_waiting(
        &mut self,
        coflows: &[CoflowState],
        side: usize,
        p: usize,
        q: usize,
    ) -> Option<Key> {
        let (pair, group) = self.at(side, p, q);
        let mut found = None;
        let mut at = self.head[group];
        while at != NIL {
            let (r, fi) = self.entries[at as usize];
            let ci = self.by_rank[r as usize] as usize;
            if coflows[ci].flows[fi as usize].remaining_bytes > 0.0 {
                found = Some(key(r, fi));
                break;
            }
            at = self.next[at as usize];
        }
        self.head[group] = at;
        let old = self.head_key[side][pair];
        let new = found.unwrap_or(Key::MAX);
        if new != old {
            self.head_key[side][pair] = new;
            let list = &mut self.order[side][p];
            let i = list
                .binary_search(&(old, q as u32))
                .expect("a live pair is in its port's order");
            match found {
                Some(new) => {
                    // Keys only grow: the pair moves towards the back.
                    let j = i + 1 + list[i + 1..].partition_point(|&e| e < (new, q as u32));
                    list[i..j].rotate_left(1);
                    list[j - 1] = (new, q as u32);
                }
                None => {
                    list.remove(i);
                    if self.slots.is_none() {
                        self.live[side].set(p, q, false);
                    }
                }
            }
        }
        found
    }

    /// Hand the spare bandwidth of the freed ports to waiting flows (see the module docs).
    pub fn apply(&mut self, coflows: &[CoflowState], rates: &mut Rates, freed: &mut Freed) {
        let Freed {
            spare,
            up,
            down,
            changed,
        } = freed;
        let floor = spare.floor;
        if self.ports == 0 {
            return; // never indexed: nothing ranked waits anywhere
        }
        // Built from the state of the last decision with its finished flows at 0 bytes and 0
        // rate: the same chains, and the same holders but for finished ones, which a built
        // index skips when they come up (a finished holder yields nothing, and leaving it out
        // of a port's worst key only prunes peers that could not have taken).
        self.build_pending(coflows, rates);
        if !self.open_valid {
            for side in [UP, DOWN] {
                for p in 0..self.ports {
                    self.mark(spare, side, p);
                }
            }
            self.open_valid = true;
        }
        let mut work = std::mem::take(&mut self.work);
        work.clear();
        let preempt = !self.no_yield;
        work.extend(down.iter().map(|&p| (p, DOWN, preempt)));
        work.extend(up.iter().map(|&p| (p, UP, preempt)));
        // A coflow's flows often end together: scan each freed port once.
        work.sort_unstable_by_key(|&(p, side, _)| (side, p));
        work.dedup();
        for &(p, side, _) in &work {
            self.mark(spare, side, p as usize);
        }
        let mut candidates = std::mem::take(&mut self.candidates);
        let mut done = std::mem::take(&mut self.done);
        let mut out = Out {
            rates,
            spare,
            changed,
            work: &mut work,
        };
        while let Some((p, side, preempt)) = out.work.pop() {
            let p = p as usize;
            if p >= self.ports || spare_of(out.spare, side)[p] <= floor {
                continue;
            }
            if preempt {
                self.walk(coflows, &mut out, side, p);
                continue;
            }
            // Without preemption only peers with spare can take: passes over the intersection
            // of the peer and spare bits find them, in priority order of their first waiting
            // flow. A scan usually fills its port after one or two offers, so the first few
            // come from passes (nothing to build); a long scan sorts its remaining candidates.
            let other = 1 - side;
            done.clear();
            done.resize(self.live[side].words(), 0);
            candidates.clear();
            let mut passes = 0;
            let mut short = Shortlist::default();
            while spare_of(out.spare, side)[p] > floor {
                let next = if passes > LINEAR_PASSES {
                    candidates.pop().map(|Reverse(c)| c)
                } else if let Some(c) = short.pop() {
                    Some(c)
                } else {
                    passes += 1;
                    if passes > LINEAR_PASSES {
                        self.all_peers(side, p, &done, &mut candidates);
                        candidates.pop().map(|Reverse(c)| c)
                    } else {
                        self.shortlist(side, p, &done, &mut short);
                        short.pop()
                    }
                };
                let Some((k, q)) = next else {
                    break;
                };
                match self.first_waiting(coflows, side, p, q) {
                    Some(first) if first == k => {}
                    Some(first) => {
                        // The head had finished: its pair competes again with its next flow.
                        if self.open[other].contains(0, q) {
                            if passes > LINEAR_PASSES {
                                candidates.push(Reverse((first, q)));
                            } else {
                                short.offer((first, q));
                            }
                        }
                        continue;
                    }
                    None => continue,
                }
                done[q / 64] |= 1 << (q % 64);
                self.serve(coflows, &mut out, side, p, q, k, false);
            }
        }
        self.candidates = candidates;
        self.done = done;
        self.work = work;
    }

    /// A freed port `p` offers its spare to its peers in priority order of their first waiting
    /// flows, walking its sorted peer list: a peer that cannot take is passed over at the cost
    /// of one check, and the walk stops once the port is full.
    fn walk(&mut self, coflows: &[CoflowState], out: &mut Out, side: usize, p: usize) {
        let mut i = 0;
        while spare_of(out.spare, side)[p] > out.spare.floor {
            let Some(&(k, q)) = self.order[side][p].get(i) else {
                break;
            };
            let q = q as usize;
            // The key may lag behind the pair's head, which only errs towards taking: a
            // peer that fails is passed over without looking at its flows.
            if !self.may_take(side, p, q) {
                i += 1;
                continue;
            }
            if self.first_waiting(coflows, side, p, q) != Some(k) {
                continue; // the pair moved on (or out): slot `i` now holds the next peer
            }
            i += 1;
            self.serve(coflows, out, side, p, q, k, true);
        }
    }

    /// Flow `k` of pair (`p`, `q`) takes what it can of `p`'s spare: the spare at `q`, and
    /// when preempting also what lower-priority flows at `q` yield, the lowest first. The
    /// ports those flows free are topped up in turn, without yielding again (bounded work).
    #[allow(clippy::too_many_arguments)]
    fn serve(
        &mut self,
        coflows: &[CoflowState],
        out: &mut Out,
        side: usize,
        p: usize,
        q: usize,
        k: Key,
        preempt: bool,
    ) {
        let other = 1 - side;
        let Out {
            rates,
            spare,
            changed,
            work,
        } = out;
        let here = spare_of(spare, side)[p];
        let (ci, fi) = (self.by_rank[(k >> 32) as usize], k as u32);
        while preempt && spare_of(spare, other)[q] < here {
            let Some(&g) = self.holders[other][q].last() else {
                break;
            };
            if g <= k {
                break;
            }
            let (gci, gfi) = (self.by_rank[(g >> 32) as usize], g as u32);
            let gf = &coflows[gci as usize].flows[gfi as usize];
            let x = if side == UP { gf.src } else { gf.dst } as usize;
            let rate = &mut rates.per_coflow[gci as usize][gfi as usize];
            let need = here - spare_of(spare, other)[q];
            let gone = gf.remaining_bytes <= 0.0 || *rate <= 0.0;
            // It leaves `q`'s holders now; at its other end `x` it stays listed until it comes
            // up there (a rate of 0 marks it gone): no search and block move per yield.
            if gone || *rate <= need {
                self.release(other, q, g);
            }
            if gone {
                continue;
            }
            let take = rate.min(need);
            *rate -= take;
            changed.push((gci, gfi, -take));
            spare_of(spare, other)[q] += take;
            spare_of(spare, side)[x] += take;
            self.mark(spare, other, q);
            self.mark(spare, side, x);
            if x != p {
                work.push((x as u32, side, false));
            }
        }
        let add = here.min(spare_of(spare, other)[q]);
        if add > spare.floor {
            let f = &coflows[ci as usize].flows[fi as usize];
            let (src, dst) = (f.src, f.dst);
            let rate = &mut rates.per_coflow[ci as usize][fi as usize];
            let was_idle = *rate <= 0.0;
            *rate += add;
            if was_idle {
                self.hold(UP, src as usize, k);
                self.hold(DOWN, dst as usize, k);
            }
            spare.take(src, dst, add);
            self.mark(spare, UP, src as usize);
            self.mark(spare, DOWN, dst as usize);
            changed.push((ci, fi, add));
        }
    }

    /// Whether peer `q` could take bandwidth from `p` now: it has spare, or holds a flow of
    /// lower priority than the head of the pair.
    fn may_take(&self, side: usize, p: usize, q: usize) -> bool {
        let other = 1 - side;
        self.open[other].contains(0, q) || self.worst[other][q] > self.first_key(side, p, q) + 1
    }

    /// The peers of `p` with spare not yet offered (`done`), the few with the smallest keys
    /// into `short`.
    fn shortlist(&self, side: usize, p: usize, done: &[u64], short: &mut Shortlist) {
        let other = 1 - side;
        short.clear();
        if self.slots.is_some() {
            // `order` lists the live peers by key: the first that qualify are the shortlist.
            for (k, q) in self.sparse_peers(side, p, done) {
                if k >= short.cutoff {
                    break;
                }
                short.offer((k, q));
            }
            return;
        }
        for (i, &skip) in done.iter().enumerate() {
            let word = self.live[side].word(p, i) & !skip & self.open[other].word(0, i);
            for q in ones(i, word) {
                let k = self.first_key(side, p, q);
                if k < short.cutoff {
                    short.offer((k, q));
                }
            }
        }
    }

    /// Every peer `shortlist` could still return, into `into`.
    fn all_peers(
        &self,
        side: usize,
        p: usize,
        done: &[u64],
        into: &mut BinaryHeap<Reverse<(Key, usize)>>,
    ) {
        let other = 1 - side;
        if self.slots.is_some() {
            into.extend(self.sparse_peers(side, p, done).map(Reverse));
            return;
        }
        for (i, &skip) in done.iter().enumerate() {
            let word = self.live[side].word(p, i) & !skip & self.open[other].word(0, i);
            for q in ones(i, word) {
                into.push(Reverse((self.first_key(side, p, q), q)));
            }
        }
    }

    /// Sparse layout: the live peers of `p` with spare not yet offered, by key (the key
    /// `order` lists a pair under is its `first_key`).
    fn sparse_peers<'a>(
        &'a self,
        side: usize,
        p: usize,
        done: &'a [u64],
    ) -> impl Iterator<Item = (Key, usize)> + 'a {
        let open = &self.open[1 - side];
        self.order[side][p]
            .iter()
            .map(|&(k, q)| (k, q as usize))
            .filter(move |&(_, q)| done[q / 64] >> (q % 64) & 1 == 0 && open.contains(0, q))
    }

    /// The key at the head of pair (`p`, `q`), finished or not: no later than the first
    /// waiting flow's, so a test that it passes prunes nothing that could pass.
    fn first_key(&self, side: usize, p: usize, q: usize) -> Key {
        match self.slots {
            None => self.head_key[side][p * self.ports + q],
            Some(_) => self.head_key[side][self.at(side, p, q).0],
        }
    }
}

/// The few candidates with the smallest keys that one pass over the peers found, and the
/// smallest key it left out: entries below it come out in exact order; then a new pass.
#[derive(Debug, Clone, Copy)]
struct Shortlist {
    best: [(Key, usize); Shortlist::LEN],
    len: usize,
    cutoff: Key,
}

impl Default for Shortlist {
    fn default() -> Self {
        Shortlist {
            best: [(Key::MAX, 0); Shortlist::LEN],
            len: 0,
            cutoff: Key::MAX,
        }
    }
}

impl Shortlist {
    const LEN: usize = 4;

    fn clear(&mut self) {
        *self = Shortlist::default();
    }

    /// Whether a candidate with key `k` would enter the list.
    fn beats(&self, k: Key) -> bool {
        k < self.cutoff && (self.len < Self::LEN || k < self.best[Self::LEN - 1].0)
    }

    fn offer(&mut self, c: (Key, usize)) {
        if !self.beats(c.0) {
            self.cutoff = self.cutoff.min(c.0);
            return;
        }
        if self.len == Self::LEN {
            self.cutoff = self.cutoff.min(self.best[Self::LEN - 1].0);
            self.len -= 1;
        }
        let mut i = self.len;
        while i > 0 && self.best[i - 1].0 > c.0 {
            self.best[i] = self.best[i - 1];
            i -= 1;
        }
        self.best[i] = c;
        self.len += 1;
    }

    /// The smallest candidate, if it is certainly the smallest of all the pass saw.
    fn pop(&mut self) -> Option<(Key, usize)> {
        if self.len == 0 || self.best[0].0 >= self.cutoff {
            self.len = 0;
            return None;
        }
        let c = self.best[0];
        self.best.copy_within(1..self.len, 0);
        self.len -= 1;
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::Fabric;
    use proptest::prelude::*;

    /// A decision on a random fabric: coflows of random flows, a random priority order, and
    /// greedy rates that serve some flows whole, some in part, some not.
    fn decision() -> impl Strategy<Value = (Fabric, Vec<CoflowState>, Rates, Vec<usize>)> {
        (2usize..7, 1usize..7).prop_flat_map(|(ports, n)| {
            let p = ports as u32;
            let flows = prop::collection::vec((0..p, 0..p, 1u32..4, 0u8..3), 1..10);
            (
                Just(ports),
                prop::collection::vec(flows, n),
                Just(n).prop_shuffle_order(),
                Just(n).prop_shuffle_order(),
            )
                .prop_map(|(ports, flows, order, fill_order)| {
                    let fabric = Fabric::uniform(ports, 4.0);
                    let coflows: Vec<CoflowState> = flows
                        .iter()
                        .map(|fs| {
                            let f: Vec<_> =
                                fs.iter().map(|&(s, d, b, _)| (s, d, b as f64)).collect();
                            CoflowState::of_flows(&f)
                        })
                        .collect();
                    let mut rates = Rates::default();
                    rates.reset(&coflows);
                    let mut budget = Budget::full(&fabric);
                    // Filled in another order than the priority order, so that flows of
                    // lower priority hold ports that flows of higher priority wait for.
                    for &ci in &fill_order {
                        for (fi, &(s, d, _, share)) in flows[ci].iter().enumerate() {
                            let room = budget.up[s as usize].min(budget.down[d as usize]);
                            let r = room * share as f64 / 2.0;
                            if r > 0.0 {
                                rates.per_coflow[ci][fi] = r;
                                budget.take(s, d, r);
                            }
                        }
                    }
                    (fabric, coflows, rates, order)
                })
        })
    }

    trait ShuffleOrder {
        fn prop_shuffle_order(self) -> BoxedStrategy<Vec<usize>>;
    }

    impl ShuffleOrder for Just<usize> {
        fn prop_shuffle_order(self) -> BoxedStrategy<Vec<usize>> {
            Just((0..self.0).collect::<Vec<_>>()).prop_shuffle().boxed()
        }
    }

    proptest! {
        /// An index built at the first hand-on, after flows ended, hands bandwidth on exactly
        /// as one built at the decision (the way every index was built before), over rounds
        /// of flow ends: same rates and same changes, bit for bit.
        #[test]
        fn an_index_built_at_the_first_hand_on_is_the_one_built_at_the_decision(
            (fabric, mut coflows, rates, order) in decision(),
            ends in prop::collection::vec(prop::collection::vec(any::<prop::sample::Index>(), 1..4), 1..5),
        ) {
            let ports = fabric.ports();
            let mut eager = TopUp::default();
            eager.index(ports, order.iter().copied());
            eager.build_now(&coflows, &rates);
            let mut lazy = TopUp::default();
            lazy.index(ports, order.iter().copied());
            let mut spare = Budget::full(&fabric);
            for (c, r) in coflows.iter().zip(&rates.per_coflow) {
                for (f, &x) in c.flows.iter().zip(r) {
                    spare.take(f.src, f.dst, x);
                }
            }
            let (mut r_eager, mut r_lazy) = (rates.clone(), rates);
            let mut f_eager = Freed { spare, ..Default::default() };
            let mut f_lazy = f_eager.clone();
            for round in ends {
                // End some of the flows still running, as a world does: 0 bytes, 0 rate,
                // their bandwidth spare at their ports.
                let running: Vec<(usize, usize)> = coflows
                    .iter()
                    .enumerate()
                    .flat_map(|(ci, c)| (0..c.flows.len()).map(move |fi| (ci, fi)))
                    .filter(|&(ci, fi)| {
                        coflows[ci].flows[fi].remaining_bytes > 0.0
                            && r_eager.per_coflow[ci][fi] > 0.0
                    })
                    .collect();
                if running.is_empty() {
                    break;
                }
                for at in round {
                    let (ci, fi) = running[at.index(running.len())];
                    let f = &mut coflows[ci].flows[fi];
                    if f.remaining_bytes <= 0.0 {
                        continue;
                    }
                    f.remaining_bytes = 0.0;
                    let x = r_eager.per_coflow[ci][fi];
                    prop_assert_eq!(x.to_bits(), r_lazy.per_coflow[ci][fi].to_bits());
                    for (fr, r) in [(&mut f_eager, &mut r_eager), (&mut f_lazy, &mut r_lazy)] {
                        r.per_coflow[ci][fi] = 0.0;
                        fr.spare.up[f.src as usize] += x;
                        fr.spare.down[f.dst as usize] += x;
                        fr.up.push(f.src);
                        fr.down.push(f.dst);
                    }
                }
                for (fr, r, t) in [
                    (&mut f_eager, &mut r_eager, &mut eager),
                    (&mut f_lazy, &mut r_lazy, &mut lazy),
                ] {
                    fr.changed.clear();
                    t.apply(&coflows, r, fr);
                    fr.up.clear();
                    fr.down.clear();
                }
                prop_assert_eq!(&f_eager.changed, &f_lazy.changed);
                prop_assert_eq!(format!("{:?}", r_eager.per_coflow), format!("{:?}", r_lazy.per_coflow));
            }
        }
    }

    #[test]
    fn freed_uplink_goes_to_the_first_flow_with_room_in_priority_order() {
        // Coflow 1 (priority) has a finished flow 0->1 and a flow 0->2 blocked at downlink 2;
        // coflow 0 has 0->3 with room. Port 0's uplink is freed.
        let fabric = Fabric::uniform(4, 10.0);
        let coflows = vec![
            CoflowState::of_flows(&[(0, 3, 5.0)]),
            CoflowState::of_flows(&[(0, 1, 0.0), (0, 2, 5.0)]),
        ];
        let mut rates = Rates {
            per_coflow: vec![vec![0.0], vec![0.0, 10.0]],
        };
        let mut freed = Freed {
            spare: Budget::full(&fabric),
            ..Default::default()
        };
        freed.spare.take(0, 2, 10.0);
        let mut t = TopUp::default();
        t.index(4, [1, 0]);
        freed.up.push(0);
        freed.down.push(1);
        t.apply(&coflows, &mut rates, &mut freed);
        assert_eq!(rates.per_coflow[0], vec![0.0]);
        assert_eq!(freed.changed, vec![]);

        // Now uplink 0 has spare 0 (0->2 holds it all). Finish 0->2: its 10 go to 0->3.
        let coflows = vec![
            CoflowState::of_flows(&[(0, 3, 5.0)]),
            CoflowState::of_flows(&[(0, 1, 0.0), (0, 2, 0.0)]),
        ];
        rates.per_coflow[1][1] = 0.0;
        freed.spare = Budget::full(&fabric);
        freed.clear_ports();
        freed.up.push(0);
        freed.down.push(2);
        t.apply(&coflows, &mut rates, &mut freed);
        assert_eq!(rates.per_coflow[0], vec![10.0]);
        assert_eq!(freed.changed, vec![(0, 0, 10.0)]);
        assert!(freed.spare.up[0] <= freed.spare.floor);
    }

    #[test]
    fn a_long_scan_serves_peers_in_priority_order_past_the_first_passes() {
        // Uplink 0 frees 10; downlinks 1..=8 have 2 spare each. Flows to them, in priority
        // order 8, 7, ..., 1 (the first already finished), take 2 each until 10 are gone.
        let fabric = Fabric::uniform(9, 10.0);
        let flows: Vec<(u32, u32, f64)> = (1..=8).rev().map(|d| (0, d, 5.0)).collect();
        let mut coflows = vec![CoflowState::of_flows(&flows)];
        coflows[0].flows[0].remaining_bytes = 0.0;
        let mut rates = Rates {
            per_coflow: vec![vec![0.0; 8]],
        };
        let mut t = TopUp::default();
        t.index(9, [0]);
        let mut freed = Freed {
            spare: Budget::full(&fabric),
            ..Default::default()
        };
        for d in 1..=8 {
            freed.spare.take(8, d, 8.0); // someone else holds all but 2 of each downlink
        }
        freed.up.push(0);
        t.apply(&coflows, &mut rates, &mut freed);
        assert_eq!(
            rates.per_coflow[0],
            vec![0.0, 2.0, 2.0, 2.0, 2.0, 2.0, 0.0, 0.0],
            "flow 0 finished; flows 1-5 in order get 2 each"
        );
    }

    #[test]
    fn a_pair_whose_head_finished_falls_behind_the_peers_it_now_ranks_after() {
        // Priority order: 0->1 (finished), 0->2, 0->1. Pair (0, 1) is listed under its
        // finished head, ahead of (0, 2); once its head moves on it must come after it.
        let fabric = Fabric::uniform(3, 10.0);
        let mut coflows = vec![CoflowState::of_flows(&[
            (0, 1, 5.0),
            (0, 2, 5.0),
            (0, 1, 5.0),
        ])];
        let mut rates = Rates {
            per_coflow: vec![vec![0.0; 3]],
        };
        let mut t = TopUp::default();
        t.index(3, [0]);
        coflows[0].flows[0].remaining_bytes = 0.0;
        let mut freed = Freed {
            spare: Budget::full(&fabric),
            ..Default::default()
        };
        freed.spare.take(1, 1, 8.0); // downlinks 1 and 2 keep 2 spare each
        freed.spare.take(2, 2, 8.0);
        freed.up.push(0);
        t.apply(&coflows, &mut rates, &mut freed);
        assert_eq!(freed.changed, vec![(0, 1, 2.0), (0, 2, 2.0)]);
        assert_eq!(rates.per_coflow[0], vec![0.0, 2.0, 2.0]);
    }

    #[test]
    fn a_shortlist_yields_in_order_only_what_it_knows_to_be_smallest() {
        let mut s = Shortlist::default();
        for k in [9, 3, 7, 5, 8, 6] {
            s.offer((k, k as usize));
        }
        // Kept 3, 5, 6, 7; left out 8 and 9: everything kept is below the cutoff (8).
        assert_eq!(
            (0..4).map(|_| s.pop().unwrap().0).collect::<Vec<_>>(),
            [3, 5, 6, 7]
        );
        assert_eq!(s.pop(), None, "8 was not kept: a new pass must find it");
        let mut s = Shortlist::default();
        for k in [4, 2] {
            s.offer((k, 0));
        }
        assert_eq!(s.pop(), Some((2, 0)));
        s.offer((10, 1)); // a finished head that moved on
        assert_eq!(s.pop(), Some((4, 0)));
        assert_eq!(s.pop(), Some((10, 1)));
    }

    #[test]
    fn a_higher_priority_flow_takes_its_other_port_back_from_a_lower_one() {
        // A (priority) = {0->1 finished, 2->1 waiting: downlink 1 was busy}; B = {2->3} holds
        // uplink 2 whole (greedy rates). Downlink 1 frees up: A's 2->1 takes uplink 2 from B.
        let fabric = Fabric::uniform(4, 10.0);
        let coflows = vec![
            CoflowState::of_flows(&[(0, 1, 0.0), (2, 1, 5.0)]),
            CoflowState::of_flows(&[(2, 3, 5.0)]),
        ];
        let mut rates = Rates {
            per_coflow: vec![vec![10.0, 0.0], vec![10.0]],
        };
        let mut t = TopUp::default();
        t.index(4, [0, 1]);
        rates.per_coflow[0][0] = 0.0; // 0->1 ends: the world zeroes it and frees its ports
        let mut freed = Freed {
            spare: Budget::full(&fabric),
            ..Default::default()
        };
        freed.spare.take(2, 3, 10.0);
        freed.up.push(0);
        freed.down.push(1);
        t.apply(&coflows, &mut rates, &mut freed);
        assert_eq!(rates.per_coflow, vec![vec![0.0, 10.0], vec![0.0]]);
        assert_eq!(freed.changed, vec![(1, 0, -10.0), (0, 1, 10.0)]);
        assert!(freed.spare.down[3] >= 10.0, "B's downlink is free again");
    }
}

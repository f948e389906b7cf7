//! The reference's FAIR (`FlowSimulator.fairShare`): every step each flow moves
//! `min(1 MB / flows into its reducer port, 1 MB / flows out of its mapper port)`, counted over
//! all unfinished flows at the step's start. What one port leaves unused is not handed to
//! others. Its `MAX_CONCURRENT_FLOWS = 5` is dead code at b61f209 (`numFlowsToAdd` is
//! overwritten with all flows), so every flow of a reducer starts at once, as here.
//!
//! A flow's share depends only on its port pair, so flows are kept per pair with the bytes each
//! has been given since the pair was last rebased; a pair's next completion sits in a heap, and
//! only the pairs on the ports whose counts change are touched.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};

use super::book::Book;
use super::clock::Engine;
use super::units::{bytes_per_step, steps_to_finish, PORT_BPS, STEP_MS, ZERO};

/// f64 with a total order, for the heaps.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Key(f64);
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

struct Pair {
    src: usize,
    dst: usize,
    /// Bytes given to each of its flows between the first use and `base_step`.
    given: f64,
    base_step: u64,
    per_step: f64,
    /// Step at which its next flow ends, as scheduled in `Fair::events`.
    due: Option<u64>,
    /// (bytes given when the flow is done, flow), smallest first.
    flows: BinaryHeap<Reverse<(Key, u32)>>,
}

pub struct Fair {
    pairs: Vec<Pair>,
    index: HashMap<(u32, u32), usize>,
    n_out: Vec<usize>,
    n_in: Vec<usize>,
    pairs_out: Vec<Vec<usize>>,
    pairs_in: Vec<Vec<usize>>,
    /// (due step, pair) of every pair with a flow that moves.
    events: BTreeSet<(u64, usize)>,
    dirty_out: Vec<usize>,
    dirty_in: Vec<usize>,
    /// Pairs that got flows since the last admission pass.
    grown: Vec<usize>,
    now_step: u64,
}

impl Fair {
    pub fn new(ports: usize) -> Self {
        Fair {
            pairs: Vec::new(),
            index: HashMap::new(),
            n_out: vec![0; ports],
            n_in: vec![0; ports],
            pairs_out: vec![Vec::new(); ports],
            pairs_in: vec![Vec::new(); ports],
            events: BTreeSet::new(),
            dirty_out: Vec::new(),
            dirty_in: Vec::new(),
            grown: Vec::new(),
            now_step: 0,
        }
    }

    /// Give pair `p` the share of today's counts; if that changes it (or `force`), bring it to
    /// `now_step` at its old share first and schedule its next completion again.
    fn refresh(&mut self, p: usize, force: bool) {
        let now = self.now_step;
        let full = bytes_per_step(PORT_BPS);
        let pair = &mut self.pairs[p];
        let (n_in, n_out) = (self.n_in[pair.dst], self.n_out[pair.src]);
        let per_step = if n_in == 0 || n_out == 0 {
            0.0
        } else {
            (full / n_in as f64).min(full / n_out as f64)
        };
        if per_step == pair.per_step && !force {
            return;
        }
        pair.given += (now - pair.base_step) as f64 * pair.per_step;
        pair.base_step = now;
        pair.per_step = per_step;
        if let Some(due) = pair.due.take() {
            self.events.remove(&(due, p));
        }
        if let Some(Reverse((Key(done_at), _))) = pair.flows.peek() {
            if let Some(k) = steps_to_finish(done_at - pair.given, pair.per_step) {
                pair.due = Some(now + k);
                self.events.insert((now + k, p));
            }
        }
    }

    fn refresh_dirty(&mut self) {
        let mut touched: Vec<usize> = Vec::new();
        for port in std::mem::take(&mut self.dirty_out) {
            touched.extend(&self.pairs_out[port]);
        }
        for port in std::mem::take(&mut self.dirty_in) {
            touched.extend(&self.pairs_in[port]);
        }
        touched.sort_unstable();
        touched.dedup();
        for p in touched {
            self.refresh(p, false);
        }
    }
}

impl Engine for Fair {
    fn admit(&mut self, book: &mut Book, job: u32, now_ms: i64) {
        self.now_step = (now_ms / STEP_MS) as u64;
        let flows: Vec<u32> = book.open_flows(job).collect();
        for f in flows {
            let fl = &book.flows[f as usize];
            let (src, dst) = (fl.src as usize, fl.dst as usize);
            let next = self.pairs.len();
            let p = *self.index.entry((fl.src, fl.dst)).or_insert(next);
            if p == next {
                self.pairs.push(Pair {
                    src,
                    dst,
                    given: 0.0,
                    base_step: self.now_step,
                    per_step: 0.0,
                    due: None,
                    flows: BinaryHeap::new(),
                });
            }
            let pair = &mut self.pairs[p];
            if pair.flows.is_empty() {
                // Only pairs with flows sit on their ports' lists.
                self.pairs_out[src].push(p);
                self.pairs_in[dst].push(p);
            }
            let given_now = pair.given + (self.now_step - pair.base_step) as f64 * pair.per_step;
            pair.flows.push(Reverse((Key(given_now + fl.size), f)));
            self.grown.push(p);
            self.n_out[src] += 1;
            self.n_in[dst] += 1;
            self.dirty_out.push(src);
            self.dirty_in.push(dst);
        }
    }

    fn after_admission(&mut self, _book: &mut Book, _now_ms: i64) {
        self.dirty_out.sort_unstable();
        self.dirty_out.dedup();
        self.dirty_in.sort_unstable();
        self.dirty_in.dedup();
        self.refresh_dirty();
        // A new flow may end before what the pair had.
        let mut grown = std::mem::take(&mut self.grown);
        grown.sort_unstable();
        grown.dedup();
        for p in grown {
            self.refresh(p, true);
        }
    }

    fn next_event(&mut self, _book: &Book) -> Option<u64> {
        self.events.first().map(|&(step, _)| step - self.now_step)
    }

    fn advance(&mut self, book: &mut Book, t0_ms: i64, steps: u64) -> Vec<u32> {
        self.now_step = (t0_ms / STEP_MS) as u64 + steps;
        let end_ms = t0_ms + steps as i64 * STEP_MS;
        let mut departed = Vec::new();
        let mut due_pairs = Vec::new();
        while let Some(&(step, p)) = self.events.first() {
            if step > self.now_step {
                break;
            }
            self.events.pop_first();
            self.pairs[p].due = None;
            let now = self.now_step;
            let pair = &mut self.pairs[p];
            let k = (now - pair.base_step) as f64;
            while let Some(&Reverse((Key(done_at), f))) = pair.flows.peek() {
                if (done_at - pair.given) - k * pair.per_step > ZERO {
                    break;
                }
                pair.flows.pop();
                self.n_out[pair.src] -= 1;
                self.n_in[pair.dst] -= 1;
                self.dirty_out.push(pair.src);
                self.dirty_in.push(pair.dst);
                if book.finish_flow(f, end_ms) {
                    departed.push(book.flows[f as usize].job);
                }
            }
            if pair.flows.is_empty() {
                // Start afresh when flows come back (bytes given so far no longer matter).
                pair.given = 0.0;
                pair.base_step = now;
                pair.per_step = 0.0;
                let (src, dst) = (pair.src, pair.dst);
                self.pairs_out[src].retain(|&q| q != p);
                self.pairs_in[dst].retain(|&q| q != p);
                continue;
            }
            due_pairs.push(p);
        }
        self.dirty_out.sort_unstable();
        self.dirty_out.dedup();
        self.dirty_in.sort_unstable();
        self.dirty_in.dedup();
        self.refresh_dirty();
        // A pair that was due is scheduled again for what it has left (if its share changed,
        // `refresh_dirty` did that already).
        for p in due_pairs {
            if self.pairs[p].due.is_none() {
                self.refresh(p, true);
            }
        }
        departed
    }

    fn after_departure(&mut self, _book: &mut Book, _cur_ms: i64, _departed: &[u32]) {}
}

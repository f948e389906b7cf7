//! `aalo-uncoord`: Aalo without its coordinator, the "uncoordinated non-clairvoyant" baseline
//! of the thesis' simulations (§6.8, row 22 of the key results: Aalo 15.8x better). Every
//! sender decides alone: it places a coflow in a D-CLAS queue by the bytes that coflow has sent
//! *from this sender* (what its daemon sees), not by the bytes all its flows sent. The rest is
//! Aalo's: K exponentially spaced queues, FIFO inside a queue, weighted (or strict) sharing
//! across queues, per-flow max-min inside a coflow. Local knowledge is instant, so there is no
//! Δ: a sender demotes a coflow the moment its own bytes cross a threshold.
//!
//! Where the thesis is silent (docs/fb-results.md): the queues' priorities are honoured at the
//! receivers too (as switch priority queues tagged by the senders would), DAGs are ignored
//! (each coflow is on its own), and a sender's bytes of flows that ended between two decisions
//! are apportioned among the senders whose flows ended (exact when decisions happen at every
//! flow end, as under `recompute`; the coflow's total is always exact).

use std::collections::HashMap;

use coflowkit_model::CoflowId;

use super::aalo::AaloConfig;
use super::dclas::{Filler, InterQueue, Shares};
use crate::alloc::{Budget, TopUp};
use crate::machinery::Machinery;
use crate::state::CoflowState;
use crate::{Decision, FlowCompletion, Rates, Scheduler, Snapshot};

/// What one sender knows of one coflow, as of the last decision.
#[derive(Debug, Clone, Copy, Default)]
struct Sender {
    port: u32,
    /// Bytes of this coflow's flows from this sender that have ended.
    finished: f64,
    /// Bytes sent so far by its unfinished flows, their number, and their summed rate.
    sent: f64,
    flows: u32,
    rate: f64,
}

#[derive(Debug, Clone, Default)]
struct Local {
    at_s: f64,
    senders: Vec<Sender>,
    seen: u64,
}

/// One (coflow, sender) part of the snapshot: what a sender schedules.
#[derive(Debug, Clone, Copy)]
struct Part {
    coflow: usize,
    sender: usize,
    /// Range of `flow_of` holding the part's flows' indices in the coflow.
    flows: (usize, usize),
}

#[derive(Debug, Default)]
pub struct AaloUncoord {
    pub config: AaloConfig,
    /// Coflows arriving at the same instant are ordered by each sender on its own (a seeded
    /// shuffle per port), not by the snapshot's order that every sender would share.
    local_ties: bool,
    local: HashMap<CoflowId, Local>,
    stamp: u64,
    parts: Vec<Part>,
    flow_of: Vec<usize>,
    /// Per port: scratch for grouping flows by sender.
    slot: Vec<u32>,
    /// One coflow state per part (its flows and the sender's bytes), reused between decisions.
    views: Vec<CoflowState>,
    queue_of: Vec<usize>,
    by_queue: Vec<usize>,
    view_rates: Rates,
    budget: Budget,
    shares: Shares,
    filler: Filler,
    topup: TopUp,
}

impl AaloUncoord {
    pub fn new(config: AaloConfig) -> Self {
        AaloUncoord {
            config,
            ..Default::default()
        }
    }

    /// Ties in arrival are broken by each sender on its own (Theorem C.1.1's uncoordinated
    /// ports: n coflows that arrive together, no order any two ports are bound to share).
    pub fn with_local_ties(mut self, on: bool) -> Self {
        self.local_ties = on;
        self
    }

    /// The bytes each sender of `c` has seen it send: the bytes of its unfinished flows there,
    /// plus those of its flows there that ended (tallied from decision to decision). `slot` is
    /// scratch, one entry per port, all `u32::MAX` on entry and on return.
    fn update_senders(local: &mut Local, c: &CoflowState, now: f64, slot: &mut [u32]) {
        let mut cur: Vec<Sender> = Vec::new();
        for f in &c.flows {
            let k = &mut slot[f.src as usize];
            if *k == u32::MAX {
                *k = cur.len() as u32;
                cur.push(Sender {
                    port: f.src,
                    ..Default::default()
                });
            }
            let s = &mut cur[*k as usize];
            s.sent += f.sent_bytes;
            s.flows += 1;
        }
        let dt = (now - local.at_s).max(0.0);
        let unfinished: f64 = cur.iter().map(|s| s.sent).sum();
        let known: f64 = local.senders.iter().map(|s| s.finished).sum();
        let new_finished = (c.sent_bytes - unfinished - known).max(0.0);
        // Which senders' flows ended, and about how many bytes each: what they had sent plus
        // what their rates moved since, less what their unfinished flows account for now.
        let now_of = |port: u32, cur: &[Sender]| {
            let k = slot[port as usize];
            (k != u32::MAX).then(|| cur[k as usize])
        };
        let mut guess = vec![-1.0; local.senders.len()];
        let mut total = 0.0;
        let mut ended = 0usize;
        for (g, old) in guess.iter_mut().zip(&local.senders) {
            let (flows, sent) = now_of(old.port, &cur).map_or((0, 0.0), |s| (s.flows, s.sent));
            if flows < old.flows {
                *g = (old.sent + old.rate * dt - sent).max(0.0);
                total += *g;
                ended += 1;
            }
        }
        for (&g, old) in guess.iter().zip(&local.senders) {
            let share = if g < 0.0 {
                0.0
            } else if total > 0.0 {
                new_finished * g / total
            } else {
                new_finished / ended as f64
            };
            let finished = old.finished + share;
            match slot[old.port as usize] {
                u32::MAX => {
                    // A sender whose flows all ended still remembers what it sent.
                    slot[old.port as usize] = cur.len() as u32;
                    cur.push(Sender {
                        port: old.port,
                        finished,
                        ..Default::default()
                    });
                }
                k => cur[k as usize].finished = finished,
            }
        }
        if ended == 0 && new_finished > 0.0 {
            // Bytes no sender accounts for (flows that ended before the coflow's first
            // decision): spread them evenly over its senders.
            let n = cur.len().max(1) as f64;
            cur.iter_mut().for_each(|s| s.finished += new_finished / n);
        }
        for s in &cur {
            slot[s.port as usize] = u32::MAX;
        }
        local.senders = cur;
        local.at_s = now;
    }

    /// Split the snapshot into (coflow, sender) parts with each sender's view of its bytes.
    fn split(&mut self, snap: &Snapshot) {
        self.stamp += 1;
        self.parts.clear();
        self.flow_of.clear();
        self.slot.clear();
        self.slot.resize(snap.fabric.ports(), u32::MAX);
        let mut n = 0;
        for (ci, c) in snap.coflows.iter().enumerate() {
            let local = self.local.entry(c.id).or_insert_with(|| Local {
                at_s: snap.now_s,
                ..Default::default()
            });
            Self::update_senders(local, c, snap.now_s, &mut self.slot);
            local.seen = self.stamp;
            // Bucket the flows by sender (counting sort, flows in coflow order per sender).
            let base = self.flow_of.len();
            let mut start = vec![0usize; local.senders.len() + 1];
            for (si, s) in local.senders.iter().enumerate() {
                self.slot[s.port as usize] = si as u32;
                start[si + 1] = start[si] + s.flows as usize;
            }
            self.flow_of.resize(base + c.flows.len(), 0);
            let mut next = start.clone();
            for (fi, f) in c.flows.iter().enumerate() {
                let si = self.slot[f.src as usize] as usize;
                self.flow_of[base + next[si]] = fi;
                next[si] += 1;
            }
            for s in &local.senders {
                self.slot[s.port as usize] = u32::MAX;
            }
            for (si, s) in local.senders.iter().enumerate() {
                if s.flows == 0 {
                    continue;
                }
                let range = (base + start[si], base + start[si + 1]);
                self.parts.push(Part {
                    coflow: ci,
                    sender: si,
                    flows: range,
                });
                if self.views.len() <= n {
                    // Not `c.clone()`: a view kept the capacity of its whole coflow's flows
                    // after `clear`, so one N x N coflow held N views of N^2 flows (2.96 GB at
                    // 250,000 flows, about 12 KB a flow).
                    self.views.push(CoflowState {
                        flows: Vec::with_capacity(s.flows as usize),
                        dag: None,
                        ..*c
                    });
                }
                let v = &mut self.views[n];
                v.id = c.id;
                v.arrival_s = c.arrival_s;
                v.deadline_s = None;
                v.dag = None;
                v.sent_bytes = s.finished + s.sent;
                v.flows.clear();
                v.flows
                    .extend(self.flow_of[range.0..range.1].iter().map(|&fi| c.flows[fi]));
                n += 1;
            }
        }
        self.views.truncate(n);
        let stamp = self.stamp;
        self.local.retain(|_, l| l.seen == stamp);
        let queues = self.config.queues;
        self.queue_of.clear();
        self.queue_of.extend(
            self.views
                .iter()
                .map(|v| queues.index_reached(v.sent_bytes)),
        );
        self.by_queue.clear();
        self.by_queue.extend(0..n);
        let q = &self.queue_of;
        if self.local_ties {
            // Inside a queue by arrival; coflows that arrived together in each sender's own
            // order (a hash of port and coflow: a fixed, per-port shuffle).
            // A view holds one sender's flows of one coflow.
            let views = &self.views;
            let rank = |i: usize| {
                let v = &views[i];
                let port = v.flows.first().map_or(0, |f| f.src) as u64;
                splitmix((port << 40) ^ v.id)
            };
            self.by_queue.sort_by(|&a, &b| {
                (q[a].cmp(&q[b]))
                    .then(views[a].arrival_s.total_cmp(&views[b].arrival_s))
                    .then(rank(a).cmp(&rank(b)))
            });
        } else {
            // Stable: inside a queue, the snapshot's arrival order (FIFO).
            self.by_queue.sort_by_key(|&i| q[i]);
        }
    }

    /// Aalo's fill over the parts: each queue's share in FIFO order (weighted), then what is
    /// left in strict priority order.
    fn fill(&mut self) {
        let rule = self.config.within_coflow;
        let rates = &mut self.view_rates;
        rates.reset(&self.views);
        if self.config.inter_queue == InterQueue::Weighted {
            let (views, by_queue, queue_of) = (&self.views, &self.by_queue, &self.queue_of);
            let queues = &self.config.queues;
            (self.shares).compute(queues, &self.budget, views, by_queue, queue_of);
            let mut slot = 0;
            for &i in by_queue {
                while self.shares.present[slot] != queue_of[i] {
                    slot += 1;
                }
                let flows = &views[i].flows;
                let share = &mut self.shares.budgets[slot];
                self.filler
                    .fill(rule, flows, share, &mut rates.per_coflow[i]);
                self.filler.take_added(flows, &mut self.budget);
            }
        }
        for &i in &self.by_queue {
            let flows = &self.views[i].flows;
            (self.filler).fill(rule, flows, &mut self.budget, &mut rates.per_coflow[i]);
        }
    }
}

/// SplitMix64's finalizer: a fixed shuffle of `x`.
fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Machinery for AaloUncoord {
    fn topup(&mut self) -> Option<&mut TopUp> {
        Some(&mut self.topup)
    }
}

impl Scheduler for AaloUncoord {
    fn name(&self) -> &str {
        "aalo-uncoord"
    }

    fn clairvoyant(&self) -> bool {
        false
    }

    fn on_flow_completion(&self) -> FlowCompletion {
        self.config.on_flow_completion
    }

    fn allocate(&mut self, snap: &Snapshot, rates: &mut Rates) -> Decision {
        let now = snap.now_s;
        self.split(snap);
        self.budget.reset(snap.fabric);
        self.fill();
        // Back to the snapshot's flows, and each sender's rate for the next tally.
        let mut speed = vec![0.0; self.parts.len()];
        for (p, part) in self.parts.iter().enumerate() {
            let fl = &self.flow_of[part.flows.0..part.flows.1];
            for (&fi, &r) in fl.iter().zip(&self.view_rates.per_coflow[p]) {
                rates.per_coflow[part.coflow][fi] = r;
                speed[p] += r;
            }
            let id = snap.coflows[part.coflow].id;
            if let Some(l) = self.local.get_mut(&id) {
                l.senders[part.sender].rate = speed[p];
            }
        }
        if self.config.on_flow_completion == FlowCompletion::Redistribute {
            // Hand-on order: each coflow at its best part's place.
            let mut first = vec![usize::MAX; snap.coflows.len()];
            for (rank, &p) in self.by_queue.iter().enumerate() {
                let c = self.parts[p].coflow;
                first[c] = first[c].min(rank);
            }
            let mut order: Vec<usize> = (0..snap.coflows.len()).collect();
            order.sort_by_key(|&c| first[c]);
            self.topup.index(snap.fabric.ports(), order);
        }
        // Wake when the next part's bytes cross its sender's threshold at these rates.
        let queues = &self.config.queues;
        let mut wake = Decision::none();
        for (p, v) in self.views.iter().enumerate() {
            let thr = queues.next_threshold(self.queue_of[p]);
            if thr.is_finite() && speed[p] > 0.0 {
                wake = wake.min(Decision::at(now + (thr - v.sent_bytes) / speed[p]));
            }
        }
        wake
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::aalo::Aalo;
    use crate::policy::dclas::Queues;
    use crate::policy::test_world::decide;
    use coflowkit_model::Fabric;

    fn coflow(id: CoflowId, arrival: f64, sent: f64, flows: &[(u32, u32, f64)]) -> CoflowState {
        let mut c = CoflowState::of_flows(flows);
        c.id = id;
        c.arrival_s = arrival;
        c.sent_bytes = sent;
        for f in &mut c.flows {
            f.remaining_bytes = f64::INFINITY;
        }
        c
    }

    fn config() -> AaloConfig {
        AaloConfig {
            queues: Queues {
                k: 2,
                e: 10.0,
                q1_hi_bytes: 10.0,
            },
            inter_queue: InterQueue::Strict,
            sync_interval_s: 0.0,
            ..AaloConfig::default()
        }
    }

    /// C1 has sent 20 bytes, all of them from sender 0 (its flow 0 -> 2 is the one that ran);
    /// its flow 1 -> 3 has sent nothing. C2, later, has one flow 1 -> 3. Globally C1 is past
    /// the 10-byte threshold, so Aalo puts C2 first on sender 1; sender 1 alone has seen C1
    /// send nothing, keeps it in Q1 ahead of C2 (FIFO), and C2 waits.
    #[test]
    fn a_sender_that_saw_little_keeps_a_large_coflow_first() {
        let mut c1 = coflow(1, 0.0, 20.0, &[(0, 2, 0.0), (1, 3, 0.0)]);
        c1.flows[0].sent_bytes = 20.0;
        let c2 = coflow(2, 1.0, 0.0, &[(1, 3, 0.0)]);
        let cs = [c1, c2];
        let aalo = decide(&mut Aalo::new(config()), &cs);
        assert_eq!(aalo, vec![vec![1.0, 0.0], vec![1.0]]);
        let local = decide(&mut AaloUncoord::new(config()), &cs);
        assert_eq!(local, vec![vec![1.0, 1.0], vec![0.0]]);
    }

    /// Two coflows that arrive together, each with one flow from sender 0 (to 2) and one from
    /// sender 1 (to 3): with the order every sender shares, both senders serve the first
    /// coflow; with local ties each sender serves the coflow its own shuffle puts first, and
    /// for ids where the two shuffles disagree the senders serve different coflows (Theorem
    /// C.1.1: neither coflow then finishes early).
    #[test]
    fn local_ties_let_senders_disagree_on_coflows_that_arrive_together() {
        let first =
            |port: u64, a: u64, b: u64| splitmix((port << 40) ^ a) < splitmix((port << 40) ^ b);
        let (a, b) = (1..100u64)
            .flat_map(|a| (a + 1..100).map(move |b| (a, b)))
            .find(|&(a, b)| first(0, a, b) != first(1, a, b))
            .expect("two ids the senders order differently");
        let cs = [
            coflow(a, 0.0, 0.0, &[(0, 2, 0.0), (1, 3, 0.0)]),
            coflow(b, 0.0, 0.0, &[(0, 2, 0.0), (1, 3, 0.0)]),
        ];
        let shared = decide(&mut AaloUncoord::new(config()), &cs);
        assert_eq!(shared, vec![vec![1.0, 1.0], vec![0.0, 0.0]]);
        let local = decide(&mut AaloUncoord::new(config()).with_local_ties(true), &cs);
        let a0 = f64::from(u8::from(first(0, a, b)));
        let a1 = f64::from(u8::from(first(1, a, b)));
        assert_eq!(local, vec![vec![a0, a1], vec![1.0 - a0, 1.0 - a1]]);
        assert_ne!(a0, a1);
    }

    /// With one sender per coflow the local view is the global one: the same rates as Aalo with
    /// instantaneous coordination, whatever the bytes sent.
    #[test]
    fn single_sender_coflows_are_scheduled_as_aalo_does() {
        for (sent_a, sent_b) in [(0.0, 0.0), (15.0, 0.0), (0.0, 15.0), (150.0, 15.0)] {
            let mut a = coflow(1, 0.0, sent_a, &[(0, 2, 0.0), (0, 3, 0.0)]);
            a.flows[0].sent_bytes = sent_a;
            let mut b = coflow(2, 0.5, sent_b, &[(0, 2, 0.0), (0, 2, 0.0)]);
            b.flows[0].sent_bytes = sent_b / 2.0;
            b.flows[1].sent_bytes = sent_b / 2.0;
            let cs = [a, b];
            for inter in [InterQueue::Strict, InterQueue::Weighted] {
                let cfg = AaloConfig {
                    inter_queue: inter,
                    ..config()
                };
                let want = decide(&mut Aalo::new(cfg), &cs);
                let got = decide(&mut AaloUncoord::new(cfg), &cs);
                assert_eq!(got, want, "sent {sent_a} {sent_b} {inter:?}");
            }
        }
    }

    /// A sender remembers the bytes of its flows that ended. C1 sends from port 1 on two
    /// flows; by t = 20 the one to port 2 has ended (15 bytes) and the other has sent 5: port 1
    /// has seen 20 bytes, past the 10-byte threshold, so C2 (new, Q1) goes first on it. A
    /// sender counting only its unfinished flows would see 5 and keep C1 first.
    #[test]
    fn a_sender_remembers_the_bytes_of_its_flows_that_ended() {
        let fabric = Fabric::uniform(4, 1.0);
        let mut s = AaloUncoord::new(config());
        let first = [coflow(1, 0.0, 0.0, &[(1, 2, 0.0), (1, 3, 0.0)])];
        let mut rates = Rates::default();
        rates.reset(&first);
        let snap = Snapshot {
            now_s: 0.0,
            fabric: &fabric,
            coflows: &first,
        };
        s.allocate(&snap, &mut rates);
        assert_eq!(rates.per_coflow, vec![vec![0.5, 0.5]]);
        let mut c1 = coflow(1, 0.0, 20.0, &[(1, 3, 0.0)]);
        c1.flows[0].sent_bytes = 5.0;
        let later = [c1, coflow(2, 19.0, 0.0, &[(1, 3, 0.0)])];
        rates.reset(&later);
        let snap = Snapshot {
            now_s: 20.0,
            fabric: &fabric,
            coflows: &later,
        };
        s.allocate(&snap, &mut rates);
        assert_eq!(rates.per_coflow, vec![vec![0.0], vec![1.0]]);
        let seen: f64 = s.local[&1]
            .senders
            .iter()
            .map(|x| x.finished + x.sent)
            .sum();
        assert_eq!(seen, 20.0, "the senders' bytes add up to the coflow's");
    }

    /// Each (coflow, sender) view holds its sender's flows, not a copy of the whole coflow's:
    /// one 40 x 40 coflow is 1,600 flows in 40 views, not 40 x 1,600 (the views' capacity grew
    /// with the flows times the senders).
    #[test]
    fn the_views_hold_each_flow_once() {
        let n = 40u32;
        let flows: Vec<(u32, u32, f64)> = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, n + j, 0.0)))
            .collect();
        let cs = [coflow(1, 0.0, 0.0, &flows)];
        let fabric = Fabric::uniform(2 * n as usize, 1.0);
        let mut s = AaloUncoord::new(config());
        let mut rates = Rates::default();
        for now_s in [0.0, 1.0] {
            rates.reset(&cs);
            let snap = Snapshot {
                now_s,
                fabric: &fabric,
                coflows: &cs,
            };
            s.allocate(&snap, &mut rates);
        }
        assert_eq!(s.views.len(), n as usize);
        let held: usize = s.views.iter().map(|v| v.flows.capacity()).sum();
        assert!(
            held <= 2 * flows.len(),
            "{held} flow slots for {} flows",
            flows.len()
        );
    }
}

//! `saath`: Saath (spec B4), the reconstructed round: D-CLAS queues entered by a per-flow size
//! rule, least-contention-first (LCoF) inside a queue, all-or-none scheduling of each coflow's
//! flows, work conservation on the leftovers and bounded-wait starvation freedom. Every idea is
//! a switch, for ablations. Reads flow endpoints and bytes sent, never `remaining_bytes`.

use std::collections::HashMap;

use coflowkit_model::CoflowId;
use serde::{Deserialize, Serialize};

use super::dclas::{all_have_room, Filler, InterQueue, Queues, Shares, Ticks, WithinCoflow};
use crate::alloc::{Budget, TopUp};
use crate::machinery::Machinery;
use crate::state::CoflowState;
use crate::{Decision, FlowCompletion, Rates, Scheduler, Snapshot};

/// Which coflows a coflow's contention counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ContentionScope {
    /// Only coflows in the same queue (spec B4's reading: LCoF sorts within a queue).
    SameQueue,
    /// Every active coflow.
    AllActive,
}

/// How contention is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ContentionCount {
    /// Distinct other coflows sharing a send or receive port (spec B4).
    DistinctCoflows,
    /// Sum over the coflow's send and receive ports of the other coflows there.
    PerPortSum,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SaathConfig {
    /// Queue structure. Default K = 10, E = 10, Q1hi = 10 MB (Aalo's defaults, spec B6).
    pub queues: Queues,
    /// Schedule all of a coflow's flows or none (Idea 1). Default true.
    pub all_or_none: bool,
    /// Least-contention-first inside a queue (Idea 2); false = FIFO. Default true.
    pub lcof: bool,
    /// Queue by `n_C * max_f sent(f)` (Idea 3, spec B4) instead of Aalo's total bytes sent.
    /// Default true.
    pub per_flow_threshold: bool,
    /// Give leftover port capacity to the flows of coflows the all-or-none pass skipped, in the
    /// same order (spec B4). Default true.
    pub work_conservation: bool,
    /// Bounded wait T_starve in seconds: a coflow the priority pass has not fully scheduled for
    /// this long goes to the head of its queue (FIFO among starving coflows). `None` disables
    /// it. Default 5 s: far above a Q1 coflow's lifetime at 1 Gbps (10 MB takes 0.08 s per port)
    /// and about one 640 MB port-load, so it fires only when LCoF has passed a coflow over many
    /// times; shorter values turn LCoF into FIFO under load.
    pub starvation: Option<f64>,
    /// Contention scope. Default `SameQueue` (spec B6).
    pub contention: ContentionScope,
    /// Contention counting. Default `DistinctCoflows` (spec B6).
    pub contention_count: ContentionCount,
    /// Sharing across queues. Default `Strict` (CoflowSim, spec B6). `Weighted` splits ports
    /// like Aalo's weighted mode, runs all-or-none inside each queue's share, then offers the
    /// unused shares in global order (top-ups for scheduled coflows, all-or-none for the rest).
    pub inter_queue: InterQueue,
    /// Rates inside a coflow. Default `CoflowSim`: spec B2 prescribes CoflowSim's rule for Saath
    /// (and it splits a port equally among the coflow's flows there, which keeps them in sync).
    pub within_coflow: WithinCoflow,
    /// Coordination interval Δ for queue membership; membership is also recomputed on every
    /// coflow arrival or departure (B4's round). Default 0: event-driven in simulation (B6),
    /// i.e. demotion at the exact crossing instant.
    pub sync_interval_s: f64,
    /// What a single flow's end triggers between decisions (see `FlowCompletion`).
    pub on_flow_completion: FlowCompletion,
}

impl Default for SaathConfig {
    fn default() -> Self {
        SaathConfig {
            queues: Queues::default(),
            all_or_none: true,
            lcof: true,
            per_flow_threshold: true,
            work_conservation: true,
            starvation: Some(5.0),
            contention: ContentionScope::SameQueue,
            contention_count: ContentionCount::DistinctCoflows,
            inter_queue: InterQueue::Strict,
            within_coflow: WithinCoflow::CoflowSim,
            sync_interval_s: 0.0,
            on_flow_completion: FlowCompletion::Redistribute,
        }
    }
}

/// Contention of every coflow: how many others it blocks. `group[i]` is coflow i's queue;
/// with `ContentionScope::SameQueue` only coflows of the same group count. Only unfinished
/// flows count. `ports` is the fabric's port count.
pub fn contention(
    coflows: &[CoflowState],
    group: &[usize],
    scope: ContentionScope,
    count: ContentionCount,
    ports: usize,
) -> Vec<usize> {
    // (port-direction, coflow) pairs, one per coflow and port, grouped by port-direction.
    let mut mark = vec![usize::MAX; 2 * ports];
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for (i, c) in coflows.iter().enumerate() {
        for f in &c.flows {
            for r in [f.src as usize, ports + f.dst as usize] {
                if mark[r] != i {
                    mark[r] = i;
                    pairs.push((r as u32, i as u32));
                }
            }
        }
    }
    pairs.sort_unstable();
    let mut start = vec![0usize; 2 * ports + 1];
    for &(r, _) in &pairs {
        start[r as usize + 1] += 1;
    }
    for r in 0..2 * ports {
        start[r + 1] += start[r];
    }
    let same = |i: usize, j: usize| scope == ContentionScope::AllActive || group[i] == group[j];
    let mut seen = vec![usize::MAX; coflows.len()];
    mark.fill(usize::MAX);
    let mut out = vec![0; coflows.len()];
    for (i, c) in coflows.iter().enumerate() {
        for f in &c.flows {
            for r in [f.src as usize, ports + f.dst as usize] {
                if mark[r] == i {
                    continue;
                }
                mark[r] = i;
                for &(_, j) in &pairs[start[r]..start[r + 1]] {
                    let j = j as usize;
                    if j == i || !same(i, j) {
                        continue;
                    }
                    match count {
                        ContentionCount::PerPortSum => out[i] += 1,
                        ContentionCount::DistinctCoflows => {
                            if seen[j] != i {
                                seen[j] = i;
                                out[i] += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

#[derive(Debug, Clone, Copy)]
struct Memo {
    queue: usize,
    /// Since when the priority pass has not fully scheduled it (None: scheduled last round).
    unserved_since: Option<f64>,
    seen: u64,
}

#[derive(Debug, Default)]
pub struct Saath {
    pub config: SaathConfig,
    memo: HashMap<CoflowId, Memo>,
    stamp: u64,
    last_ids: Vec<CoflowId>,
    queue_of: Vec<usize>,
    starving: Vec<bool>,
    order: Vec<usize>,
    scheduled: Vec<bool>,
    budget: Budget,
    shares: Shares,
    filler: Filler,
    topup: TopUp,
}

impl Saath {
    pub fn new(config: SaathConfig) -> Self {
        Saath {
            config,
            ..Default::default()
        }
    }

    /// The size D-CLAS queues a coflow by.
    fn size(&self, c: &CoflowState) -> f64 {
        if self.config.per_flow_threshold {
            c.total_flows as f64 * c.max_flow_sent_bytes
        } else {
            c.sent_bytes
        }
    }

    /// When the coflow's queue size reaches `thr` at the rates given.
    fn crossing(&self, c: &CoflowState, rates: &[f64], thr: f64, now: f64) -> f64 {
        if self.config.per_flow_threshold {
            let per_flow = thr / c.total_flows.max(1) as f64;
            c.flows
                .iter()
                .zip(rates)
                .filter(|(_, &r)| r > 0.0)
                .map(|(f, &r)| now + (per_flow - f.sent_bytes) / r)
                .fold(f64::INFINITY, f64::min)
        } else {
            let speed: f64 = rates.iter().sum();
            if speed > 0.0 {
                now + (thr - c.sent_bytes) / speed
            } else {
                f64::INFINITY
            }
        }
    }

    /// Queues (at ticks and on arrivals/departures), starvation flags, then the priority order.
    fn prepare(&mut self, snap: &Snapshot, ticks: &Ticks) {
        let now = snap.now_s;
        let changed = self.last_ids.len() != snap.coflows.len()
            || self
                .last_ids
                .iter()
                .zip(snap.coflows)
                .any(|(&a, c)| a != c.id);
        if changed {
            self.last_ids.clear();
            self.last_ids.extend(snap.coflows.iter().map(|c| c.id));
        }
        let recompute = changed || ticks.is_tick(now);
        self.stamp += 1;
        self.queue_of.clear();
        self.starving.clear();
        for c in snap.coflows {
            let size = self.size(c);
            let m = self.memo.entry(c.id).or_insert(Memo {
                queue: 0,
                unserved_since: None,
                seen: 0,
            });
            if recompute {
                m.queue = m.queue.max(self.config.queues.index_reached(size));
            }
            m.seen = self.stamp;
            self.queue_of.push(m.queue);
            let starving = match (self.config.starvation, m.unserved_since) {
                (Some(t), Some(since)) => now >= since + t - 1e-9 * (since + t).abs().max(1.0),
                _ => false,
            };
            self.starving.push(starving);
        }
        let stamp = self.stamp;
        self.memo.retain(|_, m| m.seen == stamp);

        let cont = if self.config.lcof {
            contention(
                snap.coflows,
                &self.queue_of,
                self.config.contention,
                self.config.contention_count,
                snap.fabric.ports(),
            )
        } else {
            vec![0; snap.coflows.len()]
        };
        self.order.clear();
        self.order.extend(0..snap.coflows.len());
        let (q, st) = (&self.queue_of, &self.starving);
        // Queue, starving first (FIFO among them), contention, arrival (snapshot order).
        self.order
            .sort_by_key(|&i| (q[i], !st[i], if st[i] { 0 } else { cont[i] }, i));
    }
}

impl Machinery for Saath {
    fn topup(&mut self) -> Option<&mut TopUp> {
        Some(&mut self.topup)
    }
}

impl Scheduler for Saath {
    fn name(&self) -> &str {
        "saath"
    }

    fn clairvoyant(&self) -> bool {
        false
    }

    fn on_flow_completion(&self) -> FlowCompletion {
        self.config.on_flow_completion
    }

    fn allocate(&mut self, snap: &Snapshot, rates: &mut Rates) -> Decision {
        let ticks = Ticks {
            interval_s: self.config.sync_interval_s,
        };
        let now = snap.now_s;
        self.prepare(snap, &ticks);
        self.budget.reset(snap.fabric);
        let cfg = self.config;
        let rule = cfg.within_coflow;
        self.scheduled.clear();
        self.scheduled.resize(snap.coflows.len(), false);

        // Priority pass: all-or-none in order, on each queue's share when weighted.
        if cfg.inter_queue == InterQueue::Weighted {
            let mut by_queue = self.order.clone();
            let q = &self.queue_of;
            by_queue.sort_by_key(|&i| q[i]);
            self.shares
                .compute(&cfg.queues, &self.budget, snap.coflows, &by_queue, q);
            let mut slot = 0;
            for &i in &self.order {
                while self.shares.present[slot] != self.queue_of[i] {
                    slot += 1;
                }
                let flows = &snap.coflows[i].flows;
                let share = &mut self.shares.budgets[slot];
                if !cfg.all_or_none || all_have_room(flows, share) {
                    self.filler
                        .fill(rule, flows, share, &mut rates.per_coflow[i]);
                    self.filler.take_added(flows, &mut self.budget);
                    self.scheduled[i] = self.filler.added().iter().any(|&r| r > 0.0);
                }
            }
        }
        let topup = cfg.inter_queue == InterQueue::Weighted;
        for &i in &self.order {
            let flows = &snap.coflows[i].flows;
            if self.scheduled[i] {
                if topup {
                    self.filler
                        .fill(rule, flows, &mut self.budget, &mut rates.per_coflow[i]);
                }
            } else if !cfg.all_or_none || all_have_room(flows, &self.budget) {
                self.filler
                    .fill(rule, flows, &mut self.budget, &mut rates.per_coflow[i]);
                self.scheduled[i] = self.filler.added().iter().any(|&r| r > 0.0);
            }
        }
        if cfg.work_conservation {
            for &i in &self.order {
                if !self.scheduled[i] {
                    let flows = &snap.coflows[i].flows;
                    self.filler
                        .fill(rule, flows, &mut self.budget, &mut rates.per_coflow[i]);
                }
            }
            // The CoflowSim rule splits a port by flow counts and can strand a remainder where
            // the other end is tighter; hand what is left to any flow that can use it, in order.
            for &i in &self.order {
                crate::alloc::backfill(
                    crate::alloc::Backfill::Greedy,
                    &snap.coflows[i].flows,
                    &mut self.budget,
                    &mut rates.per_coflow[i],
                );
            }
        }

        if cfg.on_flow_completion == FlowCompletion::Redistribute {
            let order = self.order.iter().copied();
            self.topup
                .index(snap.fabric.ports(), snap.coflows, rates, order);
        }

        // Starvation clocks, then the next wake-up: a queue crossing or a coflow starving.
        let mut wake = Decision::none();
        for (i, c) in snap.coflows.iter().enumerate() {
            let m = self.memo.get_mut(&c.id).expect("memo of an active coflow");
            if self.scheduled[i] {
                m.unserved_since = None;
            } else {
                let since = *m.unserved_since.get_or_insert(now);
                if let (Some(t), false) = (cfg.starvation, self.starving[i]) {
                    wake = wake.min(Decision::at(since + t));
                }
            }
            let q = self.queue_of[i];
            let size = self.size(c);
            if cfg.queues.index_reached(size) > q {
                wake = wake.min(Decision::at(ticks.after(now)));
                continue;
            }
            let thr = cfg.queues.next_threshold(q);
            if thr.is_finite() {
                let t_c = self.crossing(c, &rates.per_coflow[i], thr, now);
                if t_c.is_finite() {
                    wake = wake.min(Decision::at(ticks.wake_for(now, t_c)));
                }
            }
        }
        wake
    }
}

//! `saath`: Saath (spec B4), the reconstructed round: D-CLAS queues entered by a per-flow size
//! rule, least-contention-first (LCoF) inside a queue, all-or-none scheduling of each coflow's
//! flows, work conservation on the leftovers and bounded-wait starvation freedom. Every idea is
//! a switch, for ablations. Reads flow endpoints and bytes sent, never `remaining_bytes`.

use std::collections::HashMap;

use coflowkit_model::CoflowId;
use serde::{Deserialize, Serialize};

use super::dclas::{
    all_have_room, split_index, Filler, InterQueue, Queues, Shares, Ticks, WithinCoflow,
};
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
    /// Count, at every decision, whether LCoF and all-or-none change the rates (each switched
    /// off in turn on the same snapshot; [`Saath::stats`]). A diagnostic: it triples the cost
    /// of a decision and changes no rate. Default false.
    pub diagnose: bool,
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
            diagnose: false,
        }
    }
}

/// What Saath's components did, counted over the decisions of a run (with
/// `SaathConfig::diagnose`): a component "changes a decision" when the same snapshot decided
/// without it (LCoF: FIFO inside each queue; all-or-none: every coflow served as far as its
/// ports allow) gives some flow another rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaathStats {
    /// Full decisions taken (redistributions between them are not counted).
    pub decisions: u64,
    /// Decisions whose LCoF order differs from FIFO inside the queues.
    pub lcof_reordered: u64,
    /// Decisions whose rates FIFO inside the queues would change.
    pub lcof_changed_rates: u64,
    /// Decisions where all-or-none held back a coflow some of whose flows had room.
    pub aon_withheld: u64,
    /// Decisions whose rates serving every coflow partially would change.
    pub aon_changed_rates: u64,
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
    match count {
        ContentionCount::DistinctCoflows => distinct_contention(coflows, group, scope, ports),
        ContentionCount::PerPortSum => listed_contention(coflows, group, scope, count, ports),
    }
}

/// [`contention`] by the lists of the coflows at each port (either count; the reference the
/// bit rows of [`distinct_contention`] are tested against).
fn listed_contention(
    coflows: &[CoflowState],
    group: &[usize],
    scope: ContentionScope,
    count: ContentionCount,
    ports: usize,
) -> Vec<usize> {
    // The coflows at each port-direction, in coflow order: a count, then a counting sort
    // (a comparison sort of the (port, coflow) pairs was a tenth of Saath's decisions).
    let mut mark = vec![usize::MAX; 2 * ports];
    let mut start = vec![0usize; 2 * ports + 1];
    for (i, c) in coflows.iter().enumerate() {
        for f in &c.flows {
            for r in [f.src as usize, ports + f.dst as usize] {
                if mark[r] != i {
                    mark[r] = i;
                    start[r + 1] += 1;
                }
            }
        }
    }
    for r in 0..2 * ports {
        start[r + 1] += start[r];
    }
    let mut fill = start.clone();
    let mut pairs = vec![(0u32, 0u32); start[2 * ports]];
    mark.fill(usize::MAX);
    for (i, c) in coflows.iter().enumerate() {
        for f in &c.flows {
            for r in [f.src as usize, ports + f.dst as usize] {
                if mark[r] != i {
                    mark[r] = i;
                    pairs[fill[r]] = (r as u32, i as u32);
                    fill[r] += 1;
                }
            }
        }
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

/// [`contention`] counting distinct coflows, with a bit per coflow: each port-direction's
/// coflows as a bit row, a coflow's rivals the union of its ports' rows within its group.
/// Words of 64 coflows where the per-port lists compared coflow by coflow.
fn distinct_contention(
    coflows: &[CoflowState],
    group: &[usize],
    scope: ContentionScope,
    ports: usize,
) -> Vec<usize> {
    let words = coflows.len().div_ceil(64);
    let mut rows = vec![0u64; 2 * ports * words];
    for (i, c) in coflows.iter().enumerate() {
        for f in &c.flows {
            for r in [f.src as usize, ports + f.dst as usize] {
                rows[r * words + i / 64] |= 1 << (i % 64);
            }
        }
    }
    // The coflows of each group (all of them under `AllActive`).
    let groups = match scope {
        ContentionScope::AllActive => 1,
        ContentionScope::SameQueue => group.iter().max().map_or(0, |&g| g + 1),
    };
    let group_of = |i: usize| match scope {
        ContentionScope::AllActive => 0,
        ContentionScope::SameQueue => group[i],
    };
    let mut members = vec![0u64; groups * words];
    for i in 0..coflows.len() {
        members[group_of(i) * words + i / 64] |= 1 << (i % 64);
    }
    let mut mark = vec![usize::MAX; 2 * ports];
    let mut union = vec![0u64; words];
    let mut out = vec![0; coflows.len()];
    for (i, c) in coflows.iter().enumerate() {
        union.fill(0);
        for f in &c.flows {
            for r in [f.src as usize, ports + f.dst as usize] {
                if mark[r] != i {
                    mark[r] = i;
                    for (u, &w) in union.iter_mut().zip(&rows[r * words..(r + 1) * words]) {
                        *u |= w;
                    }
                }
            }
        }
        let mine = &members[group_of(i) * words..(group_of(i) + 1) * words];
        let n: u32 = union
            .iter()
            .zip(mine)
            .map(|(u, m)| (u & m).count_ones())
            .sum();
        // The coflow itself is in its ports' rows when it has a flow.
        out[i] = n.saturating_sub(u32::from(!c.flows.is_empty())) as usize;
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
    /// Counts of what the components changed (with `config.diagnose`).
    pub stats: SaathStats,
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

    /// Decide `snap` again without LCoF and without all-or-none, and count where that gives
    /// other rates than `rates` (the decision just taken, from a full budget).
    fn diagnose(&mut self, snap: &Snapshot, rates: &Rates) {
        self.stats.decisions += 1;
        let cfg = self.config;
        let (q, st) = (&self.queue_of, &self.starving);
        let mut fifo: Vec<usize> = (0..snap.coflows.len()).collect();
        fifo.sort_by_key(|&i| (q[i], !st[i], i));
        let full = Budget::full(snap.fabric);
        // Held back by the priority pass, yet some flow had room: work conservation gave it
        // a rate afterwards.
        let withheld = cfg.all_or_none
            && (0..snap.coflows.len())
                .any(|i| !self.scheduled[i] && rates.per_coflow[i].iter().any(|&r| r > 0.0));
        let again = |cfg: &SaathConfig, order: &[usize]| {
            let mut r = Rates::default();
            r.reset(snap.coflows);
            let mut budget = full.clone();
            let mut scheduled = vec![false; snap.coflows.len()];
            fill(
                cfg,
                snap,
                order,
                &self.queue_of,
                &mut scheduled,
                &mut budget,
                &mut Shares::default(),
                &mut Filler::default(),
                &mut r,
            );
            r
        };
        let differ = |a: &Rates, b: &Rates| {
            a.per_coflow
                .iter()
                .flatten()
                .zip(b.per_coflow.iter().flatten())
                .any(|(x, y)| (x - y).abs() > 1e-9 * x.abs().max(y.abs()).max(f64::MIN_POSITIVE))
        };
        if cfg.lcof && fifo != self.order {
            self.stats.lcof_reordered += 1;
            if differ(&again(&cfg, &fifo), rates) {
                self.stats.lcof_changed_rates += 1;
            }
        }
        if cfg.all_or_none {
            if withheld {
                self.stats.aon_withheld += 1;
            }
            let partial = SaathConfig {
                all_or_none: false,
                ..cfg
            };
            let order = self.order.clone();
            if differ(&again(&partial, &order), rates) {
                self.stats.aon_changed_rates += 1;
            }
        }
    }
}

/// The rates: the priority pass (all-or-none in order, on each queue's share when weighted),
/// then work conservation. `scheduled[i]` is set for the coflows the priority pass served.
#[allow(clippy::too_many_arguments)]
fn fill(
    cfg: &SaathConfig,
    snap: &Snapshot,
    order: &[usize],
    queue_of: &[usize],
    scheduled: &mut [bool],
    budget: &mut Budget,
    shares: &mut Shares,
    filler: &mut Filler,
    rates: &mut Rates,
) {
    let rule = cfg.within_coflow;
    if cfg.inter_queue == InterQueue::Weighted {
        let mut by_queue = order.to_vec();
        by_queue.sort_by_key(|&i| queue_of[i]);
        shares.compute(&cfg.queues, budget, snap.coflows, &by_queue, queue_of);
        let mut slot = 0;
        for &i in order {
            while shares.present[slot] != queue_of[i] {
                slot += 1;
            }
            let flows = &snap.coflows[i].flows;
            let share = &mut shares.budgets[slot];
            if !cfg.all_or_none || all_have_room(flows, share) {
                filler.fill(rule, flows, share, &mut rates.per_coflow[i]);
                filler.take_added(flows, budget);
                scheduled[i] = filler.added().iter().any(|&r| r > 0.0);
            }
        }
    }
    let topup = cfg.inter_queue == InterQueue::Weighted;
    for &i in order {
        let flows = &snap.coflows[i].flows;
        if scheduled[i] {
            if topup {
                filler.fill(rule, flows, budget, &mut rates.per_coflow[i]);
            }
        } else if !cfg.all_or_none || all_have_room(flows, budget) {
            filler.fill(rule, flows, budget, &mut rates.per_coflow[i]);
            scheduled[i] = filler.added().iter().any(|&r| r > 0.0);
        }
    }
    if cfg.work_conservation {
        for &i in order {
            if !scheduled[i] {
                let flows = &snap.coflows[i].flows;
                filler.fill(rule, flows, budget, &mut rates.per_coflow[i]);
            }
        }
        // The CoflowSim rule splits a port by flow counts and can strand a remainder where
        // the other end is tighter; hand what is left to any flow that can use it, in order.
        for &i in order {
            crate::alloc::backfill(
                crate::alloc::Backfill::Greedy,
                &snap.coflows[i].flows,
                budget,
                &mut rates.per_coflow[i],
            );
        }
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
        self.scheduled.clear();
        self.scheduled.resize(snap.coflows.len(), false);
        let Saath {
            config,
            queue_of,
            order,
            scheduled,
            budget,
            shares,
            filler,
            topup,
            ..
        } = self;
        let cfg = *config;
        let mut decide = |rates: &mut Rates| {
            fill(
                &cfg, snap, order, queue_of, scheduled, budget, shares, filler, rates,
            )
        };
        if cfg.on_flow_completion == FlowCompletion::Redistribute {
            let ports = snap.fabric.ports();
            split_index(
                topup,
                ports,
                snap.coflows,
                order.iter().copied(),
                rates,
                decide,
            );
        } else {
            decide(rates);
        }
        if cfg.diagnose {
            self.diagnose(snap, rates);
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn bit_rows_count_the_same_rivals_as_the_port_lists(
            shape in prop::collection::vec(prop::collection::vec((0u32..7, 0u32..7), 0..6), 0..140),
            queues in prop::collection::vec(0usize..3, 140),
            all in any::<bool>(),
        ) {
            let coflows: Vec<CoflowState> = shape
                .iter()
                .map(|f| {
                    let flows: Vec<(u32, u32, f64)> = f.iter().map(|&(s, d)| (s, d, 1.0)).collect();
                    CoflowState::of_flows(&flows)
                })
                .collect();
            let group = &queues[..coflows.len()];
            let scope = if all { ContentionScope::AllActive } else { ContentionScope::SameQueue };
            let bits = distinct_contention(&coflows, group, scope, 7);
            let lists = listed_contention(&coflows, group, scope, ContentionCount::DistinctCoflows, 7);
            prop_assert_eq!(bits, lists);
        }
    }
}

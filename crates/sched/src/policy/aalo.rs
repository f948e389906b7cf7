//! `aalo`: non-clairvoyant D-CLAS (thesis Ch. 6). A coflow's priority falls with the bytes all
//! its flows have sent; K exponentially spaced queues, FIFO inside a queue, weighted (or strict)
//! sharing across queues, per-flow max-min inside a coflow. Queue membership only ever moves
//! down, and changes only at coordination ticks every Δ (new coflows enter Q1 at once: a local
//! decision). Reads `sent_bytes`, never `remaining_bytes`. Coflows of one DAG (`dag`) share
//! one queue by their total bytes sent, FIFO across DAGs, a child after its parents (§6.6).

use std::collections::HashMap;

use coflowkit_model::CoflowId;
use serde::{Deserialize, Serialize};

use super::dclas::{Filler, InterQueue, Queues, Shares, Ticks, WithinCoflow};
use crate::alloc::{Budget, TopUp};
use crate::machinery::Machinery;
use crate::{CoflowState, Decision, FlowCompletion, Rates, Scheduler, Snapshot};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AaloConfig {
    /// Queue structure. Default K = 10, E = 10, Q1hi = 10 MB (thesis defaults).
    pub queues: Queues,
    /// Sharing across queues. Default `Weighted` with weights K-i+1 (the thesis; ambiguity 7);
    /// `Strict` is the public CoflowSim DARK.
    pub inter_queue: InterQueue,
    /// Sharing inside a coflow. Default `MaxMin` (the thesis: "per-flow max-min");
    /// `CoflowSim` is CoflowSim's per-port equal split (spec B2).
    pub within_coflow: WithinCoflow,
    /// Coordination interval Δ in seconds: queue membership is recomputed only at `t = kΔ`.
    /// Default 0.010 (the thesis' Δ = 10 ms); 0 = instantaneous global coordination.
    pub sync_interval_s: f64,
    /// What a single flow's end triggers between decisions (see `FlowCompletion`).
    pub on_flow_completion: FlowCompletion,
}

impl Default for AaloConfig {
    fn default() -> Self {
        AaloConfig {
            queues: Queues::default(),
            inter_queue: InterQueue::Weighted,
            within_coflow: WithinCoflow::MaxMin,
            sync_interval_s: 0.010,
            on_flow_completion: FlowCompletion::Redistribute,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Memo {
    queue: usize,
    seen: u64,
}

/// What a queue holds: a DAG's coflows are one entity (§6.6), any other coflow is its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Entity {
    Coflow(CoflowId),
    Dag(u64),
}

impl Entity {
    fn of(c: &CoflowState) -> Entity {
        c.dag
            .map_or(Entity::Coflow(c.id), |d| Entity::Dag(d.external))
    }
}

/// FIFO inside a queue: by the DAG's start (its external id breaks ties), then the DAG's own
/// order (a child after its parents: dependent coflows yield during contention). Without DAGs
/// this is the snapshot's arrival order.
fn fifo(a: &CoflowState, b: &CoflowState) -> std::cmp::Ordering {
    let start = |c: &CoflowState| c.dag.map_or(c.arrival_s, |d| d.dag_arrival_s);
    start(a)
        .total_cmp(&start(b))
        .then(a.dag.map(|d| d.external).cmp(&b.dag.map(|d| d.external)))
        .then(a.dag.map(|d| d.internal).cmp(&b.dag.map(|d| d.internal)))
}

#[derive(Debug, Default)]
pub struct Aalo {
    pub config: AaloConfig,
    /// Queue of every active entity, as of the last coordination tick (or its entry queue if
    /// newer).
    memo: HashMap<Entity, Memo>,
    stamp: u64,
    /// Per decision: each entity's slot, bytes sent (Aalo's "current size"), queue and speed.
    slot_of: HashMap<Entity, usize>,
    entities: Vec<Entity>,
    entity_bytes: Vec<f64>,
    entity_finished: Vec<f64>,
    entity_queue: Vec<usize>,
    entity_speed: Vec<f64>,
    entity_of: Vec<usize>,
    queue_of: Vec<usize>,
    by_queue: Vec<usize>,
    budget: Budget,
    shares: Shares,
    filler: Filler,
    topup: TopUp,
}

impl Aalo {
    pub fn new(config: AaloConfig) -> Self {
        Aalo {
            config,
            ..Default::default()
        }
    }

    /// Queue of each active coflow, updating membership at ticks (monotone: never promoted).
    /// The queue belongs to the coflow's entity: a DAG's size is the bytes all its coflows
    /// sent, finished ones included, so a child inherits its ancestors' attained service.
    fn update_queues(&mut self, snap: &Snapshot, tick: bool) {
        self.stamp += 1;
        self.slot_of.clear();
        self.entities.clear();
        self.entity_bytes.clear();
        self.entity_finished.clear();
        self.entity_of.clear();
        for c in snap.coflows {
            let e = Entity::of(c);
            let n = self.entities.len();
            let slot = *self.slot_of.entry(e).or_insert(n);
            if slot == n {
                self.entities.push(e);
                let finished = c.dag.map_or(0.0, |d| d.finished_bytes);
                self.entity_finished.push(finished);
                self.entity_bytes.push(finished);
            }
            self.entity_bytes[slot] += c.sent_bytes;
            self.entity_of.push(slot);
        }
        self.entity_queue.clear();
        let queues = self.config.queues;
        for ((e, &bytes), &finished) in self
            .entities
            .iter()
            .zip(&self.entity_bytes)
            .zip(&self.entity_finished)
        {
            // A new coflow enters Q1 at once (a local decision); a new coflow of a DAG whose
            // other coflows are gone enters the queue of the DAG's finished bytes, which the
            // coordinator knows.
            let m = self.memo.entry(*e).or_insert_with(|| Memo {
                queue: queues.index_reached(finished),
                seen: 0,
            });
            if tick {
                m.queue = m.queue.max(queues.index_reached(bytes));
            }
            m.seen = self.stamp;
            self.entity_queue.push(m.queue);
        }
        let stamp = self.stamp;
        self.memo.retain(|_, m| m.seen == stamp);
        self.queue_of.clear();
        self.queue_of
            .extend(self.entity_of.iter().map(|&s| self.entity_queue[s]));
        self.by_queue.clear();
        self.by_queue.extend(0..snap.coflows.len());
        let q = &self.queue_of;
        let cs = snap.coflows;
        // Stable: equal keys keep the snapshot's arrival order.
        self.by_queue
            .sort_by(|&a, &b| q[a].cmp(&q[b]).then_with(|| fifo(&cs[a], &cs[b])));
    }
}

impl Machinery for Aalo {
    fn topup(&mut self) -> Option<&mut TopUp> {
        Some(&mut self.topup)
    }
}

impl Scheduler for Aalo {
    fn name(&self) -> &str {
        "aalo"
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
        self.update_queues(snap, ticks.is_tick(now));
        self.budget.reset(snap.fabric);
        let rule = self.config.within_coflow;

        if self.config.inter_queue == InterQueue::Weighted {
            self.shares.compute(
                &self.config.queues,
                &self.budget,
                snap.coflows,
                &self.by_queue,
                &self.queue_of,
            );
            let mut slot = 0;
            for &i in &self.by_queue {
                while self.shares.present[slot] != self.queue_of[i] {
                    slot += 1;
                }
                let flows = &snap.coflows[i].flows;
                let share = &mut self.shares.budgets[slot];
                self.filler
                    .fill(rule, flows, share, &mut rates.per_coflow[i]);
                self.filler.take_added(flows, &mut self.budget);
            }
        }
        // Strict priority; under Weighted, the shares left unused, in the same order.
        for &i in &self.by_queue {
            let flows = &snap.coflows[i].flows;
            self.filler
                .fill(rule, flows, &mut self.budget, &mut rates.per_coflow[i]);
        }

        if self.config.on_flow_completion == FlowCompletion::Redistribute {
            let order = self.by_queue.iter().copied();
            self.topup
                .index(snap.fabric.ports(), snap.coflows, rates, order);
        }

        // Wake at the tick where the next entity's queue change takes effect.
        let queues = &self.config.queues;
        self.entity_speed.clear();
        self.entity_speed.resize(self.entities.len(), 0.0);
        for (i, r) in rates.per_coflow.iter().enumerate() {
            self.entity_speed[self.entity_of[i]] += r.iter().sum::<f64>();
        }
        let mut wake = Decision::none();
        for ((&q, &bytes), &speed) in self
            .entity_queue
            .iter()
            .zip(&self.entity_bytes)
            .zip(&self.entity_speed)
        {
            if queues.index_reached(bytes) > q {
                wake = wake.min(Decision::at(ticks.after(now))); // crossed since the last tick
                continue;
            }
            let thr = queues.next_threshold(q);
            if thr.is_finite() && speed > 0.0 {
                let t_c = now + (thr - bytes) / speed;
                wake = wake.min(Decision::at(ticks.wake_for(now, t_c)));
            }
        }
        wake
    }
}

//! `aalo`: non-clairvoyant D-CLAS (thesis Ch. 6). A coflow's priority falls with the bytes all
//! its flows have sent; K exponentially spaced queues, FIFO inside a queue, weighted (or strict)
//! sharing across queues, per-flow max-min inside a coflow. Queue membership only ever moves
//! down, and changes only at coordination ticks every Δ (new coflows enter Q1 at once: a local
//! decision). Reads `sent_bytes`, never `remaining_bytes`.

use std::collections::HashMap;

use coflowkit_model::CoflowId;
use serde::{Deserialize, Serialize};

use super::dclas::{Filler, InterQueue, Queues, Shares, Ticks, WithinCoflow};
use crate::alloc::{Budget, TopUp};
use crate::{Decision, FlowCompletion, Rates, Scheduler, Snapshot};

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

#[derive(Debug, Default)]
pub struct Aalo {
    pub config: AaloConfig,
    /// Queue of every active coflow, as of the last coordination tick (or Q1 if newer).
    memo: HashMap<CoflowId, Memo>,
    stamp: u64,
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
    fn update_queues(&mut self, snap: &Snapshot, tick: bool) {
        self.stamp += 1;
        self.queue_of.clear();
        for c in snap.coflows {
            let m = self.memo.entry(c.id).or_insert(Memo { queue: 0, seen: 0 });
            if tick {
                m.queue = m.queue.max(self.config.queues.index_reached(c.sent_bytes));
            }
            m.seen = self.stamp;
            self.queue_of.push(m.queue);
        }
        let stamp = self.stamp;
        self.memo.retain(|_, m| m.seen == stamp);
        self.by_queue.clear();
        self.by_queue.extend(0..snap.coflows.len());
        let q = &self.queue_of;
        self.by_queue.sort_by_key(|&i| q[i]); // stable: FIFO inside a queue
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

    fn topup(&mut self) -> Option<&mut TopUp> {
        Some(&mut self.topup)
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

        // Wake at the tick where the next queue change takes effect.
        let queues = &self.config.queues;
        let mut wake = Decision::none();
        for (i, c) in snap.coflows.iter().enumerate() {
            let q = self.queue_of[i];
            if queues.index_reached(c.sent_bytes) > q {
                wake = wake.min(Decision::at(ticks.after(now))); // crossed since the last tick
                continue;
            }
            let thr = queues.next_threshold(q);
            let speed: f64 = rates.per_coflow[i].iter().sum();
            if thr.is_finite() && speed > 0.0 {
                let t_c = now + (thr - c.sent_bytes) / speed;
                wake = wake.min(Decision::at(ticks.wake_for(now, t_c)));
            }
        }
        wake
    }
}

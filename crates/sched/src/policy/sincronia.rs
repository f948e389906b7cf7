//! `sincronia`: Sincronia (Agarwal et al., SIGCOMM 2018). Order coflows with
//! Bottleneck-Select-Scale-Iterate (BSSI) over the 2P port-directions, then give rates greedily
//! in that order (each flow takes all its two ports have left), which is work conserving and
//! order-preserving. Clairvoyant: reads `remaining_bytes`. The order is recomputed every call.

use crate::alloc::{backfill, Backfill, Budget, Freed, TopUp};
use crate::machinery::Machinery;
use crate::{Decision, FlowCompletion, Rates, Scheduler, Snapshot};

#[derive(Debug, Default)]
pub struct Sincronia {
    /// `load[j * res + r]`: seconds of coflow j's remaining bytes on port-direction r at full
    /// capacity (uplinks are `0..P`, downlinks `P..2P`).
    load: Vec<f64>,
    /// Total load of the still unordered coflows on each port-direction.
    total: Vec<f64>,
    weight: Vec<f64>,
    bytes: Vec<f64>,
    unordered: Vec<usize>,
    order: Vec<usize>,
    budget: Budget,
    pub on_flow_completion: FlowCompletion,
    topup: TopUp,
    /// The last decision rated one coflow whose flows all go to one downlink (an incast).
    incast: bool,
}

impl Sincronia {
    pub fn new(on_flow_completion: FlowCompletion) -> Self {
        Sincronia {
            on_flow_completion,
            ..Default::default()
        }
    }

    /// BSSI: fill the order from the back. At each step pick the port-direction b with the most
    /// unordered load; among the unordered coflows using b, the one with the smallest
    /// `weight / load_at_b` goes last; every other coflow j at b has its weight reduced by
    /// `w_last * load_jb / load_last,b`. Loads are in seconds (bytes / capacity) so that ports
    /// of different speeds compare; on a uniform fabric this is the paper's bytes.
    /// Ties: the first port-direction; among coflows, the larger total remaining bytes goes
    /// last (SRPT-like), then the later arrival.
    pub fn bssi(&mut self, snap: &Snapshot) -> &[usize] {
        let ports = snap.fabric.ports();
        let res = 2 * ports;
        let n = snap.coflows.len();
        self.load.clear();
        self.load.resize(n * res, 0.0);
        self.total.clear();
        self.total.resize(res, 0.0);
        self.weight.clear();
        self.bytes.clear();
        let (up, down) = (&snap.fabric.up_bytes_per_s, &snap.fabric.down_bytes_per_s);
        for (j, c) in snap.coflows.iter().enumerate() {
            self.weight.push(c.weight);
            self.bytes.push(c.remaining_bytes());
            let row = &mut self.load[j * res..(j + 1) * res];
            for f in &c.flows {
                let (s, d) = (f.src as usize, f.dst as usize);
                let (ts, td) = (f.remaining_bytes / up[s], f.remaining_bytes / down[d]);
                row[s] += ts;
                row[ports + d] += td;
                self.total[s] += ts;
                self.total[ports + d] += td;
            }
        }
        self.unordered.clear();
        self.unordered.extend(0..n);
        self.order.clear();
        self.order.resize(n, 0);
        for k in (0..n).rev() {
            let b = (0..res).fold(0, |best, r| {
                if self.total[r] > self.total[best] {
                    r
                } else {
                    best
                }
            });
            // The coflow to put last: smallest weight per load at b.
            let mut last: Option<usize> = None;
            for (pos, &j) in self.unordered.iter().enumerate() {
                let d = self.load[j * res + b];
                if d <= 0.0 {
                    continue;
                }
                let better = match last {
                    None => true,
                    Some(lp) => {
                        let l = self.unordered[lp];
                        let (rj, rl) =
                            (self.weight[j] / d, self.weight[l] / self.load[l * res + b]);
                        rj < rl || (rj == rl && self.bytes[j] >= self.bytes[l])
                    }
                };
                if better {
                    last = Some(pos);
                }
            }
            // No load anywhere (only empty flows left): keep arrival order.
            let pos = last.unwrap_or(self.unordered.len() - 1);
            let l = self.unordered.remove(pos);
            self.order[k] = l;
            let dl = self.load[l * res + b];
            if dl > 0.0 {
                let scale = self.weight[l] / dl;
                for &j in &self.unordered {
                    let d = self.load[j * res + b];
                    if d > 0.0 {
                        self.weight[j] = (self.weight[j] - scale * d).max(0.0);
                    }
                }
            }
            for r in 0..res {
                self.total[r] = (self.total[r] - self.load[l * res + r]).max(0.0);
            }
        }
        &self.order
    }
}

impl Machinery for Sincronia {
    fn topup(&mut self) -> Option<&mut TopUp> {
        Some(&mut self.topup)
    }

    /// Nothing runs, and the last decision had one coflow, all of whose flows go to one
    /// downlink D: a decision now would order that one coflow alone and hand its flows, in
    /// their order, all their two ports have left, from the full fabric. So its first waiting
    /// flow (in flow order) takes min(uplink, D); while D has room, the next pair's first
    /// waiting flow does the same (a pair's later flows find their uplink or D full). That is
    /// the top-up's walk of D, freed by the flows that just ended (it walks the freed downlinks
    /// first, and D is the only downlink), from the spare the clock gives (the capacities) by
    /// the same arithmetic: the same rates, bit for bit. With several coflows the order
    /// could change (BSSI runs again), and with several downlinks the walks' order need not be
    /// the flows' order: those decide.
    fn idle(&mut self, snap: &Snapshot, rates: &mut Rates, freed: &mut Freed) -> bool {
        if !self.incast || self.on_flow_completion != FlowCompletion::Redistribute {
            return false;
        }
        self.topup.apply(snap.coflows, rates, freed);
        true
    }

    fn idle_reads_spare(&self) -> bool {
        self.incast && self.on_flow_completion == FlowCompletion::Redistribute
    }
}

impl Scheduler for Sincronia {
    fn name(&self) -> &str {
        "sincronia"
    }

    fn clairvoyant(&self) -> bool {
        true
    }

    fn on_flow_completion(&self) -> FlowCompletion {
        self.on_flow_completion
    }

    fn allocate(&mut self, snap: &Snapshot, rates: &mut Rates) -> Decision {
        self.bssi(snap);
        self.budget.reset(snap.fabric);
        for &j in &self.order {
            backfill(
                Backfill::Greedy,
                &snap.coflows[j].flows,
                &mut self.budget,
                &mut rates.per_coflow[j],
            );
        }
        self.incast = match snap.coflows {
            [c] => c.flows.first().is_some_and(|f| {
                let dst = f.dst;
                c.flows.iter().all(|f| f.dst == dst)
            }),
            _ => false,
        };
        if self.on_flow_completion == FlowCompletion::Redistribute {
            let order = self.order.iter().copied();
            self.topup.index(snap.fabric.ports(), order);
        }
        Decision::none()
    }
}

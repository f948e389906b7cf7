//! D-CLAS building blocks shared by Aalo and Saath: the exponentially spaced priority queues, the
//! coordination ticks (queue membership changes only every Δ), the two inter-queue disciplines,
//! and the two ways of giving rates to the flows of one coflow.

use serde::{Deserialize, Serialize};

use crate::alloc::{Budget, Demand, TopUp, WaterFill};
use crate::state::{CoflowState, FlowState, Rates};

/// Below this many flows a decision indexes for redistribution on its own core: a thread
/// costs tens of microseconds.
const SPLIT_FLOWS: usize = 4096;

/// Decide the rates (`fill`) and index the flows for redistribution in `order` (the priority
/// order, known before the rates): the index's pairs and peer orders need no rates, so on a
/// large decision they are built on a second core while `fill` runs, and only the holders
/// wait for the rates. The same index either way.
pub(crate) fn split_index(
    topup: &mut TopUp,
    ports: usize,
    coflows: &[CoflowState],
    order: impl IntoIterator<Item = usize> + Send,
    rates: &mut Rates,
    fill: impl FnOnce(&mut Rates),
) {
    let flows: usize = coflows.iter().map(|c| c.flows.len()).sum();
    if flows < SPLIT_FLOWS {
        fill(rates);
        topup.index_pairs(ports, coflows, order);
    } else {
        std::thread::scope(|s| {
            let pairs = s.spawn(|| topup.index_pairs(ports, coflows, order));
            fill(rates);
            if let Err(e) = pairs.join() {
                std::panic::resume_unwind(e);
            }
        });
    }
    topup.index_holders();
}

/// Relative slack for "a size has reached a threshold" and "now is a tick": the fluid simulator
/// stops exactly at the predicted crossing, up to floating-point dust.
pub const CROSS_EPS: f64 = 1e-9;

/// The K queues of D-CLAS: queue `i` (0-based, 0 = highest priority) holds coflows whose size
/// lies in `(hi(i-1), hi(i)]` with `hi(i) = q1_hi_bytes * e^i` and the last queue unbounded.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Queues {
    /// Number of queues K. Default 10 (Aalo §6.5, Table 6.1).
    pub k: usize,
    /// Spacing E: each threshold is E times the previous. Default 10.
    pub e: f64,
    /// Upper threshold of the first queue, bytes. Default 10 MB = 10 * 2^20 B.
    pub q1_hi_bytes: f64,
}

impl Default for Queues {
    fn default() -> Self {
        Queues {
            k: 10,
            e: 10.0,
            q1_hi_bytes: 10.0 * 1048576.0,
        }
    }
}

impl Queues {
    /// The upper threshold of queue `index` (infinite for the last queue).
    pub fn next_threshold(&self, index: usize) -> f64 {
        if index + 1 >= self.k.max(1) {
            f64::INFINITY
        } else {
            self.q1_hi_bytes * self.e.powi(index as i32)
        }
    }

    /// The queue of a coflow of `size_bytes`: the number of thresholds strictly below the size
    /// (a coflow is demoted when its size *exceeds* a threshold, spec D3), capped at K-1.
    pub fn index(&self, size_bytes: f64) -> usize {
        self.count_below(|t| t < size_bytes)
    }

    /// Like [`Queues::index`], but a size within `CROSS_EPS` below a threshold counts as past it.
    /// The schedulers use this one: in the fluid model a coflow *reaches* a threshold at the
    /// event it asked for, and exceeds it an instant later; demoting at that event rather than
    /// one float ulp later is the same schedule without a spurious extra event.
    pub fn index_reached(&self, size_bytes: f64) -> usize {
        self.count_below(|t| size_bytes >= t * (1.0 - CROSS_EPS))
    }

    fn count_below(&self, past: impl Fn(f64) -> bool) -> usize {
        let mut i = 0;
        while i + 1 < self.k && past(self.next_threshold(i)) {
            i += 1;
        }
        i
    }

    /// Weight of queue `index` in weighted sharing: K - i + 1 for the 1-based queue i (Q1 = K).
    pub fn weight(&self, index: usize) -> f64 {
        self.k.saturating_sub(index).max(1) as f64
    }
}

/// How the queues share a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InterQueue {
    /// The thesis (§6.5): at every uplink and downlink, each queue with a flow there gets
    /// `weight / (sum of the weights of the queues with a flow there)` of the capacity; its
    /// coflows use that share in FIFO order. Shares a queue leaves unused are then handed to
    /// all coflows in strict priority order (queue, then FIFO) — a simplification of the
    /// thesis' "max-min among the other queues".
    Weighted,
    /// CoflowSim's DARK: strict priority across queues.
    Strict,
}

/// How the flows of one coflow share what the coflows before it left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WithinCoflow {
    /// Per-flow max-min fairness (water-filling) on the leftover capacity: Aalo's thesis.
    MaxMin,
    /// CoflowSim's rule (spec B2): each flow whose two ports have room gets
    /// `min(upFree[src] / n_src, downFree[dst] / n_dst)`, where n_src, n_dst count this
    /// coflow's unfinished flows at those ports; not work conserving inside the coflow.
    CoflowSim,
}

/// Coordination ticks `t = kΔ`. Δ = 0 is instantaneous coordination (every decision is a tick).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ticks {
    pub interval_s: f64,
}

impl Ticks {
    pub fn is_tick(&self, now: f64) -> bool {
        let d = self.interval_s;
        if d <= 0.0 {
            return true;
        }
        let k = (now / d).round();
        (now - k * d).abs() <= CROSS_EPS * now.abs().max(d)
    }

    /// The first tick strictly after `now`.
    pub fn after(&self, now: f64) -> f64 {
        let d = self.interval_s;
        if d <= 0.0 {
            return now;
        }
        let mut t = ((now / d).floor() + 1.0) * d;
        if t - now <= CROSS_EPS * now.abs().max(d) {
            t += d;
        }
        t
    }

    /// When to wake for an event (a queue crossing) at `t_c > now`: the first tick at or after
    /// it, or `t_c` itself with Δ = 0.
    pub fn wake_for(&self, now: f64, t_c: f64) -> f64 {
        let d = self.interval_s;
        if d <= 0.0 || !t_c.is_finite() {
            return t_c;
        }
        let t = (t_c / d - CROSS_EPS).ceil() * d;
        if t - now <= CROSS_EPS * now.abs().max(d) {
            self.after(now)
        } else {
            t
        }
    }
}

/// Gives one coflow's flows their rates on a budget, with reused scratch space.
#[derive(Debug, Default)]
pub struct Filler {
    fill: WaterFill,
    demands: Vec<Demand>,
    /// The flow of each demand, and the demands' rates.
    at: Vec<u32>,
    rates: Vec<f64>,
    added: Vec<f64>,
    n_up: Vec<u32>,
    n_down: Vec<u32>,
}

impl Filler {
    /// Give `flows` rates on what `budget` leaves, add them to `rates` and take them from
    /// `budget`. Flows with a full port get nothing. The rates just added are in [`Filler::added`].
    pub fn fill(
        &mut self,
        rule: WithinCoflow,
        flows: &[FlowState],
        budget: &mut Budget,
        rates: &mut [f64],
    ) {
        self.added.clear();
        self.added.resize(flows.len(), 0.0);
        match rule {
            WithinCoflow::MaxMin => {
                // Only the flows with room on both ports: the others get 0 either way, and the
                // water-filling sees the same demands in the same order.
                self.demands.clear();
                self.at.clear();
                for (i, f) in flows.iter().enumerate() {
                    if budget.has_room(f.src, f.dst) {
                        self.demands.push(Demand {
                            src: f.src,
                            dst: f.dst,
                            weight: 1.0,
                        });
                        self.at.push(i as u32);
                    }
                }
                // Most coflows behind a busy fabric get nothing: skip the O(ports) setup.
                if self.demands.is_empty() {
                    return;
                }
                self.rates.clear();
                self.rates.resize(self.demands.len(), 0.0);
                self.fill.fill(&self.demands, budget, &mut self.rates);
                for (&i, &r) in self.at.iter().zip(&self.rates) {
                    self.added[i as usize] = r;
                }
            }
            WithinCoflow::CoflowSim => {
                if !flows.iter().any(|f| budget.has_room(f.src, f.dst)) {
                    return;
                }
                let ports = budget.up.len();
                self.n_up.resize(ports, 0);
                self.n_down.resize(ports, 0);
                for f in flows {
                    self.n_up[f.src as usize] += 1;
                    self.n_down[f.dst as usize] += 1;
                }
                // All rates from the same free capacities, then taken: by construction the
                // flows at a port never ask for more than it has.
                for (f, a) in flows.iter().zip(self.added.iter_mut()) {
                    if budget.has_room(f.src, f.dst) {
                        *a = (budget.up[f.src as usize] / self.n_up[f.src as usize] as f64)
                            .min(budget.down[f.dst as usize] / self.n_down[f.dst as usize] as f64);
                    }
                }
                for (f, &a) in flows.iter().zip(&self.added) {
                    self.n_up[f.src as usize] = 0;
                    self.n_down[f.dst as usize] = 0;
                    if a > 0.0 {
                        budget.take(f.src, f.dst, a);
                    }
                }
            }
        }
        for (r, &a) in rates.iter_mut().zip(&self.added) {
            *r += a;
        }
    }

    /// The rates the last [`Filler::fill`] added.
    pub fn added(&self) -> &[f64] {
        &self.added
    }

    /// Take the rates the last fill added from another budget too.
    pub fn take_added(&self, flows: &[FlowState], budget: &mut Budget) {
        for (f, &a) in flows.iter().zip(&self.added) {
            if a > 0.0 {
                budget.take(f.src, f.dst, a);
            }
        }
    }
}

/// True when every flow of a coflow could get some rate on `budget` (all-or-none test).
pub fn all_have_room(flows: &[FlowState], budget: &Budget) -> bool {
    flows.iter().all(|f| budget.has_room(f.src, f.dst))
}

/// Weighted inter-queue shares: one budget per queue present, each port split among the queues
/// with an unfinished flow there in proportion to their weights.
#[derive(Debug, Default)]
pub struct Shares {
    /// Distinct queues present, ascending (highest priority first).
    pub present: Vec<usize>,
    /// `budgets[s]` is the share of queue `present[s]`.
    pub budgets: Vec<Budget>,
    w_up: Vec<f64>,
    w_down: Vec<f64>,
    mark_up: Vec<usize>,
    mark_down: Vec<usize>,
}

impl Shares {
    /// `by_queue` lists coflow indices sorted by queue (each queue contiguous); `queue_of[i]`
    /// is coflow i's queue.
    pub fn compute(
        &mut self,
        queues: &Queues,
        full: &Budget,
        coflows: &[CoflowState],
        by_queue: &[usize],
        queue_of: &[usize],
    ) {
        let ports = full.up.len();
        self.present.clear();
        for &i in by_queue {
            if self.present.last() != Some(&queue_of[i]) {
                self.present.push(queue_of[i]);
            }
        }
        for v in [&mut self.w_up, &mut self.w_down] {
            v.clear();
            v.resize(ports, 0.0);
        }
        for v in [&mut self.mark_up, &mut self.mark_down] {
            v.clear();
            v.resize(ports, usize::MAX);
        }
        // Sum the weights of the distinct queues present at each port.
        for &i in by_queue {
            let q = queue_of[i];
            let w = queues.weight(q);
            for f in &coflows[i].flows {
                let (s, d) = (f.src as usize, f.dst as usize);
                if self.mark_up[s] != q {
                    self.mark_up[s] = q;
                    self.w_up[s] += w;
                }
                if self.mark_down[d] != q {
                    self.mark_down[d] = q;
                    self.w_down[d] += w;
                }
            }
        }
        self.budgets
            .resize_with(self.present.len(), Budget::default);
        for b in &mut self.budgets {
            b.up.clear();
            b.up.resize(ports, 0.0);
            b.down.clear();
            b.down.resize(ports, 0.0);
            b.floor = full.floor;
        }
        let mut slot = 0;
        for &i in by_queue {
            let q = queue_of[i];
            while self.present[slot] != q {
                slot += 1;
            }
            let w = queues.weight(q);
            let b = &mut self.budgets[slot];
            for f in &coflows[i].flows {
                let (s, d) = (f.src as usize, f.dst as usize);
                b.up[s] = full.up[s] * w / self.w_up[s];
                b.down[d] = full.down[d] * w / self.w_down[d];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_index_is_the_index() {
        // Enough flows for the second core (SPLIT_FLOWS), in an order that is not the
        // snapshot's, with every third flow served.
        let ports = 13u32;
        let coflows: Vec<CoflowState> = (0..64u32)
            .map(|c| {
                let flows: Vec<(u32, u32, f64)> = (0..80u32)
                    .map(|f| ((c * 7 + f) % ports, (c * 3 + f * 5) % ports, 1.0))
                    .collect();
                CoflowState::of_flows(&flows)
            })
            .collect();
        assert!(coflows.iter().map(|c| c.flows.len()).sum::<usize>() >= SPLIT_FLOWS);
        let order: Vec<usize> = (0..coflows.len()).rev().collect();
        let serve = |rates: &mut Rates| {
            for (c, r) in rates.per_coflow.iter_mut().enumerate() {
                for (f, x) in r.iter_mut().enumerate() {
                    *x = if (c + f) % 3 == 0 { 1.0 } else { 0.0 };
                }
            }
        };
        let mut rates = Rates::default();
        rates.reset(&coflows);
        let mut split = TopUp::default();
        split_index(
            &mut split,
            ports as usize,
            &coflows,
            order.iter().copied(),
            &mut rates,
            serve,
        );
        let mut whole = TopUp::default();
        whole.index(ports as usize, order.iter().copied());
        split.build_now(&coflows, &rates);
        whole.build_now(&coflows, &rates);
        assert_eq!(format!("{split:?}"), format!("{whole:?}"));
    }

    const MB: f64 = 1048576.0;

    #[test]
    fn queue_index_oracles_d3() {
        let q = Queues::default();
        let got: Vec<usize> = [
            0.0,
            10.0 * MB,
            10.0 * MB + 1.0,
            100.0 * MB,
            150.0 * MB,
            1e12 * MB,
        ]
        .iter()
        .map(|&s| q.index(s))
        .collect();
        assert_eq!(got, vec![0, 0, 1, 1, 2, 9]);
        // Saath's per-flow rule vs Aalo's total (D3): n=4, per-flow (3,1,1,1) MB.
        assert_eq!(q.index(4.0 * 3.0 * MB), 1);
        assert_eq!(q.index(6.0 * MB), 0);
    }

    #[test]
    fn queue_index_oracles_o8() {
        let q = Queues::default();
        let gb = 1024.0 * MB;
        let tb = 1024.0 * gb;
        assert_eq!(q.index(5.0 * MB), 0);
        assert_eq!(q.index(50.0 * MB), 1);
        assert_eq!(q.index(5.0 * gb), 3);
        assert_eq!(q.index(20.0 * tb), 7);
        assert_eq!(q.weight(0), 10.0);
        assert_eq!(q.weight(2), 8.0);
        assert_eq!(q.weight(9), 1.0);
    }

    #[test]
    fn thresholds_and_reached() {
        let q = Queues::default();
        assert_eq!(q.next_threshold(0), 10.0 * MB);
        assert_eq!(q.next_threshold(1), 100.0 * MB);
        assert!(q.next_threshold(9).is_infinite());
        assert_eq!(q.index_reached(10.0 * MB * (1.0 - 1e-12)), 1);
        assert_eq!(q.index_reached(9.0 * MB), 0);
        let one = Queues {
            k: 1,
            ..Queues::default()
        };
        assert_eq!(one.index(1e30), 0);
    }

    #[test]
    fn ticks() {
        let t = Ticks { interval_s: 0.01 };
        assert!(t.is_tick(0.0));
        assert!(t.is_tick(0.03));
        assert!(!t.is_tick(0.031));
        assert!((t.after(0.03) - 0.04).abs() < 1e-15);
        assert!((t.after(0.031) - 0.04).abs() < 1e-15);
        assert!((t.wake_for(0.0, 0.025) - 0.03).abs() < 1e-15);
        assert!((t.wake_for(0.0, 0.03) - 0.03).abs() < 1e-15);
        let zero = Ticks { interval_s: 0.0 };
        assert!(zero.is_tick(0.123));
        assert_eq!(zero.wake_for(0.0, 0.025), 0.025);
    }
}

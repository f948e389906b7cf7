//! `varys`: SEBF + iterative MADD + work-conserving backfill (thesis §5.5.3), with T/δ starvation
//! avoidance, and deadline mode (§5.5.4): a coflow with a deadline is admitted on arrival iff it
//! can finish by its deadline on what the admitted coflows leave at their minimum rates; admitted
//! coflows go first at `remaining / time-to-deadline`, then the others by SEBF, then rejected ones
//! on leftovers only (they still finish, late; a real system would ask for resubmission).

use std::collections::{HashMap, HashSet};

use coflowkit_model::CoflowId;
use serde::{Deserialize, Serialize};

use super::ordered::{Order, OrderedCore};
use crate::alloc::{madd_for, Backfill, PortLoads, TopUp};
use crate::machinery::Machinery;
use crate::state::FlowState;
use crate::{Decision, FlowCompletion, Rates, Scheduler, Snapshot};

/// Relative slack when comparing times (admission test, timer boundaries).
const TIME_EPS: f64 = 1e-9;

/// Starvation avoidance: every `t_s`, coflows that got no service share one MADD for `delta_s`
/// while everyone else waits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Starvation {
    pub t_s: f64,
    pub delta_s: f64,
}

impl Default for Starvation {
    /// The thesis' EC2 defaults: δ = 200 ms, T = 2 s.
    fn default() -> Self {
        Starvation {
            t_s: 2.0,
            delta_s: 0.2,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct VarysConfig {
    pub starvation: Option<Starvation>,
    pub backfill: Backfill,
    /// What a single flow's end triggers. The thesis' Varys reschedules only on coflow arrival
    /// and completion (and the T/δ timers): `Ignore`. In a replay that leaves the bandwidth of
    /// every early-finishing flow idle until the next coflow event, which on the FB trace more
    /// than doubles Varys's average CCT, so the default follows the digest's advice (§8 item 2)
    /// to act on flow completions for work conservation, by redistribution (cheap) by default.
    #[serde(default)]
    pub on_flow_completion: FlowCompletion,
}

impl Default for VarysConfig {
    fn default() -> Self {
        VarysConfig {
            starvation: Some(Starvation::default()),
            backfill: Backfill::Greedy,
            on_flow_completion: FlowCompletion::Redistribute,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Admission {
    Admitted,
    Rejected,
}

#[derive(Debug, Default)]
pub struct Varys {
    pub config: VarysConfig,
    core: OrderedCore,
    admission: HashMap<CoflowId, Admission>,
    /// Start of the current T-interval.
    interval_start: Option<f64>,
    served: HashSet<CoflowId>,
    /// The coflows the last SEBF decision served, when it served every coflow: then no one can
    /// starve before the next decision, so no timer is set and intervals roll forward lazily.
    all_served: Option<HashSet<CoflowId>>,
    /// A running δ-interval: its end and the starved coflows it serves.
    delta: Option<(f64, HashSet<CoflowId>)>,
    union: Vec<FlowState>,
    union_rates: Vec<f64>,
    loads: PortLoads,
}

impl Varys {
    pub fn new(config: VarysConfig) -> Self {
        Varys {
            config,
            ..Default::default()
        }
    }

    /// Admission control for deadline coflows seen for the first time (in arrival order).
    fn admit_new(&mut self, snap: &Snapshot) {
        for c in snap.coflows {
            let Some(deadline) = c.deadline_s else {
                continue;
            };
            if self.admission.contains_key(&c.id) {
                continue;
            }
            self.core.budget.reset(snap.fabric);
            self.reserve_admitted(snap, None);
            let g = self.loads.gamma(&c.flows, &self.core.budget);
            let ok = snap.now_s + g <= deadline + TIME_EPS * deadline.abs().max(1.0);
            let verdict = if ok {
                Admission::Admitted
            } else {
                Admission::Rejected
            };
            self.admission.insert(c.id, verdict);
        }
    }

    /// Give admitted coflows their minimum rates (`remaining / time left`, or MADD on what is
    /// left if they are already late), writing rates when `rates` is given.
    fn reserve_admitted(&mut self, snap: &Snapshot, mut rates: Option<&mut Rates>) {
        for (i, c) in snap.coflows.iter().enumerate() {
            if self.admission.get(&c.id) != Some(&Admission::Admitted) {
                continue;
            }
            let left = c.deadline_s.unwrap_or(f64::INFINITY) - snap.now_s;
            let g = self.loads.gamma(&c.flows, &self.core.budget);
            let tau = if left > 0.0 { left.max(g) } else { g };
            let mut scratch;
            let out: &mut [f64] = match rates.as_deref_mut() {
                Some(r) => &mut r.per_coflow[i],
                None => {
                    scratch = vec![0.0; c.flows.len()];
                    &mut scratch
                }
            };
            madd_for(&c.flows, tau, &mut self.core.budget, out);
        }
    }

    fn class(&self, c: &crate::CoflowState) -> Option<Admission> {
        c.deadline_s
            .and_then(|_| self.admission.get(&c.id).copied())
    }

    /// The δ-interval: one MADD over the union of the starved coflows.
    fn serve_starved(&mut self, snap: &Snapshot, starved: &HashSet<CoflowId>, rates: &mut Rates) {
        self.union.clear();
        for c in snap.coflows.iter().filter(|c| starved.contains(&c.id)) {
            self.union.extend_from_slice(&c.flows);
        }
        self.union_rates.clear();
        self.union_rates.resize(self.union.len(), 0.0);
        let g = self.loads.gamma(&self.union, &self.core.budget);
        madd_for(&self.union, g, &mut self.core.budget, &mut self.union_rates);
        let mut k = 0;
        for (i, c) in snap.coflows.iter().enumerate() {
            if starved.contains(&c.id) {
                let n = c.flows.len();
                rates.per_coflow[i].copy_from_slice(&self.union_rates[k..k + n]);
                k += n;
            }
        }
    }
}

impl Machinery for Varys {
    fn topup(&mut self) -> Option<&mut TopUp> {
        Some(&mut self.core.topup)
    }
}

impl Scheduler for Varys {
    fn name(&self) -> &str {
        "varys"
    }

    fn clairvoyant(&self) -> bool {
        true
    }

    fn on_flow_completion(&self) -> FlowCompletion {
        self.config.on_flow_completion
    }

    fn allocate(&mut self, snap: &Snapshot, rates: &mut Rates) -> Decision {
        let now = snap.now_s;
        self.admit_new(snap);
        self.core.prepare(snap);
        self.reserve_admitted(snap, Some(rates));
        let admitted: Vec<usize> = (0..snap.coflows.len())
            .filter(|&i| self.class(&snap.coflows[i]) == Some(Admission::Admitted))
            .collect();
        let rejected: Vec<usize> = (0..snap.coflows.len())
            .filter(|&i| self.class(&snap.coflows[i]) == Some(Admission::Rejected))
            .collect();

        // During a δ-interval everyone but the starved waits: nothing to redistribute to.
        let ports = snap.fabric.ports();
        self.core.topup.index(ports, []);
        let mut wake = Decision::none();
        let mut sebf_turn = true;
        if let Some(st) = self.config.starvation {
            let mut start = *self.interval_start.get_or_insert(now);
            if let Some(last) = self.all_served.take() {
                if now >= start + st.t_s {
                    // Intervals passed without a decision: everyone was served in all of them,
                    // and the last decision's coflows are being served in the current one.
                    start += ((now - start) / st.t_s).floor() * st.t_s;
                    self.interval_start = Some(start);
                    self.served = last;
                }
            }
            if let Some((end, starved)) = self.delta.take() {
                if now < end - TIME_EPS * end.max(1.0) {
                    self.serve_starved(snap, &starved, rates);
                    self.delta = Some((end, starved));
                    return Decision::at(end);
                }
                self.interval_start = Some(now);
                self.served.clear();
            } else if now >= start + st.t_s - TIME_EPS * (start + st.t_s).max(1.0) {
                let starved: HashSet<CoflowId> = snap
                    .coflows
                    .iter()
                    .filter(|c| c.deadline_s.is_none() && !self.served.contains(&c.id))
                    .map(|c| c.id)
                    .collect();
                self.served.clear();
                if starved.is_empty() {
                    self.interval_start = Some(now);
                } else {
                    self.serve_starved(snap, &starved, rates);
                    self.delta = Some((now + st.delta_s, starved));
                    sebf_turn = false;
                    wake = Decision::at(now + st.delta_s);
                }
            }
        }

        if !sebf_turn {
            return wake;
        }
        let order = self
            .core
            .sorted(Order::Sebf, snap, |i| snap.coflows[i].deadline_s.is_none());
        self.core.madd_in_order(&order, snap, rates, false);
        let kind = self.config.backfill;
        self.core.backfill_in_order(kind, &admitted, snap, rates);
        self.core.backfill_in_order(kind, &order, snap, rates);
        self.core.backfill_in_order(kind, &rejected, snap, rates);
        if self.config.on_flow_completion == FlowCompletion::Redistribute {
            let all = admitted.iter().chain(&order).chain(&rejected).copied();
            self.core.topup.index(ports, all);
        }
        if let Some(st) = self.config.starvation {
            let mut now_served = HashSet::new();
            for &i in &order {
                if rates.coflow_served(i) {
                    now_served.insert(snap.coflows[i].id);
                }
            }
            self.served.extend(now_served.iter().copied());
            if now_served.len() == order.len() {
                self.all_served = Some(now_served);
            } else {
                wake = Decision::at(self.interval_start.unwrap_or(now) + st.t_s);
            }
        }
        wake
    }
}

//! The multi-tenant measures of §7.3.2 and §7.7 over any scheduler's rates: each coflow's
//! progress (its demand-normalized rate on its bottleneck), the isolation guarantee (the lowest
//! progress) and the fabric's utilization, at one decision ([`observe`]) and over a whole run
//! ([`Recorder`]).
//!
//! A coflow's true correlation vector is the one MADD derives from its remaining bytes (its
//! bytes per uplink and downlink over each link's capacity, largest entry 1), whatever the
//! scheduler: per-flow fairness is scored by the same vector as HUG, as in the thesis.

use coflowkit_model::CoflowId;
use serde::{Deserialize, Serialize};

use crate::{Rates, Snapshot};

/// One coflow at one decision.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CoflowAt {
    pub id: CoflowId,
    /// `min_i (c^i / C^i) / d^i` over the links it uses: 1 when it runs as fast as its
    /// bottleneck allows on an empty fabric, 0 when a link it needs gives it nothing.
    pub progress: f64,
    /// Progress in bandwidth: `progress` times its bottleneck link's capacity (bytes/s), the
    /// thesis' "bandwidth on the bottleneck link".
    pub bottleneck_bytes_per_s: f64,
}

/// The measures of one decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub now_s: f64,
    /// Coflows with bytes left, in snapshot order.
    pub coflows: Vec<CoflowAt>,
    /// The lowest progress (1 with no coflow).
    pub isolation_guarantee: f64,
    /// Bytes/s crossing all 2P links over their total capacity (a flow counts on its uplink
    /// and its downlink), i.e. the used fraction of the fabric.
    pub utilization: f64,
    /// When these rates would have nothing left to move: the last of the served flows'
    /// `remaining / rate` (`now_s` when nothing is served).
    pub drained_s: f64,
}

/// The measures of `rates` for `snap`. Non-finite remaining bytes (a non-clairvoyant world)
/// leave a coflow's vector unknown: such flows count for utilization, not for progress.
pub fn observe(snap: &Snapshot, rates: &Rates) -> Observation {
    let f = snap.fabric;
    let ports = f.ports();
    let caps: Vec<f64> = f
        .up_bytes_per_s
        .iter()
        .chain(&f.down_bytes_per_s)
        .copied()
        .collect();
    let mut bytes = vec![0.0; 2 * ports];
    let mut used = vec![0.0; 2 * ports];
    let mut touched: Vec<usize> = Vec::new();
    let mut coflows = Vec::with_capacity(snap.coflows.len());
    let (mut moved, mut drain) = (0.0, 0.0f64);
    for (co, r) in snap.coflows.iter().zip(&rates.per_coflow) {
        let mut known = true;
        for (fl, &rate) in co.flows.iter().zip(r) {
            if fl.remaining_bytes <= 0.0 {
                continue;
            }
            known &= fl.remaining_bytes.is_finite();
            moved += 2.0 * rate;
            if rate > 0.0 {
                drain = drain.max(fl.remaining_bytes / rate);
            }
            for l in [fl.src as usize, ports + fl.dst as usize] {
                if bytes[l] == 0.0 && used[l] == 0.0 {
                    touched.push(l);
                }
                bytes[l] += fl.remaining_bytes;
                used[l] += rate;
            }
        }
        if touched.is_empty() {
            continue;
        }
        if known {
            // d^i = (bytes_i / C_i) / max_j (bytes_j / C_j); progress = min_i (used_i / C_i) / d^i
            // = min_i (used_i / bytes_i) * max_j (bytes_j / C_j).
            let (mut top, mut top_cap) = (0.0, 0.0);
            let mut per_byte = f64::INFINITY;
            for &l in &touched {
                let load = bytes[l] / caps[l];
                if load > top {
                    (top, top_cap) = (load, caps[l]);
                }
                per_byte = per_byte.min(used[l] / bytes[l]);
            }
            let progress = (per_byte * top).min(1.0);
            coflows.push(CoflowAt {
                id: co.id,
                progress,
                bottleneck_bytes_per_s: progress * top_cap,
            });
        }
        for l in touched.drain(..) {
            bytes[l] = 0.0;
            used[l] = 0.0;
        }
    }
    let capacity: f64 = caps.iter().sum();
    Observation {
        now_s: snap.now_s,
        isolation_guarantee: coflows.iter().map(|c| c.progress).fold(1.0, f64::min),
        coflows,
        utilization: if capacity > 0.0 {
            moved / capacity
        } else {
            0.0
        },
        drained_s: snap.now_s + drain,
    }
}

/// The isolation guarantee and utilization over one stretch of time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub t_s: f64,
    pub isolation_guarantee: f64,
    pub utilization: f64,
    /// Coflows measured.
    pub active: usize,
}

/// One coflow over its life: time-weighted mean and minimum progress.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CoflowProgress {
    pub id: CoflowId,
    pub avg_progress: f64,
    pub min_progress: f64,
    pub avg_bottleneck_bytes_per_s: f64,
    /// Seconds it was measured over.
    pub measured_s: f64,
}

/// A run's multi-tenant measures.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TenantMetrics {
    /// The first decision whole (the instantaneous experiment: a snapshot of concurrent
    /// coflows all present at once).
    pub first: Option<Observation>,
    /// The isolation guarantee over time: time-weighted mean and minimum over the time some
    /// coflow was measured.
    pub isolation_guarantee_avg: f64,
    pub isolation_guarantee_min: f64,
    /// Time-weighted mean utilization over the same time.
    pub utilization_avg: f64,
    /// Seconds measured (idle stretches between coflows excluded).
    pub measured_s: f64,
    /// Decisions observed.
    pub decisions: u64,
    /// Per coflow, in order of first appearance.
    pub coflows: Vec<CoflowProgress>,
    /// One sample per observed decision, each holding until the next sample's `t_s` (or until
    /// its rates would have drained, whichever is first).
    pub series: Vec<Sample>,
}

#[derive(Debug, Clone, Default)]
struct Acc {
    id: CoflowId,
    progress_s: f64,
    bottleneck_s: f64,
    min: f64,
    dt: f64,
}

/// Folds observations into [`TenantMetrics`]. Each observation holds from its time until the
/// next one's, cut at the moment its rates would have moved every byte (so an idle gap before
/// the next arrival does not count). Exact when every change of rates is a decision (the
/// multi-tenant policies and per-flow fairness in the per-flow world); for policies that hand
/// freed bandwidth on between decisions it samples the decisions only.
#[derive(Debug, Default)]
pub struct Recorder {
    last: Option<Observation>,
    first: Option<Observation>,
    acc: Vec<Acc>,
    index: std::collections::HashMap<CoflowId, usize>,
    ig_s: f64,
    ig_min: f64,
    util_s: f64,
    measured_s: f64,
    decisions: u64,
    series: Vec<Sample>,
}

impl Recorder {
    pub fn new() -> Self {
        Recorder {
            ig_min: f64::INFINITY,
            ..Default::default()
        }
    }

    /// Record a decision's measures; the previous one is accounted up to `obs.now_s`.
    pub fn push(&mut self, obs: Observation) {
        self.close(obs.now_s);
        self.decisions += 1;
        if self.first.is_none() && !obs.coflows.is_empty() {
            self.first = Some(obs.clone());
        }
        if !obs.coflows.is_empty() {
            self.series.push(Sample {
                t_s: obs.now_s,
                isolation_guarantee: obs.isolation_guarantee,
                utilization: obs.utilization,
                active: obs.coflows.len(),
            });
        }
        self.last = Some(obs);
    }

    /// Account the last observation up to `until_s`.
    fn close(&mut self, until_s: f64) {
        let Some(o) = self.last.take() else { return };
        if o.coflows.is_empty() {
            return;
        }
        let dt = (until_s.min(o.drained_s) - o.now_s).max(0.0);
        self.ig_min = self.ig_min.min(o.isolation_guarantee);
        for c in &o.coflows {
            let n = self.acc.len();
            let k = *self.index.entry(c.id).or_insert(n);
            if k == n {
                self.acc.push(Acc {
                    id: c.id,
                    min: f64::INFINITY,
                    ..Default::default()
                });
            }
            let a = &mut self.acc[k];
            a.progress_s += c.progress * dt;
            a.bottleneck_s += c.bottleneck_bytes_per_s * dt;
            a.dt += dt;
            a.min = a.min.min(c.progress);
        }
        self.ig_s += o.isolation_guarantee * dt;
        self.util_s += o.utilization * dt;
        self.measured_s += dt;
    }

    /// The run's measures, the last decision accounted until its rates drain.
    pub fn finish(mut self) -> TenantMetrics {
        self.close(f64::INFINITY);
        let t = self.measured_s;
        let avg = |x: f64, dt: f64| if dt > 0.0 { x / dt } else { f64::NAN };
        TenantMetrics {
            first: self.first,
            isolation_guarantee_avg: avg(self.ig_s, t),
            isolation_guarantee_min: if self.ig_min.is_finite() {
                self.ig_min
            } else {
                f64::NAN
            },
            utilization_avg: avg(self.util_s, t),
            measured_s: t,
            decisions: self.decisions,
            coflows: self
                .acc
                .iter()
                .map(|a| CoflowProgress {
                    id: a.id,
                    avg_progress: avg(a.progress_s, a.dt),
                    min_progress: a.min,
                    avg_bottleneck_bytes_per_s: avg(a.bottleneck_s, a.dt),
                    measured_s: a.dt,
                })
                .collect(),
            series: self.series,
        }
    }
}

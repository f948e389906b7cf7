//! The event loop. Cost per event is proportional to the active flows: one scheduler decision,
//! one pass to find the next completion, one pass to advance bytes and retire finished flows.

use std::collections::BinaryHeap;
use std::time::Instant;

use coflowkit_model::bins::Bin;
use coflowkit_model::{Fabric, Trace};
use coflowkit_sched::{CoflowState, FlowState, Rates, Scheduler, Snapshot};
use thiserror::Error;

use crate::outcome::{CoflowOutcome, SimOutput};

/// A flow with at most this fraction of its size left is finished (floating-point dust).
const DONE_FRACTION: f64 = 1e-9;
/// Capacity may be exceeded by this fraction before it is called a violation.
const CAPACITY_SLACK: f64 = 1e-9;

#[derive(Debug, Error, PartialEq)]
pub enum SimError {
    #[error("coflow {coflow}: flow uses port {port}, but the fabric has {ports} ports")]
    PortOutOfRange {
        coflow: u64,
        port: u32,
        ports: usize,
    },
    #[error("coflow {coflow}: flow of {bytes} bytes: sizes must be finite and non-negative")]
    BadSize { coflow: u64, bytes: f64 },
    #[error("scheduler `{scheduler}` at t={time_s}s: {dir} of port {port} carries {load} B/s, above its capacity {cap} B/s")]
    OverCapacity {
        scheduler: String,
        time_s: f64,
        dir: &'static str,
        port: usize,
        load: f64,
        cap: f64,
    },
    #[error("scheduler `{scheduler}` at t={time_s}s gave a flow the invalid rate {rate}")]
    BadRate {
        scheduler: String,
        time_s: f64,
        rate: f64,
    },
    #[error("scheduler `{scheduler}` stalled at t={time_s}s: {flows} flows left, none has a rate, and nothing is due to happen")]
    Stalled {
        scheduler: String,
        time_s: f64,
        flows: usize,
    },
}

/// Per active coflow bookkeeping the scheduler does not see.
struct Meta {
    trace_index: usize,
    unfinished: usize,
    fct_sum: f64,
    fct_min: f64,
    fct_max: f64,
}

/// A flow's predicted completion at the current rates; ordered by time (earliest first).
#[derive(PartialEq)]
struct Due {
    at: f64,
    coflow: u32,
    flow: u32,
}

impl Eq for Due {}

impl Ord for Due {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other
            .at
            .total_cmp(&self.at)
            .then(other.coflow.cmp(&self.coflow))
            .then(other.flow.cmp(&self.flow))
    }
}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Completions this close to each other (relative) are one event: floating-point dust between
/// flows that a policy means to finish together (MADD) must not cost a decision each.
const SAME_TIME: f64 = 1e-9;

/// The simulation state between decisions.
struct World<'a> {
    trace: &'a Trace,
    fabric: &'a Fabric,
    active: Vec<CoflowState>,
    meta: Vec<Meta>,
    rates: Rates,
    /// When `active` was last brought up to date (the last decision).
    synced_at: f64,
    due: BinaryHeap<Due>,
    /// Decisions follow every completion: then only the earliest completions matter, and a
    /// scan of `due_list` is cheaper than keeping a heap of every running flow.
    scan: bool,
    due_list: Vec<Due>,
    due_min: f64,
    outcomes: Vec<Option<CoflowOutcome>>,
    makespan: f64,
}

impl World<'_> {
    /// Bring every running flow's bytes up to `now` and drop finished flows.
    fn sync(&mut self, now: f64) {
        let dt = now - self.synced_at;
        for ((c, r), m) in self
            .active
            .iter_mut()
            .zip(&self.rates.per_coflow)
            .zip(self.meta.iter_mut())
        {
            let mut moved = 0.0;
            let mut max_sent = c.max_flow_sent_bytes;
            let arrival = c.arrival_s;
            for (f, &rate) in c.flows.iter_mut().zip(r) {
                if rate <= 0.0 || f.remaining_bytes <= 0.0 {
                    continue;
                }
                let size = f.sent_bytes + f.remaining_bytes;
                let step = (rate * dt).min(f.remaining_bytes);
                f.sent_bytes += step;
                f.remaining_bytes -= step;
                moved += step;
                if f.remaining_bytes <= size * DONE_FRACTION {
                    // Rounding left a crumb its heap entry would have cleared.
                    moved += f.remaining_bytes;
                    f.sent_bytes = size;
                    f.remaining_bytes = 0.0;
                    finish_flow(m, now - arrival);
                }
                if f.sent_bytes > max_sent {
                    max_sent = f.sent_bytes;
                }
            }
            c.max_flow_sent_bytes = max_sent;
            c.sent_bytes += moved;
            if c.flows.len() != m.unfinished {
                c.flows.retain(|f| f.remaining_bytes > 0.0);
            }
        }
        self.synced_at = now;
    }

    /// A flow reached its predicted completion at `now` (between decisions).
    fn complete(&mut self, now: f64, ci: usize, fi: usize) {
        let c = &mut self.active[ci];
        let rate = &mut self.rates.per_coflow[ci][fi];
        let f = &mut c.flows[fi];
        if f.remaining_bytes <= 0.0 || *rate <= 0.0 {
            return;
        }
        // All that was left at the last sync is sent now; `sync` skips it from here on.
        let size = f.sent_bytes + f.remaining_bytes;
        c.sent_bytes += f.remaining_bytes;
        f.sent_bytes = size;
        f.remaining_bytes = 0.0;
        *rate = 0.0;
        c.max_flow_sent_bytes = c.max_flow_sent_bytes.max(size);
        finish_flow(&mut self.meta[ci], now - c.arrival_s);
    }

    /// Move coflows whose flows are all done to the outcomes. Returns whether any finished.
    fn retire(&mut self, now: f64) -> bool {
        if self.meta.iter().all(|m| m.unfinished > 0) {
            return false;
        }
        let mut keep = 0;
        for i in 0..self.active.len() {
            if self.meta[i].unfinished == 0 {
                self.record(i, now);
            } else {
                self.active.swap(keep, i);
                self.meta.swap(keep, i);
                self.rates.per_coflow.swap(keep, i);
                keep += 1;
            }
        }
        self.active.truncate(keep);
        self.meta.truncate(keep);
        self.rates.per_coflow.truncate(keep);
        true
    }

    fn record(&mut self, i: usize, now: f64) {
        let m = &self.meta[i];
        let c = &self.trace.coflows[m.trace_index];
        let cct = now - c.arrival_s;
        let deadline_s = c.deadline_s.map(|d| c.arrival_s + d);
        let n = c.flows.len().max(1) as f64;
        self.outcomes[m.trace_index] = Some(CoflowOutcome {
            id: c.id,
            arrival_s: c.arrival_s,
            finish_s: now,
            cct_s: cct,
            isolated_cct_s: c.isolated_cct_s(self.fabric),
            bytes: c.bytes(),
            flows: c.flows.len(),
            length_bytes: c.length_bytes(),
            bin: Bin::of(c),
            deadline_s,
            met_deadline: deadline_s.map(|d| now <= d + 1e-9 * d.abs().max(1.0)),
            avg_fct_s: m.fct_sum / n,
            fct_spread: if cct > 0.0 && m.fct_min.is_finite() {
                (m.fct_max - m.fct_min) / cct
            } else {
                0.0
            },
        });
        self.makespan = self.makespan.max(now);
    }

    /// Predicted completions at the rates just decided, checking on the way the invariant every
    /// policy promises: no negative or NaN rate, no port above its capacity.
    fn schedule_completions(
        &mut self,
        now: f64,
        name: &str,
        up: &mut [f64],
        down: &mut [f64],
    ) -> Result<(), SimError> {
        let mut due = std::mem::take(&mut self.due).into_vec();
        due.clear();
        up.fill(0.0);
        down.fill(0.0);
        for (ci, (c, r)) in self.active.iter().zip(&self.rates.per_coflow).enumerate() {
            for (fi, (f, &rate)) in c.flows.iter().zip(r).enumerate() {
                if !(rate >= 0.0 && rate.is_finite()) {
                    return Err(SimError::BadRate {
                        scheduler: name.to_string(),
                        time_s: now,
                        rate,
                    });
                }
                if rate > 0.0 {
                    up[f.src as usize] += rate;
                    down[f.dst as usize] += rate;
                    due.push(Due {
                        at: now + f.remaining_bytes / rate,
                        coflow: ci as u32,
                        flow: fi as u32,
                    });
                }
            }
        }
        if self.scan {
            self.due_min = due.iter().map(|d| d.at).fold(f64::INFINITY, f64::min);
            self.due_list = due;
        } else {
            self.due = BinaryHeap::from(due);
        }
        check_capacity(name, now, self.fabric, up, down)
    }

    /// The earliest predicted completion, if any flow is running.
    fn next_due(&self) -> Option<f64> {
        if self.scan {
            (!self.due_list.is_empty()).then_some(self.due_min)
        } else {
            self.due.peek().map(|d| d.at)
        }
    }

    /// Complete every flow predicted by `horizon`, at time `t`. Returns whether a coflow ended.
    fn complete_due(&mut self, t: f64, horizon: f64) -> bool {
        let mut coflow_done = false;
        if self.scan {
            let mut list = std::mem::take(&mut self.due_list);
            list.retain(|d| {
                if d.at > horizon {
                    return true;
                }
                self.complete(t, d.coflow as usize, d.flow as usize);
                coflow_done |= self.meta[d.coflow as usize].unfinished == 0;
                false
            });
            self.due_min = list.iter().map(|d| d.at).fold(f64::INFINITY, f64::min);
            self.due_list = list;
        } else {
            while let Some(d) = self.due.peek() {
                if d.at > horizon {
                    break;
                }
                let d = self.due.pop().expect("peeked");
                self.complete(t, d.coflow as usize, d.flow as usize);
                coflow_done |= self.meta[d.coflow as usize].unfinished == 0;
            }
        }
        coflow_done
    }

    fn nothing_running(&self) -> bool {
        if self.scan {
            self.due_list.is_empty()
        } else {
            self.due.is_empty()
        }
    }
}

fn finish_flow(m: &mut Meta, fct: f64) {
    m.unfinished -= 1;
    m.fct_sum += fct;
    m.fct_min = m.fct_min.min(fct);
    m.fct_max = m.fct_max.max(fct);
}

/// Replay `trace` on `fabric` under `sched`. Deterministic: the same inputs give the same output
/// (wall time aside).
pub fn simulate(
    trace: &Trace,
    fabric: &Fabric,
    sched: &mut dyn Scheduler,
) -> Result<SimOutput, SimError> {
    simulate_with(trace, fabric, sched, &SimOptions::default())
}

/// Simulator knobs. The defaults give the exact fluid model.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SimOptions {
    /// For policies that reschedule on every flow completion: decide at most once per this
    /// many seconds on account of flow completions (bandwidth a finished flow frees idles until
    /// then). Arrivals, coflow completions and scheduler wake-ups stay exact. 0 = exact.
    pub flow_quantum_s: f64,
}

/// [`simulate`] with options.
pub fn simulate_with(
    trace: &Trace,
    fabric: &Fabric,
    sched: &mut dyn Scheduler,
    opts: &SimOptions,
) -> Result<SimOutput, SimError> {
    validate(trace, fabric)?;
    let started = Instant::now();
    let name = sched.name().to_string();
    let on_flow_completion = sched.reschedules_on_flow_completion();

    // Coflows in arrival order (ties keep trace order).
    let mut order: Vec<usize> = (0..trace.coflows.len()).collect();
    order.sort_by(|&a, &b| {
        trace.coflows[a]
            .arrival_s
            .total_cmp(&trace.coflows[b].arrival_s)
    });

    let mut w = World {
        trace,
        fabric,
        active: Vec::new(),
        meta: Vec::new(),
        rates: Rates::default(),
        synced_at: 0.0,
        due: BinaryHeap::new(),
        scan: on_flow_completion && opts.flow_quantum_s == 0.0,
        due_list: Vec::new(),
        due_min: f64::INFINITY,
        outcomes: vec![None; trace.coflows.len()],
        makespan: 0.0,
    };
    let mut next = 0usize;
    let mut now = 0.0f64;
    let mut decisions = 0u64;
    let mut up_load = vec![0.0; fabric.ports()];
    let mut down_load = vec![0.0; fabric.ports()];

    loop {
        // A decision point: bring state up to date, admit arrivals, decide.
        w.sync(now);
        while next < order.len() && trace.coflows[order[next]].arrival_s <= now {
            let ti = order[next];
            let c = &trace.coflows[ti];
            let flows: Vec<FlowState> = c
                .flows
                .iter()
                .filter(|f| f.bytes > 0.0)
                .map(|f| FlowState {
                    src: f.src,
                    dst: f.dst,
                    sent_bytes: 0.0,
                    remaining_bytes: f.bytes,
                })
                .collect();
            w.meta.push(Meta {
                trace_index: ti,
                unfinished: flows.len(),
                fct_sum: 0.0,
                fct_min: if flows.len() < c.flows.len() {
                    0.0
                } else {
                    f64::INFINITY
                },
                fct_max: 0.0,
            });
            w.active.push(CoflowState {
                id: c.id,
                arrival_s: c.arrival_s,
                deadline_s: c.deadline_s.map(|d| c.arrival_s + d),
                weight: c.weight,
                total_flows: c.flows.len(),
                sent_bytes: 0.0,
                max_flow_sent_bytes: 0.0,
                flows,
            });
            next += 1;
        }
        w.retire(now);
        if w.active.is_empty() {
            match order.get(next) {
                Some(&ti) => {
                    now = trace.coflows[ti].arrival_s;
                    continue;
                }
                None => break,
            }
        }
        w.rates.reset(&w.active);
        let decision = sched.allocate(
            &Snapshot {
                now_s: now,
                fabric,
                coflows: &w.active,
            },
            &mut w.rates,
        );
        decisions += 1;
        w.schedule_completions(now, &name, &mut up_load, &mut down_load)?;
        let mut wake = decision.wake_at_s.filter(|&t| t > now);
        let decided_at = now;

        // Run until something calls for the next decision.
        loop {
            let next_arrival = order.get(next).map(|&ti| trace.coflows[ti].arrival_s);
            let next_due = w.next_due();
            let t_other = next_arrival
                .unwrap_or(f64::INFINITY)
                .min(wake.unwrap_or(f64::INFINITY));
            match next_due {
                Some(t) if t <= t_other => {
                    let horizon = t + SAME_TIME * t.abs().max(1.0);
                    let coflow_done = w.complete_due(t, horizon);
                    now = t;
                    // Nothing left running: decide again rather than idle (or stall) until
                    // the next arrival.
                    if coflow_done || w.nothing_running() {
                        break;
                    }
                    if on_flow_completion {
                        let due = decided_at + opts.flow_quantum_s;
                        if now >= due {
                            break;
                        }
                        wake = Some(wake.map_or(due, |w| w.min(due)));
                    }
                }
                _ => {
                    if !t_other.is_finite() {
                        return Err(SimError::Stalled {
                            scheduler: name,
                            time_s: now,
                            flows: w.active.iter().map(|c| c.flows.len()).sum(),
                        });
                    }
                    now = t_other;
                    break;
                }
            }
        }
    }
    Ok(SimOutput {
        scheduler: name,
        coflows: w.outcomes.into_iter().flatten().collect(),
        decisions,
        makespan_s: w.makespan,
        wall_s: started.elapsed().as_secs_f64(),
    })
}

fn validate(trace: &Trace, fabric: &Fabric) -> Result<(), SimError> {
    let ports = fabric.ports();
    for c in &trace.coflows {
        for f in &c.flows {
            for port in [f.src, f.dst] {
                if port as usize >= ports {
                    return Err(SimError::PortOutOfRange {
                        coflow: c.id,
                        port,
                        ports,
                    });
                }
            }
            if !(f.bytes.is_finite() && f.bytes >= 0.0) {
                return Err(SimError::BadSize {
                    coflow: c.id,
                    bytes: f.bytes,
                });
            }
        }
    }
    Ok(())
}

/// No port may carry more than its capacity.
fn check_capacity(
    name: &str,
    now: f64,
    fabric: &Fabric,
    up: &[f64],
    down: &[f64],
) -> Result<(), SimError> {
    for (dir, loads, caps) in [
        ("uplink", up, &fabric.up_bytes_per_s),
        ("downlink", down, &fabric.down_bytes_per_s),
    ] {
        for (port, (&load, &cap)) in loads.iter().zip(caps).enumerate() {
            if load > cap * (1.0 + CAPACITY_SLACK) {
                return Err(SimError::OverCapacity {
                    scheduler: name.to_string(),
                    time_s: now,
                    dir,
                    port,
                    load,
                    cap,
                });
            }
        }
    }
    Ok(())
}

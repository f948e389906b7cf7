//! The event loop. Cost per event is proportional to the active flows: one scheduler decision,
//! one pass to find the next completion, one pass to advance bytes and retire finished flows.

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
    PortOutOfRange { coflow: u64, port: u32, ports: usize },
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
    fct_sum: f64,
    fct_min: f64,
    fct_max: f64,
}

/// Replay `trace` on `fabric` under `sched`. Deterministic: the same inputs give the same output
/// (wall time aside).
pub fn simulate(
    trace: &Trace,
    fabric: &Fabric,
    sched: &mut dyn Scheduler,
) -> Result<SimOutput, SimError> {
    validate(trace, fabric)?;
    let started = Instant::now();
    let name = sched.name().to_string();

    // Coflows in arrival order (ties by trace order, which is stable).
    let mut order: Vec<usize> = (0..trace.coflows.len()).collect();
    order.sort_by(|&a, &b| {
        trace.coflows[a]
            .arrival_s
            .total_cmp(&trace.coflows[b].arrival_s)
    });

    let mut outcomes: Vec<Option<CoflowOutcome>> = vec![None; trace.coflows.len()];
    let mut active: Vec<CoflowState> = Vec::new();
    let mut meta: Vec<Meta> = Vec::new();
    let mut rates = Rates::default();
    let mut next = 0usize;
    let mut now = 0.0f64;
    let mut decisions = 0u64;
    let mut makespan: f64 = 0.0;
    let mut up_load = vec![0.0; fabric.ports()];
    let mut down_load = vec![0.0; fabric.ports()];

    loop {
        // Admit every coflow that has arrived by now.
        while next < order.len() && trace.coflows[order[next]].arrival_s <= now {
            let ti = order[next];
            let c = &trace.coflows[ti];
            active.push(CoflowState {
                id: c.id,
                arrival_s: c.arrival_s,
                deadline_s: c.deadline_s.map(|d| c.arrival_s + d),
                weight: c.weight,
                total_flows: c.flows.len(),
                sent_bytes: 0.0,
                max_flow_sent_bytes: 0.0,
                flows: c
                    .flows
                    .iter()
                    .map(|f| FlowState {
                        src: f.src,
                        dst: f.dst,
                        sent_bytes: 0.0,
                        remaining_bytes: f.bytes,
                    })
                    .collect(),
            });
            meta.push(Meta {
                trace_index: ti,
                fct_sum: 0.0,
                fct_min: f64::INFINITY,
                fct_max: 0.0,
            });
            next += 1;
        }
        // Empty flows finish on arrival.
        retire(now, trace, fabric, &mut active, &mut meta, &mut outcomes, &mut makespan);
        if active.is_empty() {
            match order.get(next) {
                Some(&ti) => {
                    now = trace.coflows[ti].arrival_s;
                    continue;
                }
                None => break,
            }
        }

        rates.reset(&active);
        let decision = sched.allocate(
            &Snapshot {
                now_s: now,
                fabric,
                coflows: &active,
            },
            &mut rates,
        );
        decisions += 1;
        check_rates(
            &name,
            now,
            fabric,
            &active,
            &rates,
            &mut up_load,
            &mut down_load,
        )?;

        // The next event: a completion, an arrival, or the scheduler's wake-up.
        let mut dt = f64::INFINITY;
        for (c, r) in active.iter().zip(&rates.per_coflow) {
            for (f, &rate) in c.flows.iter().zip(r) {
                if rate > 0.0 {
                    dt = dt.min(f.remaining_bytes / rate);
                }
            }
        }
        let mut t_next = now + dt;
        if let Some(&ti) = order.get(next) {
            t_next = t_next.min(trace.coflows[ti].arrival_s);
        }
        if let Some(w) = decision.wake_at_s {
            if w > now {
                t_next = t_next.min(w);
            }
        }
        if !t_next.is_finite() {
            return Err(SimError::Stalled {
                scheduler: name,
                time_s: now,
                flows: active.iter().map(|c| c.flows.len()).sum(),
            });
        }
        let dt = t_next - now;
        now = t_next;

        // Advance bytes, mark finished flows, record their completion times.
        for ((c, r), m) in active.iter_mut().zip(&rates.per_coflow).zip(meta.iter_mut()) {
            let fct = now - c.arrival_s;
            let mut moved = 0.0;
            let mut any_done = false;
            for (f, &rate) in c.flows.iter_mut().zip(r) {
                if rate <= 0.0 {
                    continue;
                }
                let size = f.sent_bytes + f.remaining_bytes;
                let step = (rate * dt).min(f.remaining_bytes);
                f.sent_bytes += step;
                f.remaining_bytes -= step;
                moved += step;
                if f.remaining_bytes <= size * DONE_FRACTION {
                    f.sent_bytes = size;
                    f.remaining_bytes = 0.0;
                    any_done = true;
                }
                if f.sent_bytes > c.max_flow_sent_bytes {
                    c.max_flow_sent_bytes = f.sent_bytes;
                }
            }
            c.sent_bytes += moved;
            if any_done {
                let before = c.flows.len();
                c.flows.retain(|f| f.remaining_bytes > 0.0);
                let done = (before - c.flows.len()) as f64;
                m.fct_sum += fct * done;
                m.fct_min = m.fct_min.min(fct);
                m.fct_max = m.fct_max.max(fct);
            }
        }
        retire(now, trace, fabric, &mut active, &mut meta, &mut outcomes, &mut makespan);
    }

    Ok(SimOutput {
        scheduler: name,
        coflows: outcomes.into_iter().flatten().collect(),
        decisions,
        makespan_s: makespan,
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

/// Move coflows without unfinished flows to the outcomes.
fn retire(
    now: f64,
    trace: &Trace,
    fabric: &Fabric,
    active: &mut Vec<CoflowState>,
    meta: &mut Vec<Meta>,
    outcomes: &mut [Option<CoflowOutcome>],
    makespan: &mut f64,
) {
    if active.iter().all(|c| !c.flows.is_empty()) {
        return;
    }
    let mut keep = 0;
    for i in 0..active.len() {
        if active[i].flows.is_empty() {
            let m = &meta[i];
            let c = &trace.coflows[m.trace_index];
            let cct = now - c.arrival_s;
            let deadline_s = c.deadline_s.map(|d| c.arrival_s + d);
            let n = c.flows.len().max(1) as f64;
            outcomes[m.trace_index] = Some(CoflowOutcome {
                id: c.id,
                arrival_s: c.arrival_s,
                finish_s: now,
                cct_s: cct,
                isolated_cct_s: c.isolated_cct_s(fabric),
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
            *makespan = makespan.max(now);
        } else {
            active.swap(keep, i);
            meta.swap(keep, i);
            keep += 1;
        }
    }
    active.truncate(keep);
    meta.truncate(keep);
}

/// The invariant every policy promises: no port above capacity, no negative or NaN rate.
fn check_rates(
    name: &str,
    now: f64,
    fabric: &Fabric,
    active: &[CoflowState],
    rates: &Rates,
    up: &mut [f64],
    down: &mut [f64],
) -> Result<(), SimError> {
    up.fill(0.0);
    down.fill(0.0);
    for (c, r) in active.iter().zip(&rates.per_coflow) {
        for (f, &rate) in c.flows.iter().zip(r) {
            if !(rate >= 0.0 && rate.is_finite()) {
                return Err(SimError::BadRate {
                    scheduler: name.to_string(),
                    time_s: now,
                    rate,
                });
            }
            up[f.src as usize] += rate;
            down[f.dst as usize] += rate;
        }
    }
    for (dir, loads, caps) in [
        ("uplink", &*up, &fabric.up_bytes_per_s),
        ("downlink", &*down, &fabric.down_bytes_per_s),
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

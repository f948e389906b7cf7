//! The event loop. Cost per event is proportional to the active flows: one scheduler decision,
//! one pass to find the next completion, one pass to advance bytes and retire finished flows.

use std::collections::BinaryHeap;
use std::time::Instant;

use coflowkit_model::{Fabric, Trace};
use coflowkit_sched::{
    ClockOptions, CoflowState, DecisionClock, Event, FlowCompletion, FlowState, Rates, Scheduler,
    Snapshot, Step,
};
use thiserror::Error;

use crate::dag::DagBook;
pub use crate::dag::Dependencies;
use crate::outcome::SimOutput;
use crate::pair_world;
use crate::world::{same_time, Meta, World};

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
    #[error("dependencies: {0}")]
    Dag(#[from] coflowkit_sched::DagError),
    #[error("scheduler `{scheduler}` stalled at t={time_s}s: {flows} flows left, none has a rate, and nothing is due to happen")]
    Stalled {
        scheduler: String,
        time_s: f64,
        flows: usize,
    },
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
    /// For policies that redistribute freed bandwidth between decisions: also take a full
    /// decision at a flow completion once this many seconds passed since the last one, so
    /// rates get re-planned (MADD) and not only topped up. None = only on coflow events.
    #[serde(default)]
    pub refresh_s: Option<f64>,
    /// What `Coflow::parents` mean: finishes-before (default; pipelined stages, a child runs
    /// beside its parents) or starts-after (barriers: a child arrives when its last parent
    /// finishes). See docs/choices.md.
    #[serde(default)]
    pub dependencies: Dependencies,
    /// Keep state per flow even for policies that rate flows by port pair (fair, wss), which
    /// otherwise run in the faster pair world: the reference the pair world is checked
    /// against. Same results up to float rounding.
    #[serde(default)]
    pub per_flow: bool,
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
    let mut clock = DecisionClock::new(
        sched,
        ClockOptions {
            flow_quantum_s: opts.flow_quantum_s,
            refresh_s: opts.refresh_s,
        },
    );

    // Coflows in arrival order (ties keep trace order).
    let mut order: Vec<usize> = (0..trace.coflows.len()).collect();
    order.sort_by(|&a, &b| {
        trace.coflows[a]
            .arrival_s
            .total_cmp(&trace.coflows[b].arrival_s)
    });

    let mut dags = DagBook::new(trace, &order, opts.dependencies)?;
    // Pair-rated policies keep state per pair (the clock offers their rater when they decide
    // on every event), unless something needs per-flow timing: dependencies.
    if dags.is_none() && !opts.per_flow {
        if let Some(rater) = clock.pair_rater(sched) {
            return pair_world::simulate(trace, fabric, &order, name, rater, clock, started);
        }
    }

    let mut w = World {
        trace,
        fabric,
        active: Vec::new(),
        meta: Vec::new(),
        rates: Rates::default(),
        synced_at: 0.0,
        due: BinaryHeap::new(),
        scan: clock.flow_completion() == FlowCompletion::Recompute && opts.flow_quantum_s == 0.0,
        due_list: Vec::new(),
        due_valid: 0,
        due_min: f64::INFINITY,
        outcomes: vec![None; trace.coflows.len()],
        makespan: 0.0,
    };
    let mut next = 0usize;
    let mut now = 0.0f64;
    let mut up_load = vec![0.0; fabric.ports()];
    let mut down_load = vec![0.0; fabric.ports()];

    loop {
        // A decision point: bring state up to date, admit arrivals, decide.
        w.sync(now);
        // Starts-after: children whose last parent just finished arrive now.
        let mut released = match dags.as_mut() {
            Some(d) => {
                if w.retire(now) {
                    d.refresh(trace, &w.outcomes, &mut w.active);
                }
                d.release(now, &w.outcomes)
            }
            None => Vec::new(),
        };
        loop {
            let (ti, arrival_s) = if let Some(ti) = released.pop() {
                (ti, now)
            } else if next < order.len() && trace.coflows[order[next]].arrival_s <= now {
                let ti = order[next];
                next += 1;
                if dags.as_mut().is_some_and(|d| d.hold(ti, &w.outcomes)) {
                    continue;
                }
                (ti, trace.coflows[ti].arrival_s)
            } else {
                break;
            };
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
            w.meta.push(Meta::new(ti, flows.len(), c.flows.len()));
            w.active.push(CoflowState {
                id: c.id,
                arrival_s,
                deadline_s: c.deadline_s.map(|d| c.arrival_s + d),
                weight: c.weight,
                total_flows: c.flows.len(),
                sent_bytes: 0.0,
                max_flow_sent_bytes: 0.0,
                flows,
                dag: dags.as_mut().map(|d| d.admit(ti)),
            });
        }
        // Coflows that arrived as others finish: `retire` moves rates along with coflows.
        w.rates.per_coflow.resize_with(w.active.len(), Vec::new);
        if w.retire(now) {
            if let Some(d) = dags.as_mut() {
                d.refresh(trace, &w.outcomes, &mut w.active);
            }
        }
        if w.active.is_empty() {
            match order.get(next) {
                Some(&ti) => {
                    now = trace.coflows[ti].arrival_s;
                    continue;
                }
                None => break,
            }
        }
        clock.decide(
            sched,
            &Snapshot {
                now_s: now,
                fabric,
                coflows: &w.active,
            },
            &mut w.rates,
        );
        w.schedule_completions(now, &name, &mut up_load, &mut down_load)?;
        clock.loads(fabric, &up_load, &down_load);

        // Run until the clock calls for the next decision.
        loop {
            let next_arrival = order.get(next).map(|&ti| trace.coflows[ti].arrival_s);
            let next_due = w.next_due();
            let wake = clock.wake_at_s();
            let t_other = next_arrival
                .unwrap_or(f64::INFINITY)
                .min(wake.unwrap_or(f64::INFINITY));
            match next_due {
                Some(t) if t <= t_other => {
                    let horizon = same_time(t);
                    let coflow_done = w.complete_due(t, horizon, &mut clock);
                    now = t;
                    // Nothing left running: decide again rather than idle (or stall) until
                    // the next arrival.
                    let event = if coflow_done {
                        Event::CoflowEnd
                    } else if w.nothing_running() {
                        Event::Idle
                    } else {
                        Event::FlowEnd
                    };
                    match clock.on(now, event) {
                        Step::Decide => break,
                        Step::HandOn => {
                            if !w.hand_on(now, sched, &mut clock) {
                                break;
                            }
                        }
                        Step::Wait => {}
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
                    // An arrival or a wake-up: both call for a full decision.
                    break;
                }
            }
        }
    }
    if let Some(d) = &dags {
        d.restate_released(&mut w.outcomes);
    }
    Ok(SimOutput {
        scheduler: name,
        coflows: w.outcomes.into_iter().flatten().collect(),
        decisions: clock.counts().decisions,
        redistributions: clock.counts().hand_ons,
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

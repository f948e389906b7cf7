//! The event loop, in three named phases per decision: admit (bring bytes up to date, retire
//! finished coflows, admit arrivals), decide (the policy, through the shared decision clock),
//! advance (flow completions, handed on or waited out as the clock says, until the next
//! decision). Cost per decision is proportional to the active flows.

use std::collections::BinaryHeap;
use std::time::Instant;

use coflowkit_model::{Fabric, Trace};
use coflowkit_sched::{
    ClockOptions, CoflowState, DecisionClock, Event, FlowCompletion, FlowState, Rates, Scheduler,
    Snapshot, Step,
};

use crate::dag::DagBook;
pub use crate::dag::Dependencies;
pub use crate::error::SimError;
use crate::outcome::SimOutput;
use crate::pair_world;
use crate::world::{same_time, Meta, World};

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
    /// finishes and its compute time, `Coflow::compute_s`, has passed). See docs/choices.md.
    #[serde(default)]
    pub dependencies: Dependencies,
    /// Keep state per flow even for policies that rate flows by port pair (fair, wss), which
    /// otherwise run in the faster pair world: the reference the pair world is checked
    /// against. Same results up to float rounding.
    #[serde(default)]
    pub per_flow: bool,
    /// The policies see no DAGs: every coflow is its own entity (`CoflowState::dag` is
    /// `None`), while starts-after still holds children for their parents and compute. An
    /// ablation: Aalo without its DAG rule on the same replay.
    #[serde(default)]
    pub hide_dags: bool,
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
    let clock = DecisionClock::new(
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

    let dags = DagBook::new(trace, &order, opts.dependencies, opts.hide_dags)?;
    // Pair-rated policies keep state per pair (the clock offers their rater when they decide
    // on every event), unless something needs per-flow timing: dependencies.
    if dags.is_none() && !opts.per_flow {
        if let Some(rater) = clock.pair_rater(sched) {
            return pair_world::simulate(trace, fabric, &order, name, rater, clock, started);
        }
    }

    let w = World {
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
    let mut run = Run {
        trace,
        fabric,
        name,
        order,
        next: 0,
        now: 0.0,
        dags,
        w,
        clock,
        up_load: vec![0.0; fabric.ports()],
        down_load: vec![0.0; fabric.ports()],
    };
    // The phases, as CoflowSim names them: admission, schedule, departures.
    loop {
        run.admit();
        if run.w.active.is_empty() {
            let next_arrival = (run.order.get(run.next)).map(|&ti| trace.coflows[ti].arrival_s);
            let next_release = run.dags.as_ref().and_then(DagBook::next_release_s);
            match (next_arrival, next_release) {
                (None, None) => break,
                (a, r) => {
                    run.now = a.unwrap_or(f64::INFINITY).min(r.unwrap_or(f64::INFINITY));
                    continue;
                }
            }
        }
        run.decide(sched)?;
        run.advance(sched)?;
    }
    let Run {
        name,
        dags,
        mut w,
        clock,
        ..
    } = run;
    if let Some(d) = &dags {
        d.restate_released(&mut w.outcomes);
    }
    let counts = clock.counts();
    Ok(SimOutput {
        scheduler: name,
        coflows: w.outcomes.into_iter().flatten().collect(),
        decisions: counts.decisions,
        redistributions: counts.hand_ons,
        makespan_s: w.makespan,
        wall_s: started.elapsed().as_secs_f64(),
    })
}

/// One replay in the per-flow world, between its phases.
struct Run<'a> {
    trace: &'a Trace,
    fabric: &'a Fabric,
    name: String,
    /// Coflows in arrival order, and the next to arrive.
    order: Vec<usize>,
    next: usize,
    now: f64,
    dags: Option<DagBook>,
    w: World<'a>,
    /// When to decide; it also counts decisions and hand-ons (the run's metrics).
    clock: DecisionClock,
    up_load: Vec<f64>,
    down_load: Vec<f64>,
}

impl Run<'_> {
    /// Admission: bring state up to `now`, retire finished coflows, and admit arrivals (and,
    /// starts-after, children whose last parent just finished).
    fn admit(&mut self) {
        let (trace, now) = (self.trace, self.now);
        let w = &mut self.w;
        w.sync(now);
        let mut released = match self.dags.as_mut() {
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
            } else if self.next < self.order.len()
                && trace.coflows[self.order[self.next]].arrival_s <= now
            {
                let ti = self.order[self.next];
                self.next += 1;
                if (self.dags.as_mut()).is_some_and(|d| d.hold(ti, now, &w.outcomes)) {
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
                dag: self.dags.as_mut().and_then(|d| d.admit(trace, ti)),
            });
        }
        // Coflows that arrived as others finish: `retire` moves rates along with coflows.
        w.rates.per_coflow.resize_with(w.active.len(), Vec::new);
        if w.retire(now) {
            if let Some(d) = self.dags.as_mut() {
                d.refresh(trace, &w.outcomes, &mut w.active);
            }
        }
    }

    /// Schedule: a full decision at `now`, its completions predicted and checked against
    /// capacity, its port loads told to the clock.
    fn decide(&mut self, sched: &mut dyn Scheduler) -> Result<(), SimError> {
        let w = &mut self.w;
        self.clock.decide(
            sched,
            &Snapshot {
                now_s: self.now,
                fabric: self.fabric,
                coflows: &w.active,
            },
            &mut w.rates,
        );
        (w).schedule_completions(self.now, &self.name, &mut self.up_load, &mut self.down_load)?;
        self.clock
            .loads(self.fabric, &self.up_load, &self.down_load);
        Ok(())
    }

    /// Departures: run flow completions (handing bandwidth on where the clock says so) until
    /// the clock calls for the next decision, or an arrival or wake-up does.
    fn advance(&mut self, sched: &mut dyn Scheduler) -> Result<(), SimError> {
        let (trace, w, clock) = (self.trace, &mut self.w, &mut self.clock);
        loop {
            let next_arrival = (self.order.get(self.next)).map(|&ti| trace.coflows[ti].arrival_s);
            let next_release = self.dags.as_ref().and_then(DagBook::next_release_s);
            let next_due = w.next_due();
            let t_other = next_arrival
                .unwrap_or(f64::INFINITY)
                .min(next_release.unwrap_or(f64::INFINITY))
                .min(clock.wake_at_s().unwrap_or(f64::INFINITY));
            match next_due {
                Some(t) if t <= t_other => {
                    let coflow_done = w.complete_due(t, same_time(t), clock);
                    self.now = t;
                    // Nothing left running: decide again rather than idle (or stall) until
                    // the next arrival.
                    let event = if coflow_done {
                        Event::CoflowEnd
                    } else if w.nothing_running() {
                        Event::Idle
                    } else {
                        Event::FlowEnd
                    };
                    // Nothing running: the policy may rate the waiting flows as a decision
                    // would, exactly and at a hand-on's cost (an incast served one flow at a
                    // time would otherwise cost a full decision per flow).
                    if event == Event::Idle && w.idle_hand_on(t, sched, clock) {
                        continue;
                    }
                    match clock.on(t, event) {
                        Step::Decide => return Ok(()),
                        Step::HandOn => {
                            if !w.hand_on(t, sched, clock) {
                                return Ok(());
                            }
                        }
                        Step::Wait => {}
                    }
                }
                _ => {
                    if !t_other.is_finite() {
                        return Err(SimError::Stalled {
                            scheduler: self.name.clone(),
                            time_s: self.now,
                            flows: w.active.iter().map(|c| c.flows.len()).sum(),
                        });
                    }
                    // An arrival or a wake-up: both call for a full decision.
                    self.now = t_other;
                    return Ok(());
                }
            }
        }
    }
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

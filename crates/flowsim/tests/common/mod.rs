//! Toy workloads for the oracle tests: unit-capacity ports, sizes in units, times in units.
#![allow(dead_code)]

pub mod random;
pub mod toys;

use coflowkit_flowsim::{simulate, SimOutput};
use coflowkit_model::{Coflow, Fabric, Flow, Trace};
use coflowkit_sched::{
    build, CoflowState, Rates, SchedOptions, Scheduler, SchedulerKind, Snapshot,
};

/// A coflow from `(src, dst, size)` triples.
pub fn coflow(id: u64, arrival: f64, flows: &[(u32, u32, f64)]) -> Coflow {
    Coflow::new(
        id,
        arrival,
        flows
            .iter()
            .map(|&(src, dst, bytes)| Flow { src, dst, bytes })
            .collect(),
    )
}

/// A trace on `ports` unit-capacity ports.
pub fn toy(ports: u32, coflows: Vec<Coflow>) -> (Trace, Fabric) {
    (
        Trace { ports, coflows },
        Fabric::uniform(ports as usize, 1.0),
    )
}

pub fn run_with(trace: &(Trace, Fabric), sched: &mut dyn Scheduler) -> SimOutput {
    simulate(&trace.0, &trace.1, sched).expect("simulation failed")
}

pub fn run(trace: &(Trace, Fabric), kind: SchedulerKind, opts: &SchedOptions) -> SimOutput {
    run_with(trace, build(kind, opts).as_mut())
}

/// CCTs in trace order.
pub fn ccts(out: &SimOutput) -> Vec<f64> {
    out.coflows.iter().map(|c| c.cct_s).collect()
}

pub fn avg_cct(out: &SimOutput) -> f64 {
    ccts(out).iter().sum::<f64>() / out.coflows.len() as f64
}

/// Mean flow completion time over all flows.
pub fn avg_fct(out: &SimOutput) -> f64 {
    let n: usize = out.coflows.iter().map(|c| c.flows).sum();
    out.coflows
        .iter()
        .map(|c| c.avg_fct_s * c.flows as f64)
        .sum::<f64>()
        / n as f64
}

#[track_caller]
pub fn assert_close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-9, "got {got:?}, want {want:?}");
    }
}

#[track_caller]
pub fn assert_near(got: f64, want: f64) {
    assert!((got - want).abs() < 1e-9, "got {got}, want {want}");
}

/// One decision of `sched` at time 0 on a hand-built state.
pub fn decide(sched: &mut dyn Scheduler, fabric: &Fabric, coflows: &[CoflowState]) -> Rates {
    let mut rates = Rates::default();
    rates.reset(coflows);
    sched.allocate(
        &Snapshot {
            now_s: 0.0,
            fabric,
            coflows,
        },
        &mut rates,
    );
    rates
}

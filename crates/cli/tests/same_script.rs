//! One event script, two worlds: the flow-level simulator and the coordinator's sans-IO state
//! (driven here by an exact fluid model of its daemons, no sockets) replay the same coflows
//! under the same policy and its default reaction to a flow's end, and finish every coflow at
//! the same time. Both drive the one decision clock of `coflowkit-sched`, so a flow's end hands
//! its bandwidth on in both (and fair decides in full in both).

use coflowkit_flowsim::simulate;
use coflowkit_model::{Coflow, Fabric, Flow, Trace};
use coflowkit_runtime::coordinator::state::State;
use coflowkit_runtime::proto::FlowInfo;
use coflowkit_sched::{build, SchedOptions, SchedulerKind};

const NIC: f64 = 1e8;

/// A coflow of the script: its arrival and its flows as (src, dst, bytes).
type Scripted = (f64, Vec<(u32, u32, u64)>);

/// Coflows with blocked flows, early finishers, overlaps.
fn script() -> Vec<Scripted> {
    vec![
        (0.0, vec![(0, 1, 100_000_000), (2, 3, 200_000_000)]),
        (0.0, vec![(0, 4, 300_000_000), (2, 5, 300_000_000)]),
        (
            0.5,
            vec![(1, 2, 50_000_000), (3, 2, 150_000_000), (0, 2, 80_000_000)],
        ),
        (1.25, vec![(4, 0, 400_000_000)]),
        (
            2.0,
            vec![(5, 1, 120_000_000), (5, 3, 60_000_000), (1, 3, 90_000_000)],
        ),
    ]
}

fn trace(script: &[Scripted]) -> Trace {
    Trace {
        ports: 6,
        coflows: (script.iter().enumerate())
            .map(|(i, (at, flows))| {
                let flows = (flows.iter())
                    .map(|&(src, dst, bytes)| Flow {
                        src,
                        dst,
                        bytes: bytes as f64,
                    })
                    .collect();
                Coflow::new(i as u64 + 1, *at, flows)
            })
            .collect(),
    }
}

/// A flow as the fluid model of the daemons moves it.
struct Running {
    port: usize,
    id: u64,
    coflow: usize,
    size: f64,
    sent: f64,
    rate: f64,
    done: bool,
}

/// Completions this close (relative) are one event, as in the simulator.
fn same_time(t: f64) -> f64 {
    t + 1e-9 * t.abs().max(1.0)
}

/// The coordinator's CCTs: daemons register, coflows register at their arrival and start all
/// their flows, every flow reports its bytes before each step and its end when it ends.
fn coordinator_ccts(script: &[Scripted], kind: SchedulerKind) -> Vec<f64> {
    let mut s = State::new(1);
    let addrs: Vec<String> = (0..6).map(|p| format!("h{p}:1")).collect();
    for a in &addrs {
        let p = s.register_daemon(0.0, a, NIC, &[], &[]);
        s.set_connected(p, true);
    }
    let mut sched = build(kind, &SchedOptions::default());
    let mut flows: Vec<Running> = Vec::new();
    let mut left = vec![0usize; script.len()];
    let mut ccts = vec![f64::NAN; script.len()];
    let (mut now, mut next, mut wake, mut timed_out) = (0.0f64, 0usize, None::<f64>, false);
    loop {
        while next < script.len() && script[next].0 <= now {
            let (_, fl) = &script[next];
            let id = s
                .register_coflow(now, String::new(), fl.len() as u32, None, 1.0, vec![])
                .unwrap();
            for &(src, dst, bytes) in fl {
                let fid = flows.len() as u64;
                let info = FlowInfo {
                    flow: fid,
                    coflow: id,
                    data_id: String::new(),
                    dst: addrs[dst as usize].clone(),
                    size_bytes: bytes,
                    sent_bytes: 0,
                    size_pending: false,
                };
                s.start_flow(now, src as usize, &info);
                flows.push(Running {
                    port: src as usize,
                    id: fid,
                    coflow: next,
                    size: bytes as f64,
                    sent: 0.0,
                    rate: 0.0,
                    done: false,
                });
            }
            left[next] = fl.len();
            next += 1;
        }
        for f in flows.iter().filter(|f| !f.done) {
            s.progress(f.port, f.id, f.sent as u64, false, false);
        }
        if let Some(round) = s.step(sched.as_mut(), now, timed_out) {
            for (port, table) in round.updates.iter().enumerate() {
                for r in &table.rates {
                    let f = (flows.iter_mut())
                        .find(|f| f.port == port && f.id == r.flow)
                        .unwrap();
                    f.rate = r.bytes_per_s;
                }
            }
            wake = round.wake_at_s;
        }
        let next_end = (flows.iter())
            .filter(|f| !f.done && f.rate > 0.0)
            .map(|f| now + (f.size - f.sent) / f.rate)
            .fold(f64::INFINITY, f64::min);
        let next_arrival = script.get(next).map_or(f64::INFINITY, |c| c.0);
        let next_wake = wake.filter(|&w| w > now).unwrap_or(f64::INFINITY);
        let t = next_end.min(next_arrival).min(next_wake);
        if !t.is_finite() {
            if flows.iter().all(|f| f.done) {
                break;
            }
            // Nothing runs and nothing is due: the coordinator's safety-net tick.
            timed_out = true;
            continue;
        }
        for f in flows.iter_mut().filter(|f| !f.done) {
            f.sent = (f.sent + f.rate * (t - now)).min(f.size);
        }
        timed_out = next_end > t && t >= next_wake;
        if next_end <= t {
            let horizon = same_time(next_end);
            for f in flows.iter_mut().filter(|f| !f.done && f.rate > 0.0) {
                // Bytes were brought up to `t` above: what is left ends by the horizon?
                if t + (f.size - f.sent) / f.rate <= horizon || f.size - f.sent <= f.size * 1e-9 {
                    f.done = true;
                    f.sent = f.size;
                    s.progress(f.port, f.id, f.size as u64, true, false);
                    left[f.coflow] -= 1;
                    if left[f.coflow] == 0 {
                        ccts[f.coflow] = t - script[f.coflow].0;
                    }
                }
            }
        }
        now = t;
    }
    ccts
}

#[test]
fn simulator_and_coordinator_finish_every_coflow_at_the_same_time() {
    let script = script();
    let trace = trace(&script);
    let fabric = Fabric::uniform(6, NIC);
    for kind in [
        SchedulerKind::Sebf,
        SchedulerKind::Scf,
        SchedulerKind::Fifo,
        SchedulerKind::Fair,
        SchedulerKind::Sincronia,
        SchedulerKind::Varys,
        SchedulerKind::Ncf,
        SchedulerKind::Tcf,
        SchedulerKind::Wss,
        SchedulerKind::Pfp,
        SchedulerKind::Aalo,
        SchedulerKind::Saath,
    ] {
        let sim = simulate(
            &trace,
            &fabric,
            build(kind, &SchedOptions::default()).as_mut(),
        )
        .unwrap_or_else(|e| panic!("{kind}: {e}"));
        let sim: Vec<f64> = sim.coflows.iter().map(|c| c.cct_s).collect();
        let real = coordinator_ccts(&script, kind);
        assert_eq!(sim.len(), real.len());
        assert!(
            real.iter().all(|c| c.is_finite() && *c > 0.0),
            "{kind}: {real:?}"
        );
        for (i, (a, b)) in sim.iter().zip(&real).enumerate() {
            assert!(
                (a - b).abs() <= 1e-6 * a.abs().max(1.0),
                "{kind}: coflow {i}: simulator {a} s, coordinator {b} s (all: {sim:?} vs {real:?})"
            );
        }
    }
}

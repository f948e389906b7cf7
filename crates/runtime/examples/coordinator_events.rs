//! The coordinator's brain under a stream of flow ends, without sockets: how many full
//! scheduling rounds it takes and how many rate decisions (full rounds and hand-ons of freed
//! bandwidth) it makes per second of CPU, at 1,000 and 10,000 active flows.
//!
//! ```text
//! cargo run --release -p coflowkit-runtime --example coordinator_events
//! ```
//!
//! The workload: 100 daemons at 1 Gbit/s, coflows of 10 to 100 flows between random daemons
//! (seeded), sizes 1 MB to 1 GB. After a first round, flows end one event at a time (in a seeded
//! random order, each with a progress report of its bytes first), and after each event the
//! coordinator does what its brain loop does for that event; `events` of them per run.

use std::time::Instant;

use coflowkit_runtime::coordinator::state::State;
use coflowkit_runtime::proto::FlowInfo;
use coflowkit_sched::{build, SchedOptions, SchedulerKind};

struct Run {
    rounds: u64,
    /// Hand-ons of freed bandwidth without a full round.
    hand_ons: u64,
    events: usize,
    wall_s: f64,
}

fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

fn run(kind: SchedulerKind, flows: usize, events: usize) -> Run {
    let hosts = 100;
    let mut s = State::new(1);
    let addrs: Vec<String> = (0..hosts).map(|h| format!("10.0.0.{h}:7401")).collect();
    for a in &addrs {
        let p = s.register_daemon(0.0, a, 125e6, &[], &[]);
        s.set_connected(p, true);
    }
    let mut next = xorshift(0x2545_F491_4F6C_DD1D);
    let mut made = 0;
    let mut started: Vec<(usize, u64, u64)> = Vec::new();
    while made < flows {
        let width = (10 + next() % 91) as usize;
        let c = s
            .register_coflow(0.0, String::new(), 0, None, 1.0, vec![])
            .expect("no parents");
        for j in 0..width.min(flows - made) {
            let src = (next() % hosts as u64) as usize;
            let dst = &addrs[(next() % hosts as u64) as usize];
            let size = 1_000_000 * (1 + next() % 1000);
            let flow = (made + j) as u64;
            s.start_flow(
                0.0,
                src,
                &FlowInfo {
                    flow,
                    coflow: c,
                    data_id: String::new(),
                    dst: dst.clone(),
                    size_bytes: size,
                    sent_bytes: 0,
                    size_pending: false,
                },
            );
            started.push((src, flow, size));
        }
        made += width.min(flows - made);
    }
    // Flows end in a seeded random order.
    for i in (1..started.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        started.swap(i, j);
    }
    let mut sched = build(kind, &SchedOptions::default());
    let _ = s.decide(sched.as_mut(), 0.0);
    let (rounds0, hand_ons0) = (s.rounds(), s.hand_ons());
    let events = events.min(started.len());
    let t = Instant::now();
    for (i, &(src, flow, size)) in started.iter().take(events).enumerate() {
        let now = 0.001 * (i + 1) as f64;
        s.progress(src, flow, size / 2, false, false);
        s.progress(src, flow, size, true, false);
        // The brain loop's step (coordinator/mod.rs): what the decision clock says.
        let _ = s.step(sched.as_mut(), now, false);
    }
    Run {
        rounds: s.rounds() - rounds0,
        hand_ons: s.hand_ons() - hand_ons0,
        events,
        wall_s: t.elapsed().as_secs_f64(),
    }
}

fn main() {
    println!(
        "{:<8} {:>7} {:>7} {:>7} {:>8} {:>10} {:>12} {:>12}",
        "policy", "flows", "events", "rounds", "hand-ons", "wall s", "events/s", "decisions/s"
    );
    for kind in [
        SchedulerKind::Varys,
        SchedulerKind::Aalo,
        SchedulerKind::Sebf,
        SchedulerKind::Fair,
    ] {
        for (flows, events) in [(1000usize, 1000usize), (10_000, 1000)] {
            let r = run(kind, flows, events);
            println!(
                "{:<8} {:>7} {:>7} {:>7} {:>8} {:>10.3} {:>12.0} {:>12.0}",
                kind.name(),
                flows,
                r.events,
                r.rounds,
                r.hand_ons,
                r.wall_s,
                r.events as f64 / r.wall_s,
                (r.rounds + r.hand_ons) as f64 / r.wall_s
            );
        }
    }
}

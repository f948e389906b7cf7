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
//! random order among the flows the coordinator serves, each with a progress report of its
//! bytes first), and after each event the coordinator does what its brain loop does for that
//! event; `events` of them per run. Only the coordinator's calls are timed. `decisions/s`
//! counts full rounds and hand-ons that changed rates.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use coflowkit_runtime::coordinator::state::State;
use coflowkit_runtime::proto::{FlowInfo, RateUpdate};
use coflowkit_sched::{build, SchedOptions, SchedulerKind};

struct Run {
    rounds: u64,
    /// Hand-ons of freed bandwidth without a full round.
    hand_ons: u64,
    events: usize,
    wall_s: f64,
}

/// The rates the daemons were told (a table per daemon port, full when sent).
fn learn(rate: &mut HashMap<(usize, u64), f64>, updates: &[RateUpdate]) {
    for (port, t) in updates.iter().enumerate() {
        for r in &t.rates {
            rate.insert((port, r.flow), r.bytes_per_s);
        }
    }
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
    // Flows end in a seeded random order among those being served (a flow without a rate
    // cannot end), as the coordinator's rate tables say; only the coordinator's own work is
    // timed.
    for i in (1..started.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        started.swap(i, j);
    }
    let mut sched = build(kind, &SchedOptions::default());
    let mut rate: HashMap<(usize, u64), f64> = HashMap::new();
    let (_, updates) = s.decide(sched.as_mut(), 0.0);
    learn(&mut rate, &updates);
    let (rounds0, hand_ons0) = (s.rounds(), s.hand_ons());
    let events = events.min(started.len());
    let mut done = vec![false; started.len()];
    let mut wall = Duration::ZERO;
    for i in 0..events {
        let served = |j: usize| {
            rate.get(&(started[j].0, started[j].1))
                .is_some_and(|&r| r > 0.0)
        };
        let j = (0..started.len())
            .find(|&j| !done[j] && served(j))
            .or_else(|| (0..started.len()).find(|&j| !done[j]))
            .expect("events <= flows");
        done[j] = true;
        let (src, flow, size) = started[j];
        let now = 0.001 * (i + 1) as f64;
        let t = Instant::now();
        s.progress(src, flow, size / 2, false, false);
        s.progress(src, flow, size, true, false);
        // The brain loop's step (coordinator/mod.rs): what the decision clock says.
        let round = s.step(sched.as_mut(), now, false);
        wall += t.elapsed();
        if let Some(round) = round {
            learn(&mut rate, &round.updates);
        }
    }
    Run {
        rounds: s.rounds() - rounds0,
        hand_ons: s.hand_ons() - hand_ons0,
        events,
        wall_s: wall.as_secs_f64(),
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

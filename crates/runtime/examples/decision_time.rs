//! Coordinator decision time per scheduling round for 100, 1000 and 10000 active flows: the
//! time to build the snapshot, run the shared scheduler and produce every daemon's rate table.
//!
//! ```text
//! cargo run --release -p coflowkit-runtime --example decision_time
//! ```
//!
//! The workload: 100 daemons at 1 Gbit/s, coflows of 10 to 100 flows between random daemons
//! (seeded), sizes 1 MB to 1 GB.

use std::time::Instant;

use coflowkit_runtime::coordinator::state::State;
use coflowkit_runtime::proto::FlowInfo;
use coflowkit_sched::{build, SchedOptions, SchedulerKind};

fn main() {
    let hosts = 100;
    println!("{:<8} {:>8} {:>14}", "policy", "flows", "ms per round");
    for kind in [
        SchedulerKind::Varys,
        SchedulerKind::Aalo,
        SchedulerKind::Fair,
    ] {
        for flows in [100usize, 1000, 10_000] {
            let mut s = State::new(1);
            let addrs: Vec<String> = (0..hosts).map(|h| format!("10.0.0.{h}:7401")).collect();
            for a in &addrs {
                let p = s.register_daemon(0.0, a, 125e6, &[], &[]);
                s.set_connected(p, true);
            }
            let mut x: u64 = 0x2545_F491_4F6C_DD1D; // xorshift, fixed seed
            let mut next = move || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
            let mut made = 0;
            while made < flows {
                let width = (10 + next() % 91) as usize;
                let c = s
                    .register_coflow(0.0, String::new(), 0, None, 1.0, vec![])
                    .expect("no parents");
                for j in 0..width.min(flows - made) {
                    let src = (next() % hosts as u64) as usize;
                    let dst = &addrs[(next() % hosts as u64) as usize];
                    let size = 1_000_000 * (1 + next() % 1000);
                    s.start_flow(
                        0.0,
                        src,
                        &FlowInfo {
                            flow: (made + j) as u64,
                            coflow: c,
                            data_id: String::new(),
                            dst: dst.clone(),
                            size_bytes: size,
                            sent_bytes: 0,
                            size_pending: false,
                        },
                    );
                }
                made += width.min(flows - made);
            }
            let mut sched = build(kind, &SchedOptions::default());
            let rounds = if flows >= 10_000 { 20 } else { 100 };
            let t = Instant::now();
            for r in 0..rounds {
                let _ = s.decide(sched.as_mut(), r as f64 * 0.01);
            }
            let ms = t.elapsed().as_secs_f64() * 1e3 / rounds as f64;
            println!("{:<8} {:>8} {:>14.3}", kind.name(), flows, ms);
        }
    }
}

//! A replay registers each coflow's deadline with it (issue 18, row 13), so Varys's deadline
//! mode admits it and paces it to end by its deadline, ahead of a smaller coflow SEBF would
//! serve first. Loopback, rates paced by the daemons: no root needed.

use std::time::Duration;

use coflowkit_model::{Coflow, Flow, Trace};
use coflowkit_runtime::replay::{replay, ReplayConfig};
use coflowkit_sched::{SchedOptions, SchedulerKind};

const RATE: f64 = 1_000_000.0;

/// A (1 MB) at 0 and B (1.2 MB, deadline `deadline`) at 10 ms, both from host 0 to host 1.
fn trace(deadline: Option<f64>) -> Trace {
    let flow = |bytes: f64| Flow {
        src: 0,
        dst: 1,
        bytes,
    };
    let mut b = Coflow::new(2, 0.01, vec![flow(1_200_000.0)]);
    b.deadline_s = deadline;
    Trace {
        ports: 2,
        coflows: vec![Coflow::new(1, 0.0, vec![flow(1_000_000.0)]), b],
    }
}

fn run(trace: &Trace) -> (f64, f64) {
    let cfg = ReplayConfig {
        scheduler: SchedulerKind::Varys,
        options: SchedOptions::default(),
        nic_bytes_per_s: vec![RATE; 2],
        netns: false,
        mem_limit_bytes: 64 << 20,
        data_dir: None,
        tick: Some(Duration::from_millis(100)),
        non_clairvoyant: false,
        htb: false,
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let out = rt.block_on(replay(trace, &cfg)).unwrap();
    (out[0].cct_s, out[1].cct_s)
}

#[test]
fn varys_admits_a_deadline_coflow_and_ends_it_by_its_deadline() {
    // Without a deadline SEBF serves A (1 s alone) first: B ends at about 2.2 s.
    let (a, b) = run(&trace(None));
    assert!(b > 1.9, "B without a deadline took {b} s (A {a} s)");
    // With 1.5 s (B alone needs 1.2 s: admitted), B gets 0.8 MB/s and ends near 1.5 s; A
    // gets what is left and ends after it.
    let (a, b) = run(&trace(Some(1.5)));
    assert!(b < 1.5 * 1.15, "B with a 1.5 s deadline took {b} s");
    assert!(a > 1.3, "A took {a} s: it was not held back for B");
}

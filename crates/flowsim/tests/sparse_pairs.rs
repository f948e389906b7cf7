//! Pair tables hashed (fabrics past `dense_max_ports`, so that a large declared fabric costs
//! by the pairs used) give the results of the dense ones bit for bit, under every scheduler.
//! The layout is a process-wide setting, so this file holds a single test.

use std::path::Path;

use coflowkit_flowsim::simulate;
use coflowkit_model::trace::read_path;
use coflowkit_model::{Fabric, Trace};
use coflowkit_sched::alloc::pair_index::{set_dense_max_ports, DENSE_MAX_PORTS};
use coflowkit_sched::{build, SchedOptions, SchedulerKind};

/// The first `n` coflows of the FB trace by arrival: many flows per pair, many pairs per port.
fn fb_head(n: usize) -> Trace {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/traces/FB2010-1Hr-150-0.txt");
    let mut t = read_path(&path).unwrap();
    t.coflows.truncate(n);
    t
}

fn ccts(trace: &Trace, kind: SchedulerKind, dense_max: usize) -> Vec<(u64, u64)> {
    set_dense_max_ports(dense_max);
    let fabric = Fabric::uniform_bps(trace.ports as usize, 1e9);
    let mut s = build(kind, &SchedOptions::default());
    let out = simulate(trace, &fabric, s.as_mut()).unwrap();
    let mut v: Vec<_> = (out.coflows.iter())
        .map(|c| (c.id, c.cct_s.to_bits()))
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn hashed_pair_tables_give_the_dense_results_bit_for_bit() {
    let trace = fb_head(10);
    assert!(trace.flows() > 5_000, "{} flows", trace.flows());
    for &kind in SchedulerKind::ALL {
        let dense = ccts(&trace, kind, usize::MAX);
        let hashed = ccts(&trace, kind, 0);
        assert_eq!(dense.len(), trace.coflows.len(), "{}", kind.name());
        assert!(dense == hashed, "{}: the layouts differ", kind.name());
    }
    set_dense_max_ports(DENSE_MAX_PORTS);
}

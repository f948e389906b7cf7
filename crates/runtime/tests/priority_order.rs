//! The coordinator state's priority order (what the dashboard shows): the shared scheduler's
//! order at the last full round, as coflow ids; none for a policy that shares bandwidth.

use coflowkit_runtime::coordinator::state::State;
use coflowkit_runtime::proto::FlowInfo;
use coflowkit_sched::{build, SchedOptions, SchedulerKind};

/// Two daemons and three coflows from port 0 to port 1, arriving in the order of `sizes`.
fn state(sizes: &[u64]) -> (State, Vec<u64>) {
    let mut s = State::new(1);
    for a in ["h0:1", "h1:1"] {
        let p = s.register_daemon(0.0, a, 1e6, &[], &[]);
        s.set_connected(p, true);
    }
    let mut ids = Vec::new();
    for (i, &size) in sizes.iter().enumerate() {
        let id = (s.register_coflow(i as f64, format!("c{i}"), 1, None, 1.0, vec![])).unwrap();
        s.start_flow(
            i as f64,
            0,
            &FlowInfo {
                flow: i as u64,
                coflow: id,
                data_id: format!("d{i}"),
                dst: "h1:1".into(),
                size_bytes: size,
                sent_bytes: 0,
                size_pending: false,
            },
        );
        ids.push(id);
    }
    (s, ids)
}

#[test]
fn the_order_is_the_schedulers_at_the_last_round() {
    let sizes = [5_000_000, 1_000_000, 3_000_000];
    for (kind, want) in [
        // Smallest bottleneck first, smallest total first, arrival order.
        (SchedulerKind::Varys, [1, 2, 0]),
        (SchedulerKind::Tcf, [1, 2, 0]),
        (SchedulerKind::Fifo, [0, 1, 2]),
    ] {
        let (mut s, ids) = state(&sizes);
        assert!(s.priority_order().is_empty(), "{kind}: before any round");
        let mut sched = build(kind, &SchedOptions::default());
        s.decide(sched.as_mut(), 3.0);
        let want: Vec<u64> = want.iter().map(|&i| ids[i]).collect();
        assert_eq!(s.priority_order(), want, "{kind}");
    }
    // Fair sharing keeps no order.
    let (mut s, _) = state(&sizes);
    let mut sched = build(SchedulerKind::Fair, &SchedOptions::default());
    s.decide(sched.as_mut(), 3.0);
    assert!(s.priority_order().is_empty());
}

//! What a single flow's end triggers: redistribution of its bandwidth (the default for the
//! ordering policies), a full decision, or nothing.

mod common;

use coflowkit_sched::{FlowCompletion, SchedOptions, SchedulerKind as K};
use common::{assert_close, ccts, coflow, run, toy};

/// A = {0->1: 1, 2->3: 2} goes first (SEBF); MADD gives 0->1 rate 0.5 and backfill tops it up
/// to 1, so it ends at t=1 while A runs to t=2. B = {0->4: 3, 2->5: 3} is blocked (uplink 2
/// is A's bottleneck) and waits. At t=1 uplink 0 frees up.
fn blocked_behind_an_early_flow() -> (coflowkit_model::Trace, coflowkit_model::Fabric) {
    toy(
        6,
        vec![
            coflow(1, 0.0, &[(0, 1, 1.0), (2, 3, 2.0)]),
            coflow(2, 0.0, &[(0, 4, 3.0), (2, 5, 3.0)]),
        ],
    )
}

fn with(how: FlowCompletion) -> SchedOptions {
    let mut o = SchedOptions {
        on_flow_completion: how,
        ..Default::default()
    };
    o.varys.on_flow_completion = how;
    // No T/δ timers: they would serve B from t=2 on and blur the example.
    o.varys.starvation = None;
    o
}

#[test]
fn freed_uplink_goes_to_the_waiting_flow_at_once() {
    let t = blocked_behind_an_early_flow();
    for kind in [K::Sebf, K::Varys] {
        let out = run(&t, kind, &with(FlowCompletion::Redistribute));
        assert_close(&ccts(&out), &[2.0, 5.0]);
        // B's 0->4 ran from t=1 on the freed uplink and ends at 4; 2->5 waited for A's end
        // and ends at 5.
        assert_close(&[out.coflows[1].avg_fct_s], &[4.5]);
        let recompute = run(&t, kind, &with(FlowCompletion::Recompute));
        assert_close(&ccts(&recompute), &[2.0, 5.0]);
        assert_close(&[recompute.coflows[1].avg_fct_s], &[4.5]);
        assert!(
            out.decisions < recompute.decisions,
            "{kind}: {} vs {}",
            out.decisions,
            recompute.decisions
        );
        // Flow ends at t=1 (A's 0->1) and t=4 (B's 0->4) are handed out without a decision.
        assert_eq!(out.redistributions, 2, "{kind}");
        assert_eq!(recompute.redistributions, 0, "{kind}");
    }
}

#[test]
fn ignoring_the_flow_end_leaves_the_uplink_idle() {
    let t = blocked_behind_an_early_flow();
    let out = run(&t, K::Sebf, &with(FlowCompletion::Ignore));
    assert_close(&ccts(&out), &[2.0, 5.0]);
    assert_close(&[out.coflows[1].avg_fct_s], &[5.0]);
    assert_eq!(out.redistributions, 0);
}

//! The simulator with a measured scheduler (`sched::probe::Probe`): progress, isolation
//! guarantee and utilization over time, and the slowdown spread, on replays small enough to
//! derive by hand.

mod common;

use coflowkit_flowsim::{simulate, Summary};
use coflowkit_sched::probe::Probe;
use coflowkit_sched::{build, SchedOptions, SchedulerKind};

use common::{coflow, toy};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn two_coflows_on_one_port_pair() {
    // Unit ports. Coflows of 1 and 3 bytes from port 0 to port 1, both at 0. Per-flow fair,
    // HUG, DRF and PS-P all give 1/2 each until the first ends at 2, then the other all of
    // the link until 4. Slowdowns 2/1 and 4/3: min 4/3, max 2, mean 5/3, stdev 1/3. Progress
    // 1/2 over 0..2 then 1 over 2..4: IG mean 3/4, min 1/2. One uplink and one downlink of 4
    // links in use: utilization 1/2 throughout. A third coflow arriving at 10 (after an idle
    // gap) runs alone for 1 s: IG 1, utilization 1/2, and the gap does not count.
    let t = toy(
        2,
        vec![
            coflow(1, 0.0, &[(0, 1, 1.0)]),
            coflow(2, 0.0, &[(0, 1, 3.0)]),
            coflow(3, 10.0, &[(1, 0, 1.0)]),
        ],
    );
    for kind in [
        SchedulerKind::Fair,
        SchedulerKind::Hug,
        SchedulerKind::Drf,
        SchedulerKind::Psp,
    ] {
        let mut p = Probe::new(build(kind, &SchedOptions::default()));
        let out = simulate(&t.0, &t.1, &mut p).unwrap();
        let m = p.finish();
        let s = Summary::of(&out).slowdown;
        assert!(close(s.min, 1.0), "{kind}: {s:?}"); // coflow 3 runs alone
        assert!(close(s.max, 2.0), "{kind}: {s:?}");
        let v = [2.0, 4.0 / 3.0, 1.0];
        let mean = v.iter().sum::<f64>() / 3.0;
        let sd = (v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / 3.0).sqrt();
        assert!(close(s.avg, mean) && close(s.stdev, sd), "{kind}: {s:?}");
        assert!(close(m.measured_s, 5.0), "{kind}: {m:?}");
        assert!(
            close(m.isolation_guarantee_avg, (0.5 * 2.0 + 2.0 + 1.0) / 5.0),
            "{kind}: {m:?}"
        );
        assert!(close(m.isolation_guarantee_min, 0.5), "{kind}: {m:?}");
        assert!(close(m.utilization_avg, 0.5), "{kind}: {m:?}");
        let first = m.first.as_ref().unwrap();
        assert_eq!(first.coflows.len(), 2);
        assert!(close(first.isolation_guarantee, 0.5));
        let c2 = m.coflows.iter().find(|c| c.id == 2).unwrap();
        assert!(
            close(c2.avg_progress, 0.75) && close(c2.min_progress, 0.5),
            "{c2:?}"
        );
        assert!(close(c2.measured_s, 4.0), "{c2:?}");
    }
}

#[test]
fn hug_keeps_the_guarantee_where_per_flow_fairness_does_not() {
    // Unit ports 0..3. X: one flow 0->2 (1 byte). Y: three flows 0->1, 0->2, 0->3 (1 byte each),
    // uplink 0 its bottleneck (vector 1 there, 1/3 on each downlink). Per-flow fairness: uplink
    // 0 split 4 ways, X gets 1/4 (progress 1/4), Y 3/4 (progress 3/4). HUG: both progress 1/2
    // (P* = 1 / (1 + 1) on uplink 0): X 1/2, Y 1/6 per flow.
    let t = toy(
        4,
        vec![
            coflow(1, 0.0, &[(0, 2, 1.0)]),
            coflow(2, 0.0, &[(0, 1, 1.0), (0, 2, 1.0), (0, 3, 1.0)]),
        ],
    );
    let first = |kind| {
        let mut p = Probe::new(build(kind, &SchedOptions::default()));
        simulate(&t.0, &t.1, &mut p).unwrap();
        p.finish().first.unwrap()
    };
    let fair = first(SchedulerKind::Fair);
    assert!(close(fair.coflows[0].progress, 0.25), "{fair:?}");
    assert!(close(fair.coflows[1].progress, 0.75), "{fair:?}");
    // Uplink 0 full (1), downlinks 1/4 + 1/2 + 1/4 = 1: 2 of 8 links' capacity.
    assert!(close(fair.utilization, 2.0 / 8.0), "{fair:?}");
    let hug = first(SchedulerKind::Hug);
    for c in &hug.coflows {
        assert!(close(c.progress, 0.5), "{hug:?}");
    }
    assert!(close(hug.isolation_guarantee, 0.5));
    assert!(close(hug.utilization, 2.0 / 8.0), "{hug:?}");
}

#[test]
fn measuring_does_not_change_the_outcome() {
    let t = toy(
        3,
        vec![
            coflow(1, 0.0, &[(0, 1, 2.0), (2, 1, 1.0)]),
            coflow(2, 0.5, &[(0, 2, 3.0)]),
            coflow(3, 1.0, &[(1, 0, 1.0), (2, 0, 2.0)]),
        ],
    );
    for kind in [
        SchedulerKind::Fair,
        SchedulerKind::Hug,
        SchedulerKind::Psp,
        SchedulerKind::Varys,
    ] {
        let plain = simulate(&t.0, &t.1, build(kind, &SchedOptions::default()).as_mut()).unwrap();
        let mut p = Probe::new(build(kind, &SchedOptions::default()));
        let probed = simulate(&t.0, &t.1, &mut p).unwrap();
        for (a, b) in plain.coflows.iter().zip(&probed.coflows) {
            assert!((a.cct_s - b.cct_s).abs() < 1e-9, "{kind}: {a:?} vs {b:?}");
        }
        assert!(p.finish().decisions > 0);
    }
}

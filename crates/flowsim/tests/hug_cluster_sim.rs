//! HUG's cluster workloads (`gen::hug`, thesis Figs 7.10 and 7.11) in the simulator, against the
//! thesis' statements: per-flow fairness gives the one-flow coflow A a 1/(n+1) share of the
//! machine it shares with B's n flows, and 1/H of every link beside an all-to-all B on H
//! machines (1/(H+1) with C too), where HUG (and DRF and PS-P: every vector here is all-ones
//! on the links it uses) gives it an equal split. Every flow is one unit on unit-rate ports, so
//! a CCT is the inverse of the share the coflow held.

mod common;

use coflowkit_model::gen::hug::{host_level, network_level};
use coflowkit_model::{Fabric, Trace};
use coflowkit_sched::{SchedOptions, SchedulerKind};

use common::{ccts, run};

const MB: f64 = 1_048_576.0;

/// A trace of 1-MiB flows on ports of 1 MiB/s: sizes and times in units.
fn unit(t: Trace) -> (Trace, Fabric) {
    let f = Fabric::uniform(t.ports as usize, MB);
    (t, f)
}

#[track_caller]
fn assert_ccts(kind: SchedulerKind, got: &[f64], want: &[f64]) {
    assert!(
        got.len() == want.len() && got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-6),
        "{kind}: CCTs {got:?}, want {want:?}"
    );
}

const SHARED: [SchedulerKind; 3] = [SchedulerKind::Hug, SchedulerKind::Drf, SchedulerKind::Psp];

#[test]
fn fig_7_10_per_flow_shrinks_a_with_n_hug_keeps_half() {
    for n in [1, 2, 6, 20] {
        let t = unit(host_level(n, 1.0).unwrap());
        let nf = n as f64;
        // Machine 0's uplink carries n + 1 units and stays full: B ends at n + 1 under all.
        let fair = ccts(&run(&t, SchedulerKind::Fair, &SchedOptions::default()));
        assert_ccts(SchedulerKind::Fair, &fair, &[nf + 1.0, nf + 1.0]);
        for kind in SHARED {
            let got = ccts(&run(&t, kind, &SchedOptions::default()));
            assert_ccts(kind, &got, &[2.0, nf + 1.0]);
        }
    }
}

#[test]
fn fig_7_11_all_to_all_takes_the_fabric_under_per_flow_hug_splits_it() {
    for hosts in [4, 8, 12] {
        let h = hosts as f64;
        // A and B together (C long after): per-flow, each link has A's one flow and B's
        // H - 1, every flow 1/H; under HUG, P* = 1/2.
        let t = unit(network_level(hosts, 1.0, [0.0, 0.0, 1e6]).unwrap());
        let fair = ccts(&run(&t, SchedulerKind::Fair, &SchedOptions::default()));
        assert_ccts(SchedulerKind::Fair, &fair[..2], &[h, h]);
        for kind in SHARED {
            let got = ccts(&run(&t, kind, &SchedOptions::default()));
            assert_ccts(kind, &got[..2], &[2.0, h]);
        }
        // All three at once: per-flow gives A and C 1/(H+1) each; HUG 1/3. B's links stay
        // full: it ends at H + 1 under both.
        let t = unit(network_level(hosts, 1.0, [0.0; 3]).unwrap());
        let fair = ccts(&run(&t, SchedulerKind::Fair, &SchedOptions::default()));
        assert_ccts(SchedulerKind::Fair, &fair, &[h + 1.0, h + 1.0, h + 1.0]);
        for kind in SHARED {
            let got = ccts(&run(&t, kind, &SchedOptions::default()));
            assert_ccts(kind, &got, &[3.0, h + 1.0, 3.0]);
        }
    }
}

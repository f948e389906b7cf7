//! Sincronia (BSSI ordering + greedy rates) on single-port SRPT and the thesis' O5/O6.

mod common;

use coflowkit_sched::{SchedOptions, SchedulerKind as K};
use common::*;

#[test]
fn single_port_is_srpt_by_coflow() {
    // Three coflows on uplink 0, distinct receivers; the middle one has two flows.
    let t = toy(
        5,
        vec![
            coflow(1, 0.0, &[(0, 1, 3.0)]),
            coflow(2, 0.0, &[(0, 2, 0.5), (0, 3, 0.5)]),
            coflow(3, 0.0, &[(0, 4, 2.0)]),
        ],
    );
    let out = run(&t, K::Sincronia, &SchedOptions::default());
    assert_close(&ccts(&out), &[6.0, 1.0, 3.0]);
}

#[test]
fn single_port_preempts_for_a_smaller_arrival() {
    let t = toy(
        3,
        vec![
            coflow(1, 0.0, &[(0, 1, 4.0)]),
            coflow(2, 1.0, &[(0, 2, 1.0)]),
        ],
    );
    let out = run(&t, K::Sincronia, &SchedOptions::default());
    assert_close(&ccts(&out), &[5.0, 1.0]);
}

#[test]
fn o6_bottleneck_ordering_runs_c2_first_like_sebf() {
    // in0..in2 = 0..2, out0 = 3, out1 = 4.
    let t = toy(
        5,
        vec![
            coflow(1, 0.0, &[(0, 3, 2.0), (1, 3, 2.0)]),
            coflow(2, 0.0, &[(2, 3, 3.0), (0, 4, 1.0), (1, 4, 1.0)]),
        ],
    );
    let out = run(&t, K::Sincronia, &SchedOptions::default());
    assert_close(&ccts(&out), &[7.0, 3.0]);
    assert_near(avg_cct(&out), 5.0);
}

#[test]
fn o5_runs_c2_first_average_3() {
    // Ingress X, Y, Z = 0, 1, 2; distinct receivers.
    let t = toy(
        8,
        vec![
            coflow(1, 0.0, &[(0, 3, 1.0), (1, 4, 2.0), (2, 5, 4.0)]),
            coflow(2, 0.0, &[(0, 6, 2.0), (1, 7, 2.0)]),
        ],
    );
    let out = run(&t, K::Sincronia, &SchedOptions::default());
    assert_close(&ccts(&out), &[4.0, 2.0]);
    assert_near(avg_cct(&out), 3.0);
}

#[test]
fn weights_move_a_coflow_forward() {
    // One port: a heavy-weight large coflow goes before a light small one when
    // w/d is larger: 10/3 > 1/1.
    let mut big = coflow(1, 0.0, &[(0, 1, 3.0)]);
    big.weight = 10.0;
    let t = toy(3, vec![big, coflow(2, 0.0, &[(0, 2, 1.0)])]);
    let out = run(&t, K::Sincronia, &SchedOptions::default());
    assert_close(&ccts(&out), &[3.0, 4.0]);
}

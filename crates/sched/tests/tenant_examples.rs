//! The thesis' HUG examples (ch. 7, App. D; digest in specs/coflow.md §5.2 and O11) as exact
//! oracles: every number below is printed in the thesis, except where a comment says the
//! thesis has a slip.

use coflowkit_sched::tenant::game::{inelastic_use, reporting, true_progress};
use coflowkit_sched::tenant::{
    drf, hug, naive, psp, Allocation, HugOptions, Links, Mode, SpareRule, TenantSpec, Tenants,
};

const SIXTH: f64 = 1.0 / 6.0;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[track_caller]
fn assert_vec(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(close(*g, *w), "got {got:?}, want {want:?}");
    }
}

/// Fig 7.1's two coflows on two links.
fn fig_7_1() -> Tenants {
    Tenants::elastic(2, &[&[0.5, 1.0], &[1.0, SIXTH]]).unwrap()
}

/// App. D.2: Fig 7.1 plus C = <1, 0>.
fn app_d2() -> Tenants {
    Tenants::elastic(2, &[&[0.5, 1.0], &[1.0, SIXTH], &[1.0, 0.0]]).unwrap()
}

fn noncoop() -> HugOptions {
    HugOptions::default()
}

fn coop() -> HugOptions {
    HugOptions {
        mode: Mode::Cooperative,
        ..HugOptions::default()
    }
}

/// True progress of every tenant when `reported` was allocated `a` but `truth` holds.
fn true_progresses(reported: &Tenants, a: &Allocation, truth: &Tenants) -> Vec<f64> {
    (0..truth.len())
        .map(|k| true_progress(&reported.tenants[k], &a.consumption[k], &truth.tenants[k]))
        .collect()
}

#[test]
fn fig_7_1_psp_drf_and_hug() {
    let t = fig_7_1();
    // PS-P: half of each link each, IG 1/2, full utilization.
    let p = psp(&t);
    for k in 0..2 {
        assert_vec(&p.consumption[k], &[0.5, 0.5]);
    }
    assert!(close(p.isolation_guarantee(&t), 0.5) && close(p.utilization(&t), 1.0));
    // DRF: 2/3 each, a_A = <1/3, 2/3>, a_B = <2/3, 1/9>, 2/9 of link 2 idle.
    let d = drf(&t);
    assert_vec(&d.consumption[0], &[1.0 / 3.0, 2.0 / 3.0]);
    assert_vec(&d.consumption[1], &[2.0 / 3.0, 1.0 / 9.0]);
    assert!(close(d.isolation_guarantee(&t), 2.0 / 3.0));
    assert_vec(&d.link_use(&t), &[1.0, 7.0 / 9.0]);
    // HUG (Fig 7.7): same guarantees, B takes link 2's spare up to the cap 2/3: c_B = <2/3, 1/3>.
    let h = hug(&t, noncoop());
    assert!(close(h.p_star, 2.0 / 3.0));
    assert_vec(&h.guarantee[1], &[2.0 / 3.0, 1.0 / 9.0]);
    assert_vec(&h.consumption[0], &[1.0 / 3.0, 2.0 / 3.0]);
    assert_vec(&h.consumption[1], &[2.0 / 3.0, 1.0 / 3.0]);
    assert_vec(&h.link_use(&t), &[1.0, 1.0]);
    assert!(close(h.isolation_guarantee(&t), 2.0 / 3.0));
}

#[test]
fn fig_7_2_on_a_3x3_fabric() {
    let links = Links::fabric(3, vec![1.0; 6]).unwrap();
    let t = Tenants::new(
        links,
        &[
            TenantSpec::elastic("A", vec![0.5, 1.0, 0.0, 1.0, 0.5, 0.0]),
            TenantSpec::elastic("B", vec![1.0, SIXTH, 0.0, 0.0, 1.0, SIXTH]),
        ],
    )
    .unwrap();
    // Link loads 3/2, 7/6, 0, 1, 3/2, 1/6: P* = 2/3.
    let h = hug(&t, noncoop());
    assert!(close(h.p_star, 2.0 / 3.0));
    assert_vec(
        &h.dense_guarantee(&t, 0),
        &[1.0 / 3.0, 2.0 / 3.0, 0.0, 2.0 / 3.0, 1.0 / 3.0, 0.0],
    );
    assert_vec(
        &h.dense_guarantee(&t, 1),
        &[2.0 / 3.0, 1.0 / 9.0, 0.0, 0.0, 2.0 / 3.0, 1.0 / 9.0],
    );
    // Stage 2: B fills L2 to 1/3; alone on L4 and L6, A and B stop at the cap 2/3.
    assert_vec(&h.link_use(&t), &[1.0, 1.0, 0.0, 2.0 / 3.0, 1.0, 2.0 / 3.0]);
    // PS-P (Fig 7.3): progress 1/2 each.
    let p = psp(&t);
    assert!(close(p.progress(&t, 0), 0.5) && close(p.progress(&t, 1), 0.5));
}

/// Fig 7.5's cells: (reported A, reported B) -> allocation under `policy`, true progress.
fn payoffs(policy: impl Fn(&Tenants) -> Allocation) -> [[(f64, f64); 2]; 2] {
    let truth = fig_7_1();
    let mut out = [[(0.0, 0.0); 2]; 2];
    for (i, a_lies) in [false, true].into_iter().enumerate() {
        for (j, b_lies) in [false, true].into_iter().enumerate() {
            let mut r = truth.clone();
            if a_lies {
                r = reporting(&r, 0, vec![1.0, 1.0]).unwrap();
            }
            if b_lies {
                r = reporting(&r, 1, vec![1.0, 1.0]).unwrap();
            }
            let p = true_progresses(&r, &policy(&r), &truth);
            out[i][j] = (p[0], p[1]);
        }
    }
    out
}

#[test]
fn fig_7_5_prisoners_dilemma_under_naive_work_conservation() {
    let m = payoffs(|r| naive(r, SpareRule::HighestDemand));
    let want = [
        [(2.0 / 3.0, 2.0 / 3.0), (0.5, 0.75)],
        [(11.0 / 12.0, 0.5), (0.5, 0.5)],
    ];
    for i in 0..2 {
        for j in 0..2 {
            assert!(
                close(m[i][j].0, want[i][j].0) && close(m[i][j].1, want[i][j].1),
                "cell {i}{j}: {:?}",
                m[i][j]
            );
        }
    }
    // The allocations of Fig 7.4b and 7.4c.
    let t = fig_7_1();
    let a_lies = reporting(&t, 0, vec![1.0, 1.0]).unwrap();
    assert_vec(
        &naive(&a_lies, SpareRule::HighestDemand).consumption[0],
        &[0.5, 11.0 / 12.0],
    );
    let b_lies = reporting(&t, 1, vec![1.0, 1.0]).unwrap();
    let a = naive(&b_lies, SpareRule::HighestDemand);
    assert_vec(&a.consumption[0], &[0.25, 0.5]);
    assert_vec(&a.consumption[1], &[0.75, 0.5]);
}

#[test]
fn fig_7_5_under_hug_truth_dominates() {
    let m = payoffs(|r| hug(r, noncoop()));
    assert!(close(m[0][0].0, 2.0 / 3.0) && close(m[0][0].1, 2.0 / 3.0));
    for j in 0..2 {
        assert!(m[1][j].0 <= m[0][j].0 + 1e-12, "A gains by lying: {m:?}");
    }
    for i in 0..2 {
        assert!(m[i][1].1 <= m[i][0].1 + 1e-12, "B gains by lying: {m:?}");
    }
    // Theorem D.3.3's Case-1 example: A's lie <1, 1> gives P = 1/2 and link 2 capped at 1/2.
    assert!(close(m[1][0].0, 0.5));
}

#[test]
fn fig_7_6_inelastic_lies_lower_utilization() {
    let truth = fig_7_1();
    let used = |a_lies: bool, b_lies: bool| -> (Vec<Vec<f64>>, f64) {
        let mut r = truth.clone();
        if a_lies {
            r = reporting(&r, 0, vec![1.0, 1.0]).unwrap();
        }
        if b_lies {
            r = reporting(&r, 1, vec![1.0, 1.0]).unwrap();
        }
        let a = naive(&r, SpareRule::HighestDemand);
        let c: Vec<Vec<f64>> = (0..2)
            .map(|k| inelastic_use(&r.tenants[k], &a.consumption[k], &truth.tenants[k], 2))
            .collect();
        let total = c.iter().flatten().sum();
        (c, total)
    };
    let (c, honest) = used(false, false);
    assert_vec(&c[0], &[1.0 / 3.0, 2.0 / 3.0]);
    assert_vec(&c[1], &[2.0 / 3.0, 1.0 / 9.0]);
    assert!(close(honest, 16.0 / 9.0), "2/9 of link 2 unused");
    let (c, a_lies) = used(true, false);
    assert_vec(&c[0], &[11.0 / 24.0, 11.0 / 12.0]);
    assert!(a_lies > honest);
    let (c, b_lies) = used(false, true);
    assert_vec(&c[1], &[0.75, 0.125]);
    assert!(b_lies < honest);
    let (c, both) = used(true, true);
    assert_vec(&c[0], &[0.25, 0.5]);
    assert_vec(&c[1], &[0.5, 1.0 / 12.0]);
    assert!(close(both, 4.0 / 3.0) && both < honest);
}

#[test]
fn app_d2_hug_reaches_four_fifths_of_link_2() {
    let t = app_d2();
    let d = drf(&t);
    assert!(close(d.p_star, 0.4));
    assert_vec(&d.link_use(&t), &[1.0, 7.0 / 15.0]);
    let h = hug(&t, noncoop());
    assert!(close(h.p_star, 0.4));
    assert_vec(&h.guarantee[0], &[0.2, 0.4]);
    assert_vec(&h.guarantee[1], &[0.4, 1.0 / 15.0]);
    assert_vec(&h.guarantee[2], &[0.4]);
    assert_vec(&h.dense_consumption(&t, 1), &[0.4, 0.4]);
    assert_vec(&h.link_use(&t), &[1.0, 0.8]);
    for k in 0..3 {
        assert!(close(h.progress(&t, k), 0.4));
    }
    // Cooperative: work-conserving, link 2 full (A and B at 1/2), still IG 2/5.
    let c = hug(&t, coop());
    assert_vec(&c.link_use(&t), &[1.0, 1.0]);
    assert_vec(&c.dense_consumption(&t, 0), &[0.2, 0.5]);
    assert!(close(c.isolation_guarantee(&t), 0.4));
}

#[test]
fn lemma_d2_1_per_resource_equal_sharing() {
    let t = app_d2();
    let p = psp(&t);
    let prog: Vec<f64> = (0..3)
        .map(|k| true_progress(&t.tenants[k], &p.guarantee[k], &t.tenants[k]))
        .collect();
    assert_vec(&prog, &[0.5, 1.0 / 3.0, 1.0 / 3.0]);
    // Inelastic: 11/12 of link 1 and 5/9 of link 2, neither saturated.
    let mut used = [0.0; 2];
    for k in 0..3 {
        let c = inelastic_use(&t.tenants[k], &p.guarantee[k], &t.tenants[k], 2);
        used[0] += c[0];
        used[1] += c[1];
    }
    assert_vec(&used, &[11.0 / 12.0, 5.0 / 9.0]);
}

#[test]
fn lemma_d2_2_psp_inelastic_dilemma() {
    let links = || Links::unit(2).unwrap();
    // B yields: it only uses its inelastic <1/3, 1/18>; A takes link 2 and reaches 2/3.
    let t = Tenants::new(
        links(),
        &[
            TenantSpec::elastic("A", vec![0.5, 1.0]),
            TenantSpec::bounded("B", vec![1.0 / 3.0, 1.0 / 18.0]),
            TenantSpec::elastic("C", vec![1.0, 0.0]),
        ],
    )
    .unwrap();
    let truth = app_d2();
    let p = psp(&t);
    assert_vec(
        &true_progresses(&t, &p, &truth),
        &[2.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0],
    );
    let a_use = inelastic_use(&t.tenants[0], &p.consumption[0], &truth.tenants[0], 2);
    assert!(close(a_use[0] + 2.0 / 3.0, 1.0), "link 1 saturated");
    // A yields: it only uses <1/4, 1/2>; B and C reach 3/8, A stays at 1/2.
    let t = Tenants::new(
        links(),
        &[
            TenantSpec::bounded("A", vec![0.25, 0.5]),
            TenantSpec::elastic("B", vec![1.0, SIXTH]),
            TenantSpec::elastic("C", vec![1.0, 0.0]),
        ],
    )
    .unwrap();
    let p = psp(&t);
    assert_vec(&true_progresses(&t, &p, &truth), &[0.5, 0.375, 0.375]);
}

#[test]
fn lemma_d2_3_spare_to_least_demand_can_be_wasted() {
    let t = app_d2();
    let a = naive(&t, SpareRule::LeastDemandWithZero);
    assert_vec(&a.link_use(&t), &[1.0, 7.0 / 15.0]);
}

/// A's progress under `policy` when it tells the truth and when it reports `lie` (App. D.2).
fn a_gain(policy: impl Fn(&Tenants) -> Allocation, lie: Vec<f64>) -> (f64, Vec<f64>) {
    let truth = app_d2();
    let honest = true_progresses(&truth, &policy(&truth), &truth)[0];
    let r = reporting(&truth, 0, lie).unwrap();
    (honest, true_progresses(&r, &policy(&r), &truth))
}

#[test]
fn lemma_d2_4_spare_to_least_demand_is_not_strategy_proof() {
    let (honest, lying) = a_gain(|r| naive(r, SpareRule::LeastDemand), vec![1.0, 0.1]);
    assert!(close(honest, 0.4));
    assert_vec(&lying, &[2.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0]);
    // The thesis prints a_B = <1/3, 1/15> and a'_A = <1/3, 14/15>; with P = 1/3, B's share of
    // link 2 is 1/3 * 1/6 = 1/18, so A's is 1 - 1/18 = 17/18 (1/15 is B's share at P = 2/5).
    let r = reporting(&app_d2(), 0, vec![1.0, 0.1]).unwrap();
    let a = naive(&r, SpareRule::LeastDemand);
    assert_vec(&a.guarantee[0], &[1.0 / 3.0, 1.0 / 30.0]);
    assert_vec(&a.guarantee[1], &[1.0 / 3.0, 1.0 / 18.0]);
    assert_vec(&a.consumption[0], &[1.0 / 3.0, 17.0 / 18.0]);
}

#[test]
fn lemma_d2_6_spare_to_highest_demand_is_not_strategy_proof() {
    let (honest, lying) = a_gain(|r| naive(r, SpareRule::HighestDemand), vec![1.0, 1.0]);
    assert!(close(honest, 0.4));
    assert_vec(&lying, &[2.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0]);
}

#[test]
fn lemma_d2_8_equal_division_is_not_strategy_proof() {
    let t = app_d2();
    // Honest: A's share of link 2 rises to 2/3, its progress stays 2/5.
    assert_vec(
        &naive(&t, SpareRule::Equal).consumption[0],
        &[0.2, 2.0 / 3.0],
    );
    let (honest, lying) = a_gain(|r| naive(r, SpareRule::Equal), vec![1.0, 1.0]);
    assert!(close(honest, 0.4));
    // Lying <1, 1>: 1/3 of link 1, 1/3 + (1 - 1/3 - 1/18) / 2 = 23/36 of link 2.
    assert_vec(&lying, &[23.0 / 36.0, 1.0 / 3.0, 1.0 / 3.0]);
}

#[test]
fn lemma_d2_9_proportional_division_is_not_strategy_proof() {
    let (honest, lying) = a_gain(|r| naive(r, SpareRule::Proportional), vec![1.0, 1.0]);
    assert!(close(honest, 0.4));
    assert!(close(lying[0], 2.0 / 3.0), "{lying:?}");
}

#[test]
fn hug_and_the_app_d2_lies() {
    for lie in [
        vec![1.0, 0.1],
        vec![1.0, 1.0],
        vec![0.25, 1.0],
        vec![0.6, 1.0],
    ] {
        let (honest, lying) = a_gain(|r| hug(r, noncoop()), lie.clone());
        assert!(close(honest, 0.4));
        assert!(lying[0] <= honest + 1e-12, "{lie:?} gains: {lying:?}");
    }
    // Cooperative HUG is work-conserving and so not strategy-proof (Lemma D.3.1): the lie
    // <1, 1> gives A 1/3 of link 1 and 1/2 of link 2.
    let (honest, lying) = a_gain(|r| hug(r, coop()), vec![1.0, 1.0]);
    assert!(close(honest, 0.4) && close(lying[0], 0.5), "{lying:?}");
}

#[test]
fn theorem_d3_3_case_1_lowering_the_bottleneck_demand() {
    // A reports d'^1 = 1/4: 1/5 of link 1, so its true progress is 2/5 < 2/3.
    let truth = fig_7_1();
    let r = reporting(&truth, 0, vec![0.25, 1.0]).unwrap();
    let a = hug(&r, noncoop());
    assert!(close(a.guarantee[0][0], 0.2));
    assert!(close(true_progresses(&r, &a, &truth)[0], 0.4));
}

#[test]
fn min_cut_proportionality_fig_7_9() {
    // X all-to-all over P machines, Y N-to-1 into machine 0: both progress 1/2, X gets P
    // times Y's total bandwidth.
    let ports = 8;
    let mut y = vec![1.0 / ports as f64; ports];
    y.extend((0..ports).map(|i| if i == 0 { 1.0 } else { 0.0 }));
    let t = Tenants::new(
        Links::fabric(ports, vec![1.0; 2 * ports]).unwrap(),
        &[
            TenantSpec::elastic("X", vec![1.0; 2 * ports]),
            TenantSpec::elastic("Y", y),
        ],
    )
    .unwrap();
    let h = hug(&t, noncoop());
    assert!(close(h.p_star, 0.5));
    let sent = |k: usize| h.guarantee[k].iter().take(ports).sum::<f64>();
    let y_sent: f64 = h.dense_guarantee(&t, 1)[..ports].iter().sum();
    assert!(close(sent(0), ports as f64 * 0.5) && close(y_sent, 0.5));
    assert!(close(sent(0) / y_sent, ports as f64));
}

#[test]
fn all_ones_is_psp_and_one_link_is_max_min() {
    for m in 1..6 {
        let ones = vec![1.0; 4];
        let vs: Vec<&[f64]> = (0..m).map(|_| ones.as_slice()).collect();
        let t = Tenants::elastic(4, &vs).unwrap();
        let (h, p) = (hug(&t, noncoop()), psp(&t));
        assert!(close(h.p_star, 1.0 / m as f64));
        assert_eq!(h.consumption.len(), p.consumption.len());
        for k in 0..m {
            assert_vec(&h.consumption[k], &p.consumption[k]);
        }
        let one: Vec<&[f64]> = (0..m).map(|_| &ones[..1]).collect();
        let t = Tenants::elastic(1, &one).unwrap();
        assert!(close(hug(&t, noncoop()).progress(&t, 0), 1.0 / m as f64));
    }
}

#[test]
fn heterogeneous_capacities_and_weights() {
    // Fig 7.1 in absolute units on links of 10 and 1: the same fractions.
    let t = Tenants::new(
        Links::independent(vec![10.0, 1.0]).unwrap(),
        &[
            TenantSpec::elastic("A", vec![5.0, 1.0]),
            TenantSpec::elastic("B", vec![10.0, SIXTH]),
        ],
    )
    .unwrap();
    let h = hug(&t, noncoop());
    assert!(close(h.p_star, 2.0 / 3.0));
    assert_vec(&h.consumption[1], &[2.0 / 3.0, 1.0 / 3.0]);
    // Weight 2 for A in Fig 7.1: w·d loads 2 and 13/6 -> P* = 6/13; A's progress doubles B's.
    let t = Tenants::new(
        Links::unit(2).unwrap(),
        &[
            TenantSpec::elastic("A", vec![0.5, 1.0]).with_weight(2.0),
            TenantSpec::elastic("B", vec![1.0, SIXTH]),
        ],
    )
    .unwrap();
    let h = hug(&t, noncoop());
    assert!(close(h.p_star, 6.0 / 13.0));
    assert!(close(h.progress(&t, 0), 12.0 / 13.0), "{:?}", h.consumption);
    assert!(close(h.progress(&t, 1), 6.0 / 13.0));
}

#[test]
fn stage1_auto_stops_a_tenant_off_the_bottleneck_multi_round_does_not() {
    // docs/hug.md choice 2: A = B = <1, 0>, C = <0, 1>.
    let t = Tenants::elastic(2, &[&[1.0, 0.0], &[1.0, 0.0], &[0.0, 1.0]]).unwrap();
    let auto = hug(&t, noncoop());
    assert_vec(&auto.link_use(&t), &[1.0, 0.5]);
    let multi = hug(
        &t,
        HugOptions {
            stage1: coflowkit_sched::tenant::Stage1::MultiRound,
            ..HugOptions::default()
        },
    );
    assert_vec(&multi.link_use(&t), &[1.0, 1.0]);
    assert_vec(&drf(&t).link_use(&t), &[1.0, 1.0]);
    assert!(close(auto.p_star, 0.5) && close(multi.p_star, 0.5));
}

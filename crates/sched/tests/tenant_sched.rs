//! hug, drf and psp as schedulers: every coflow a tenant with its MADD vector.

use coflowkit_model::Fabric;
use coflowkit_sched::{
    build, CoflowState, FlowState, Rates, SchedOptions, SchedulerKind, Snapshot,
};
use rand::{Rng, SeedableRng};

fn coflow(id: u64, flows: &[(u32, u32, f64)]) -> CoflowState {
    let flows: Vec<FlowState> = flows
        .iter()
        .map(|&(src, dst, b)| FlowState {
            src,
            dst,
            sent_bytes: 0.0,
            remaining_bytes: b,
        })
        .collect();
    CoflowState {
        id,
        arrival_s: 0.0,
        deadline_s: None,
        weight: 1.0,
        total_flows: flows.len(),
        sent_bytes: 0.0,
        max_flow_sent_bytes: 0.0,
        flows,
        dag: None,
    }
}

fn rates(kind: SchedulerKind, opts: &SchedOptions, fabric: &Fabric, cs: &[CoflowState]) -> Rates {
    let mut s = build(kind, opts);
    let mut r = Rates::default();
    r.reset(cs);
    s.allocate(
        &Snapshot {
            now_s: 0.0,
            fabric,
            coflows: cs,
        },
        &mut r,
    );
    r
}

#[test]
fn names_parse_and_stay_out_of_all() {
    for n in ["hug", "drf", "psp"] {
        let k: SchedulerKind = n.parse().unwrap();
        assert_eq!(k.name(), n);
        assert!(!SchedulerKind::ALL.contains(&k));
        assert_eq!(build(k, &SchedOptions::default()).name(), n);
    }
}

#[test]
fn madd_vectors_as_coflows() {
    // Two ports of capacity 6. A: 3 bytes 0->0 and 3 bytes 1->0, vector (up0, up1, down0) =
    // (1/2, 1/2, 1). B: 6 bytes 0->1 and 1 byte 1->1, vector (up0, up1, down1) = (6/7, 1/7, 1).
    // Uplink 0 is the most loaded (1/2 + 6/7 = 19/14): P* = 14/19.
    let fabric = Fabric {
        up_bytes_per_s: vec![6.0, 6.0],
        down_bytes_per_s: vec![6.0, 6.0],
    };
    let cs = [
        coflow(1, &[(0, 0, 3.0), (1, 0, 3.0)]),
        coflow(2, &[(0, 1, 6.0), (1, 1, 1.0)]),
    ];
    // A: 14/19 of downlink 0 (84/19 B/s) over its 6 bytes there: 42/19 per flow. B: 14/19 of
    // downlink 1 over 7 bytes: 72/19 and 12/19. Uplink 0 is full: 42/19 + 72/19 = 6. HUG's
    // spare (on uplink 1 and downlink 0) is capped at 14/19 or unusable: the same rates.
    let want = [[42.0 / 19.0, 42.0 / 19.0], [72.0 / 19.0, 12.0 / 19.0]];
    for kind in [SchedulerKind::Hug, SchedulerKind::Drf] {
        let r = rates(kind, &SchedOptions::default(), &fabric, &cs);
        for (got, want) in r.per_coflow.iter().zip(want) {
            for (g, w) in got.iter().zip(want) {
                assert!((g - w).abs() < 1e-9, "{kind}: {:?}", r.per_coflow);
            }
        }
    }
    // PS-P: half of every shared link; A alone on downlink 0, B alone on downlink 1.
    let r = rates(SchedulerKind::Psp, &SchedOptions::default(), &fabric, &cs);
    assert!(
        (r.per_coflow[0][0] - 3.0).abs() < 1e-9,
        "{:?}",
        r.per_coflow
    );
}

#[test]
fn decisions_are_feasible() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(22);
    let coop = SchedOptions {
        hug_cooperative: true,
        ..Default::default()
    };
    for _ in 0..300 {
        let ports = rng.gen_range(1..6u32);
        let caps: Vec<f64> = (0..ports).map(|_| rng.gen_range(1.0..10.0)).collect();
        let fabric = Fabric {
            up_bytes_per_s: caps.clone(),
            down_bytes_per_s: caps.iter().rev().copied().collect(),
        };
        let cs: Vec<CoflowState> = (0..rng.gen_range(1..6))
            .map(|i| {
                let flows: Vec<(u32, u32, f64)> = (0..rng.gen_range(1..6))
                    .map(|_| {
                        let b = if rng.gen_bool(0.2) {
                            0.0
                        } else {
                            rng.gen_range(0.1..5.0)
                        };
                        (rng.gen_range(0..ports), rng.gen_range(0..ports), b)
                    })
                    .collect();
                coflow(i, &flows)
            })
            .collect();
        for (kind, opts) in [
            (SchedulerKind::Hug, SchedOptions::default()),
            (SchedulerKind::Hug, coop.clone()),
            (SchedulerKind::Drf, SchedOptions::default()),
            (SchedulerKind::Psp, SchedOptions::default()),
        ] {
            let r = rates(kind, &opts, &fabric, &cs);
            let (mut up, mut down) = (vec![0.0; ports as usize], vec![0.0; ports as usize]);
            for (c, rs) in cs.iter().zip(&r.per_coflow) {
                let mut served = false;
                for (f, &x) in c.flows.iter().zip(rs) {
                    assert!(x >= 0.0 && x.is_finite());
                    assert!(f.remaining_bytes > 0.0 || x == 0.0);
                    served |= x > 0.0;
                    up[f.src as usize] += x;
                    down[f.dst as usize] += x;
                }
                let has_bytes = c.flows.iter().any(|f| f.remaining_bytes > 0.0);
                assert_eq!(
                    served, has_bytes,
                    "{kind}: every coflow with bytes progresses"
                );
            }
            for i in 0..ports as usize {
                assert!(
                    up[i] <= fabric.up_bytes_per_s[i] * (1.0 + 1e-9),
                    "{kind}: up {i}"
                );
                assert!(
                    down[i] <= fabric.down_bytes_per_s[i] * (1.0 + 1e-9),
                    "{kind}: down {i}"
                );
            }
        }
    }
}

#[test]
fn unknown_sizes_count_one_unit_per_flow() {
    // Non-clairvoyant coflows (remaining bytes infinite) are rated as if every unfinished flow
    // had the same size: the same rates as equal finite sizes, for every multi-tenant policy.
    let fabric = Fabric::uniform(3, 6.0);
    let flows_a = [(0, 1), (0, 2), (1, 2)];
    let flows_b = [(0, 2), (2, 1)];
    let with = |b: f64| {
        let f = |fl: &[(u32, u32)]| fl.iter().map(|&(s, d)| (s, d, b)).collect::<Vec<_>>();
        [coflow(1, &f(&flows_a)), coflow(2, &f(&flows_b))]
    };
    for kind in SchedulerKind::TENANT {
        let unknown = rates(
            *kind,
            &SchedOptions::default(),
            &fabric,
            &with(f64::INFINITY),
        );
        let known = rates(*kind, &SchedOptions::default(), &fabric, &with(5.0));
        assert!(
            unknown.per_coflow.iter().flatten().all(|&r| r > 0.0),
            "{kind}: {unknown:?}"
        );
        for (u, k) in unknown
            .per_coflow
            .iter()
            .flatten()
            .zip(known.per_coflow.iter().flatten())
        {
            assert!((u - k).abs() < 1e-9, "{kind}: {unknown:?} vs {known:?}");
        }
    }
}

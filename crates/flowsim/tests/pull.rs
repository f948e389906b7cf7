//! The pull-based shuffle world: exact hand-computed runs, bookkeeping invariants, the trace
//! mapping and the §4.3 utilization simulation.

use coflowkit_flowsim::pull::workload::total_bytes;
use coflowkit_flowsim::pull::*;
use coflowkit_model::trace::parse_str;
use coflowkit_model::units::MB;
use coflowkit_model::Fabric;
use coflowkit_sched::select::{Policy, SelectOptions};
use proptest::prelude::*;

fn caps(c: &[f64]) -> Fabric {
    Fabric {
        up_bytes_per_s: c.to_vec(),
        down_bytes_per_s: c.to_vec(),
    }
}

fn one_reducer(node: u32, fetches: &[(u32, f64)]) -> Vec<Job> {
    vec![Job {
        id: 1,
        arrival_s: 0.0,
        reducers: vec![ReduceTask {
            node,
            fetches: fetches
                .iter()
                .map(|&(src, bytes)| Fetch { src, bytes })
                .collect(),
        }],
    }]
}

fn opts(policy: Policy, fetchers: usize) -> PullOptions {
    PullOptions {
        policy,
        fetchers,
        ..PullOptions::default()
    }
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} != {b}");
}

#[test]
fn two_fetchers_share_the_reducers_downlink_exactly() {
    // B (12) pulls 6 bytes from A (6) and 12 from C (12): both run at 6 until A's is done at
    // t=1; C's last 6 bytes then run at 12 and finish at t=1.5.
    let fabric = caps(&[6.0, 12.0, 12.0]);
    let jobs = one_reducer(1, &[(0, 6.0), (2, 12.0)]);
    let out = simulate_pull(&fabric, &jobs, &opts(Policy::Gss, 2)).unwrap();
    close(out.shuffle_time_s, 1.5);
    close(out.tasks[0].finish_s, 1.5);
    close(out.avg_task_rate_bps(), 18.0 * 8.0 / 1.5);
    close(out.mean_rate_bytes_per_s, 12.0);
    close(out.link_utilization(), 12.0 / 30.0);
    assert_eq!(out.completion_curve.last().unwrap().1, 1.0);
    // One fetcher: one at a time, each alone at its bottleneck: 6/6 + 12/12 = 2 s.
    let out = simulate_pull(&fabric, &jobs, &opts(Policy::Random, 1)).unwrap();
    close(out.shuffle_time_s, 2.0);
    assert_eq!(out.decisions, 2);
}

#[test]
fn later_jobs_start_at_their_arrival_and_share_links() {
    // Two jobs, each one reducer on node 2 fetching 6 bytes from node 0; all links 6.
    let mut jobs = one_reducer(2, &[(0, 6.0)]);
    let mut second = jobs[0].clone();
    second.id = 2;
    second.arrival_s = 0.5;
    jobs.push(second);
    let out = simulate_pull(&caps(&[6.0, 6.0, 6.0]), &jobs, &opts(Policy::Pgss, 5)).unwrap();
    // Job 1 alone for 0.5 s (3 bytes), then both at 3: job 1 ends at 1.5, job 2 has 3 left
    // and ends at 2.0.
    close(out.jobs[0].shuffle_time_s, 1.5);
    close(out.jobs[1].shuffle_time_s, 1.5);
    close(out.shuffle_time_s, 2.0);
}

#[test]
fn pgss_picks_table_4s_better_source_in_the_simulation() {
    // Table 4 as a workload: A->C and B->C run (reducer on C); a reducer on B may fetch from A
    // or C. PGSS takes C first (18 vs 12), so B's fetch from C runs at 6 from t=0.
    let fabric = caps(&[6.0, 6.0, 12.0]);
    let jobs = vec![Job {
        id: 1,
        arrival_s: 0.0,
        reducers: vec![
            ReduceTask {
                node: 2,
                fetches: vec![
                    Fetch {
                        src: 0,
                        bytes: 60.0,
                    },
                    Fetch {
                        src: 1,
                        bytes: 60.0,
                    },
                ],
            },
            ReduceTask {
                node: 1,
                fetches: vec![Fetch { src: 0, bytes: 6.0 }, Fetch { src: 2, bytes: 6.0 }],
            },
        ],
    }];
    for seed in 0..10 {
        let o = PullOptions {
            seed,
            ..opts(Policy::Pgss, 1)
        };
        let out = simulate_pull(&fabric, &jobs, &o).unwrap();
        // B's reducer: C first at 6 (done t=1), then A shares A's uplink with A->C: 3 each,
        // 6 bytes take 2 s more: done at t=3.
        close(out.tasks[1].finish_s, 3.0);
    }
}

#[test]
fn prescheduling_runs_every_fetch_and_asks_less_often() {
    let spec = SyntheticSpec {
        nodes: 6,
        maps_per_node: 2,
        reducers: 6,
        partition_bytes: MB,
        seed: 4,
        ..SyntheticSpec::default()
    };
    let jobs = spec.generate();
    let fabric = Fabric::uniform_bps(6, 1e9);
    let plain = simulate_pull(&fabric, &jobs, &opts(Policy::Pgss, 3)).unwrap();
    let batched = simulate_pull(
        &fabric,
        &jobs,
        &PullOptions {
            batch: 5,
            ..opts(Policy::Pgss, 3)
        },
    )
    .unwrap();
    close(batched.total_bytes, plain.total_bytes);
    assert!(batched.decisions < plain.decisions);
    // Without pre-scheduling a reducer asks once for its 3 fetchers at the start, then once per
    // fetch that frees one: 1 + (10 - 3) requests for its 5 other nodes x 2 outputs.
    assert_eq!(plain.decisions, 6 * 8);
}

#[test]
fn one_fetch_per_host_keeps_a_tasks_fetchers_on_distinct_nodes() {
    // Node 1 (downlink 12) pulls two 6-byte outputs from node 0 and a 12-byte one from node 2
    // (uplinks 6) with 2 fetchers. On distinct nodes everything is done at t=2; two fetchers on
    // node 0 share its uplink and leave node 2's output for later (done at t=4).
    let fabric = Fabric {
        up_bytes_per_s: vec![6.0, 12.0, 6.0],
        down_bytes_per_s: vec![6.0, 12.0, 6.0],
    };
    let jobs = one_reducer(1, &[(0, 6.0), (0, 6.0), (2, 12.0)]);
    let mut collided = 0;
    for seed in 0..20 {
        let o = PullOptions {
            seed,
            ..opts(Policy::Random, 2)
        };
        let free = simulate_pull(&fabric, &jobs, &o).unwrap();
        collided += usize::from(free.shuffle_time_s > 2.0 + 1e-9);
        let hadoop = PullOptions {
            one_fetch_per_host: true,
            ..o
        };
        close(
            simulate_pull(&fabric, &jobs, &hadoop)
                .unwrap()
                .shuffle_time_s,
            2.0,
        );
    }
    assert!(collided > 0, "random never put both fetchers on node 0");
    let bad = PullOptions {
        one_fetch_per_host: true,
        batch: 2,
        ..PullOptions::default()
    };
    assert_eq!(
        simulate_pull(&fabric, &jobs, &bad),
        Err(PullError::ExclusiveWithBatch)
    );
}

#[test]
fn trace_coflows_become_jobs_with_one_task_per_reducer() {
    let text = "4 2\n1 0 2 0 1 2 2:2.0 0:1.0\n2 1000 1 3 1 0:4.0\n";
    let trace = parse_str(text, "t.txt").unwrap();
    let jobs = from_trace(&trace, LocalFetch::Skip);
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0].reducers.len(), 2);
    assert_eq!(jobs[0].reducers[0].node, 2);
    assert_eq!(jobs[0].reducers[0].fetches.len(), 2);
    // Reducer 0's self-fetch (mapper 0 -> reducer 0) is local and skipped.
    assert_eq!(
        jobs[0].reducers[1].fetches,
        vec![Fetch {
            src: 1,
            bytes: 0.5 * MB
        }]
    );
    close(jobs[1].arrival_s, 1.0);
    let kept = from_trace(&trace, LocalFetch::Network);
    assert_eq!(kept[0].reducers[1].fetches.len(), 2);
}

#[test]
fn bad_workloads_are_refused() {
    let fabric = caps(&[6.0, 6.0]);
    let jobs = one_reducer(1, &[(5, 1.0)]);
    assert!(matches!(
        simulate_pull(&fabric, &jobs, &PullOptions::default()),
        Err(PullError::NodeOutOfRange { node: 5, .. })
    ));
    let jobs = one_reducer(1, &[(0, f64::NAN)]);
    assert!(matches!(
        simulate_pull(&fabric, &jobs, &PullOptions::default()),
        Err(PullError::BadSize { .. })
    ));
    let jobs = one_reducer(1, &[(0, 1.0)]);
    assert_eq!(
        simulate_pull(&fabric, &jobs, &opts(Policy::Gss, 0)),
        Err(PullError::NoFetchers)
    );
}

#[test]
fn rounds_model_pgss_beats_random_on_a_heterogeneous_cluster() {
    // 8 nodes, half at 512 Mbit/s and half at 1024 (spec A7 §4.3 setting), mean of 5 seeds.
    let mut c = vec![512e6 / 8.0; 4];
    c.extend(vec![1024e6 / 8.0; 4]);
    let mean = |policy| {
        (0..5)
            .map(|seed| {
                simulate_rounds(&RoundsSpec {
                    fabric: caps(&c),
                    policy,
                    fetchers: 5,
                    rounds: 40,
                    warmup: 5,
                    seed,
                    select: SelectOptions::default(),
                })
                .unwrap()
                .mean_util_bytes_per_s
            })
            .sum::<f64>()
            / 5.0
    };
    let (rss, pgss) = (mean(Policy::Random), mean(Policy::Pgss));
    let cap: f64 = c.iter().sum();
    assert!(pgss > rss, "pgss {pgss} <= random {rss}");
    assert!(pgss <= cap * (1.0 + 1e-9));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn every_byte_arrives_no_faster_than_the_links_allow(
        nodes in 2u32..6, maps in 1u32..3, reducers in 1u32..5, fetchers in 1usize..4,
        seed in 0u64..1000, policy in prop::sample::select(vec![Policy::Random, Policy::Gss, Policy::Pgss, Policy::Opt]),
    ) {
        let spec = SyntheticSpec { nodes, maps_per_node: maps, reducers, jobs: 2, job_gap_s: 0.3, partition_bytes: 1.0, seed, ..SyntheticSpec::default() };
        let jobs = spec.generate();
        let c: Vec<f64> = (0..nodes).map(|i| 1.0 + f64::from(i % 3)).collect();
        let fabric = caps(&c);
        let o = PullOptions { policy, fetchers, seed, ..PullOptions::default() };
        let out = simulate_pull(&fabric, &jobs, &o).unwrap();
        let fetched: f64 = out.tasks.iter().map(|t| t.bytes).sum();
        prop_assert!((fetched - total_bytes(&jobs)).abs() < 1e-9);
        // No node sends or receives faster than its link.
        let (mut up, mut down) = (vec![0.0; nodes as usize], vec![0.0; nodes as usize]);
        for r in jobs.iter().flat_map(|j| &j.reducers) {
            for f in &r.fetches {
                up[f.src as usize] += f.bytes;
                down[r.node as usize] += f.bytes;
            }
        }
        let bound = (0..nodes as usize).map(|p| (up[p] / c[p]).max(down[p] / c[p])).fold(0.0, f64::max);
        prop_assert!(out.shuffle_time_s >= bound * (1.0 - 1e-9));
        prop_assert!(out.link_utilization() <= 1.0 + 1e-9);
        for t in &out.tasks {
            prop_assert!(t.finish_s >= t.start_s);
        }
        // Same seed, same run.
        let again = simulate_pull(&fabric, &jobs, &o).unwrap();
        prop_assert_eq!(again.shuffle_time_s, out.shuffle_time_s);
    }
}

#[test]
fn rounds_model_on_two_nodes_fills_both_directions() {
    // Each node's only source is the other: 5 flows each way share full links, whatever the
    // policy, so the utilization is exactly the capacity from the first sample on.
    for policy in [Policy::Random, Policy::Gss, Policy::Pgss, Policy::Opt] {
        let out = simulate_rounds(&RoundsSpec {
            fabric: caps(&[3.0, 5.0]),
            policy,
            fetchers: 5,
            rounds: 6,
            warmup: 1,
            seed: 9,
            select: SelectOptions::default(),
        })
        .unwrap();
        // Up(0) = 3 feeds down(1) = 5 and up(1) = 5 feeds down(0) = 3: 3 each way.
        close(out.mean_util_bytes_per_s, 6.0);
        close(out.capacity_bytes_per_s, 8.0);
        assert_eq!(out.samples, 2 * 5);
    }
}

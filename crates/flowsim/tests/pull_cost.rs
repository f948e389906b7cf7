//! The cost of a pull-based run follows its work, not the cluster's size (adversarial pass of
//! session 32, A2/A3): counted in max-min work, not timed.

use coflowkit_flowsim::pull::*;
use coflowkit_model::Fabric;
use coflowkit_sched::select::Policy;

/// One reduce task on node `m` pulling one output from each of the nodes `0..m` (an incast of
/// `m` mappers), on a cluster of `m + 1` nodes.
fn incast(m: u32) -> (Fabric, Vec<Job>) {
    let fetches = (0..m)
        .map(|src| Fetch {
            src,
            bytes: 1e6 + f64::from(src % 7) * 1e5,
        })
        .collect();
    let jobs = vec![Job {
        id: 1,
        arrival_s: 0.0,
        reducers: vec![ReduceTask { node: m, fetches }],
    }];
    (Fabric::uniform(m as usize + 1, 1.25e8), jobs)
}

fn opts(policy: Policy) -> PullOptions {
    PullOptions {
        policy,
        fetchers: 5,
        ..PullOptions::default()
    }
}

/// Every evaluation of a candidate fills the pattern (at most 5 running fetches) plus the
/// candidate, every event the running fetches: the max-min work is at most 6 flows per
/// evaluation and 5 per event, plus one reset of each of the two capacity tables (the
/// engine's and the estimate's) at the start. It used to reset all the cluster's ports per
/// evaluation and per event: 2 (m + 1) more each time, which made GSS's run O(m^3).
#[test]
fn max_min_work_does_not_grow_with_the_nodes() {
    for m in [100, 400] {
        let (fabric, jobs) = incast(m);
        for policy in [Policy::Random, Policy::Gss, Policy::Pgss] {
            let out = simulate_pull(&fabric, &jobs, &opts(policy)).unwrap();
            assert_eq!(out.tasks.len(), 1);
            let evaluations = out.evaluations;
            let bound = 6 * evaluations + 5 * out.events + 4 * (u64::from(m) + 1);
            assert!(
                out.rate_work <= bound,
                "{policy}, {m} mappers: max-min work {} over {bound} ({evaluations} evaluations, \
                 {} events)",
                out.rate_work,
                out.events
            );
            // GSS and PGSS (all loads equal here) evaluate each pending source once per pick,
            // but not the last one left: m (m + 1) / 2 at most. Random evaluates nothing.
            let most = if policy == Policy::Random {
                0
            } else {
                u64::from(m) * u64::from(m + 1) / 2
            };
            assert!(evaluations <= most, "{policy}: {evaluations} > {most}");
        }
    }
}

/// A pick among one pending source needs no evaluation (whatever the pattern, it wins):
/// thousands of one-fetch jobs at once cost GSS and PGSS no evaluation of the (large) pattern
/// each (they cost one each, O(J^2) in all).
#[test]
fn a_single_candidate_is_picked_without_an_evaluation() {
    let nodes = 50u32;
    let jobs: Vec<Job> = (0..3000u32)
        .map(|j| Job {
            id: u64::from(j) + 1,
            arrival_s: 0.0,
            reducers: vec![ReduceTask {
                node: (j * 7 + 3) % nodes,
                fetches: vec![Fetch {
                    src: (j * 13) % nodes,
                    bytes: 1e6 + f64::from(j % 11) * 1e4,
                }],
            }],
        })
        .filter(|j| j.reducers[0].node != j.reducers[0].fetches[0].src)
        .collect();
    let fabric = Fabric::uniform(nodes as usize, 1.25e8);
    let random = simulate_pull(&fabric, &jobs, &opts(Policy::Random)).unwrap();
    for policy in [Policy::Gss, Policy::Pgss] {
        let out = simulate_pull(&fabric, &jobs, &opts(policy)).unwrap();
        assert_eq!(out.evaluations, 0, "{policy}");
        // One candidate each: every policy makes the same choices.
        assert_eq!(out.jobs, random.jobs, "{policy}");
        assert_eq!(out.tasks, random.tasks, "{policy}");
    }
}

/// Observing a run changes nothing in it, and what it reports only grows.
#[test]
fn an_observed_run_reports_growing_progress_and_the_same_result() {
    let (fabric, jobs) = incast(300);
    for policy in [Policy::Random, Policy::Gss] {
        let plain = simulate_pull(&fabric, &jobs, &opts(policy)).unwrap();
        let mut seen = Vec::new();
        let observed =
            simulate_pull_observed(&fabric, &jobs, &opts(policy), |p| seen.push(p)).unwrap();
        assert_eq!(plain.tasks, observed.tasks);
        assert_eq!(plain.jobs, observed.jobs);
        assert_eq!(plain.completion_curve, observed.completion_curve);
        assert_eq!(plain.rate_work, observed.rate_work);
        assert!(seen.len() >= 2, "{policy}: {seen:?}");
        assert!(seen
            .iter()
            .all(|p| p.fetches == 300 && p.fetches_done <= 300));
        assert!(seen.windows(2).all(|w| w[0].time_s <= w[1].time_s
            && w[0].fetches_done <= w[1].fetches_done
            && w[0].decisions <= w[1].decisions
            && w[0].evaluations <= w[1].evaluations));
        assert!(seen.last().unwrap().fetches_done > seen[0].fetches_done);
    }
}

//! Job-level replay with compute stages (issue 18): a child coflow is released its compute
//! time after its last parent ends (starts-after), and a job's JCT (first release to last end)
//! and communication time (time with one of its coflows active) are reported. Toys on unit
//! links, every time worked out by hand in the comments.

mod common;

use coflowkit_flowsim::jobs::{jobs, JobSummary};
use coflowkit_flowsim::{simulate_with, Dependencies, SimOptions, SimOutput};
use coflowkit_model::{Coflow, Fabric, Trace};
use coflowkit_sched::{build, SchedOptions, SchedulerKind};
use common::*;

fn starts_after(t: &(Trace, Fabric), kind: SchedulerKind) -> SimOutput {
    let opts = SimOptions {
        dependencies: Dependencies::StartsAfter,
        ..Default::default()
    };
    let mut s = build(kind, &SchedOptions::default());
    simulate_with(&t.0, &t.1, s.as_mut(), &opts).expect("simulation")
}

fn child(mut c: Coflow, parents: &[u64], compute_s: f64) -> Coflow {
    c.parents = parents.to_vec();
    c.compute_s = compute_s;
    c
}

/// (arrival, finish, cct) of coflow `id`.
fn times(out: &SimOutput, id: u64) -> (f64, f64, f64) {
    let o = out.coflows.iter().find(|o| o.id == id).expect("coflow ran");
    (o.arrival_s, o.finish_s, o.cct_s)
}

#[track_caller]
fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-9, "{a} != {b}");
}

/// A (4 B on 0 -> 1) at 0; B (2 B on 0 -> 1), child of A with 3 s of compute. A ends at 4, B
/// is released at 4 + 3 = 7 and ends at 9: CCTs 4 and 2, JCT 9, communication 4 + 2 = 6.
/// With `busy`, an unrelated coflow X (100 B on 2 -> 3) runs all along, so B's release is an
/// event between decisions rather than the next thing after an idle fabric.
fn chain(busy: bool) -> (Trace, Fabric) {
    let mut v = vec![
        coflow(1, 0.0, &[(0, 1, 4.0)]),
        child(coflow(2, 0.0, &[(0, 1, 2.0)]), &[1], 3.0),
    ];
    if busy {
        v.push(coflow(3, 0.0, &[(2, 3, 100.0)]));
    }
    toy(4, v)
}

#[test]
fn a_two_stage_chain_waits_for_its_compute() {
    for busy in [false, true] {
        for kind in [
            SchedulerKind::Fair,
            SchedulerKind::Varys,
            SchedulerKind::Aalo,
        ] {
            let t = chain(busy);
            let out = starts_after(&t, kind);
            let (a, f, cct) = times(&out, 2);
            close(a, 7.0);
            close(f, 9.0);
            close(cct, 2.0);
            close(times(&out, 1).2, 4.0);
            let j = jobs(&t.0, &out).unwrap();
            let dag = j.iter().find(|j| j.job == 1).unwrap();
            assert_eq!((dag.coflows, dag.levels), (2, 2));
            close(dag.start_s, 0.0);
            close(dag.jct_s, 9.0);
            close(dag.comm_s, 6.0);
            if busy {
                let x = j.iter().find(|j| j.job == 3).unwrap();
                assert_eq!((x.coflows, x.levels), (1, 1));
                close(x.jct_s, 100.0);
                close(x.comm_s, 100.0);
            }
        }
    }
}

/// A diamond 1 -> {2, 3} -> 4:
/// - 1: 2 B on 0 -> 1 at 0, ends at 2;
/// - 2: 3 B on 1 -> 2, compute 1 s: released at 3; alone on uplink 1 until 4 (1 B sent);
/// - 3: 1 B on 1 -> 3, compute 2 s: released at 4. From 4, 2 and 3 share uplink 1: fair gives
///   each 0.5 B/s, so 3 ends at 6 and 2, with 1 B left, at 7; Varys runs the smaller 3 alone
///   (4 to 5) and 2 after it (its 2 B from 5 to 7): 2 ends at 7 either way;
/// - 4: 1 B on 2 -> 0, compute 0.5 s after its last parent (2, at 7): released at 7.5, ends
///   at 8.5.
///
/// JCT 8.5; communication [0, 2] + [3, 7] + [7.5, 8.5] = 7 (3 lies inside 2).
fn diamond() -> (Trace, Fabric) {
    toy(
        4,
        vec![
            coflow(1, 0.0, &[(0, 1, 2.0)]),
            child(coflow(2, 0.0, &[(1, 2, 3.0)]), &[1], 1.0),
            child(coflow(3, 0.0, &[(1, 3, 1.0)]), &[1], 2.0),
            child(coflow(4, 0.0, &[(2, 0, 1.0)]), &[2, 3], 0.5),
        ],
    )
}

#[test]
fn a_diamond_is_released_after_its_slower_branch_and_its_compute() {
    for kind in [SchedulerKind::Fair, SchedulerKind::Varys] {
        let t = diamond();
        let out = starts_after(&t, kind);
        close(times(&out, 2).1, 7.0);
        close(times(&out, 3).0, 4.0);
        let (a, f, cct) = times(&out, 4);
        close(a, 7.5);
        close(f, 8.5);
        close(cct, 1.0);
        let j = jobs(&t.0, &out).unwrap();
        assert_eq!(j.len(), 1);
        assert_eq!((j[0].job, j[0].coflows, j[0].levels), (1, 4, 3));
        close(j[0].jct_s, 8.5);
        close(j[0].comm_s, 7.0);
    }
    // Fair's branch 3 ends at 6, Varys's at 5.
    close(
        times(&starts_after(&diamond(), SchedulerKind::Fair), 3).1,
        6.0,
    );
    close(
        times(&starts_after(&diamond(), SchedulerKind::Varys), 3).1,
        5.0,
    );
}

#[test]
fn a_child_arriving_after_its_parents_still_waits_out_its_compute() {
    // B's trace arrival (5) is after A's end (4) but before A's end + compute (4 + 3 = 7).
    let t = toy(
        2,
        vec![
            coflow(1, 0.0, &[(0, 1, 4.0)]),
            child(coflow(2, 5.0, &[(0, 1, 2.0)]), &[1], 3.0),
        ],
    );
    let out = starts_after(&t, SchedulerKind::Fair);
    close(times(&out, 2).0, 7.0);
    close(times(&out, 2).1, 9.0);
    // Arriving after A's end + compute, it starts at its arrival.
    let mut late = t.clone();
    late.0.coflows[1].arrival_s = 8.0;
    let out = starts_after(&late, SchedulerKind::Fair);
    close(times(&out, 2).0, 8.0);
    close(times(&out, 2).1, 10.0);
}

#[test]
fn finishes_before_ignores_compute_times() {
    // Pipelined stages: B runs beside A from 0 (sharing 0 -> 1 under fair: both at 0.5 until
    // B's 2 B are done at 4; A's 4 B end at 6).
    let t = chain(false);
    let mut s = build(SchedulerKind::Fair, &SchedOptions::default());
    let out = simulate_with(&t.0, &t.1, s.as_mut(), &SimOptions::default()).unwrap();
    close(times(&out, 2).1, 4.0);
    close(times(&out, 1).1, 6.0);
}

#[test]
fn the_summary_averages_all_jobs_and_the_multi_level_ones() {
    let t = chain(true);
    let out = starts_after(&t, SchedulerKind::Fair);
    let s = JobSummary::of(&jobs(&t.0, &out).unwrap());
    assert_eq!((s.jobs, s.multi_level_jobs), (2, 1));
    close(s.avg_jct_s, (9.0 + 100.0) / 2.0);
    close(s.avg_comm_s, (6.0 + 100.0) / 2.0);
    close(s.multi_level_avg_jct_s, 9.0);
    close(s.multi_level_avg_comm_s, 6.0);
}

//! The workloads of the thesis' load and multi-wave experiments, end to end through the
//! simulator: `--max-waves` (Aalo §6.8) and `--concurrent` (Varys §5.7).

use coflowkit_flowsim::{simulate_with, Dependencies, SimOptions};
use coflowkit_model::gen::{concurrent::concurrent, waves};
use coflowkit_model::{Coflow, Fabric, Flow, Trace};
use coflowkit_sched::{build, SchedOptions, SchedulerKind};
use coflowkit_simcmd::stages;

/// 12 coflows, each from 4 to 6 senders (of ports 0..8) to two receivers (8, 9), uneven sizes.
fn trace() -> Trace {
    let coflows = (0..12u64)
        .map(|i| {
            let senders = 4 + (i % 3) as u32;
            let flows = (0..senders)
                .flat_map(|s| {
                    let src = (s + i as u32) % 8;
                    [8, 9].map(|dst| Flow {
                        src,
                        dst,
                        bytes: 1.0 + ((i * 7 + s as u64 * 3 + dst as u64) % 5) as f64,
                    })
                })
                .collect();
            Coflow::new(i + 1, i as f64 * 2.5, flows)
        })
        .collect();
    Trace { ports: 10, coflows }
}

fn run(t: &Trace, kind: SchedulerKind, deps: Dependencies) -> coflowkit_flowsim::SimOutput {
    let fabric = Fabric::uniform(t.ports as usize, 1.0);
    let mut s = build(kind, &SchedOptions::default());
    let opts = SimOptions {
        dependencies: deps,
        ..SimOptions::default()
    };
    simulate_with(t, &fabric, s.as_mut(), &opts).unwrap()
}

#[test]
fn a_stage_takes_at_least_its_waves_back_to_back_and_one_wave_is_the_coflow() {
    let t = trace();
    let fabric = Fabric::uniform(10, 1.0);
    for kind in [
        SchedulerKind::Aalo,
        SchedulerKind::Varys,
        SchedulerKind::Fair,
    ] {
        let w = waves::split(&t, 4, 2).unwrap();
        assert!(
            w.coflows.len() > t.coflows.len(),
            "some stage has several waves"
        );
        let out = run(&w, kind, Dependencies::StartsAfter);
        let times = stages::stage_times(&out);
        assert_eq!(times.len(), t.coflows.len());
        for (stage, (time, n)) in &times {
            // With the barrier, the waves run one after the other, each at least its Γ.
            let back_to_back: f64 = (w.coflows.iter())
                .filter(|c| waves::stage_of(c.id) == *stage)
                .map(|c| c.isolated_cct_s(&fabric))
                .sum();
            assert!(
                *time >= back_to_back * (1.0 - 1e-9),
                "{kind}: stage {stage} ({n} waves) took {time}, less than {back_to_back}"
            );
        }
        let one = waves::split(&t, 1, 2).unwrap();
        let out1 = run(&one, kind, Dependencies::StartsAfter);
        let plain = run(&t, kind, Dependencies::FinishesBefore);
        let s = stages::summary(&out1);
        assert_eq!((s.stages, s.multi_wave), (12, 0));
        let avg = plain.coflows.iter().map(|c| c.cct_s).sum::<f64>() / 12.0;
        assert!(
            (s.avg_s - avg).abs() <= 1e-9 * avg,
            "{kind}: {} vs {avg}",
            s.avg_s
        );
    }
}

#[test]
fn concurrent_coflows_all_start_at_once() {
    let t = concurrent(&trace(), 5, 3).unwrap();
    let out = run(&t, SchedulerKind::Varys, Dependencies::FinishesBefore);
    assert_eq!(out.coflows.len(), 5);
    assert!(out
        .coflows
        .iter()
        .all(|c| c.arrival_s == 0.0 && c.cct_s == c.finish_s));
}

//! `--model coflowsim` against the reference simulator itself: the CCTs below were printed by
//! CoflowSim (github.com/coflow/coflowsim at commit b61f209, built with javac from OpenJDK 17,
//! run as `java coflowsim.CoflowSim ALGO COFLOW-BENCHMARK tiny.txt`, 8th column of its output,
//! in its ms) on the trace below, crafted to hit its rules: a fractional reducer (0.4 MB -> 1 MB
//! -> 3 MB over 3 mappers), 3.5 MB -> 4 MB, self-flows (3 -> 3, 5 -> 5, 1 -> 1), an arrival
//! exactly at the end of the first epoch (10240 ms, admitted at 0) and two in the second epoch
//! (CCT from 10240), and contention on ports 0, 2, 3 and 5.

use coflowkit_flowsim::coflowsim::{simulate, Algo};
use coflowkit_model::trace::benchmark::parse;
use coflowkit_model::Fabric;

const TINY: &str = "6 6
1 0 2 0 1 2 2:3.5 3:1.0
2 300 1 1 2 1:2.0 4:6.0
3 9000 3 0 2 5 2 3:10.0 5:0.4
4 10240 1 3 1 3:2.0
5 15000 2 4 5 3 0:7.0 1:1.0 2:25.0
6 15500 1 2 2 0:3.0 5:40.0
";

/// Reference CCTs (ms) of coflows 1..=6.
const REFERENCE: [(Algo, [f64; 6]); 8] = [
    (Algo::Fifo, [32.0, 88.0, 112.0, 128.0, 208.0, 344.0]),
    (Algo::Fair, [64.0, 96.0, 128.0, 80.0, 216.0, 360.0]),
    (Algo::Pfp, [40.0, 88.0, 128.0, 16.0, 208.0, 344.0]),
    (Algo::Scf, [32.0, 88.0, 128.0, 32.0, 208.0, 344.0]),
    (Algo::Ncf, [88.0, 64.0, 128.0, 16.0, 208.0, 344.0]),
    (Algo::Lcf, [40.0, 88.0, 128.0, 16.0, 208.0, 344.0]),
    (Algo::Sebf, [40.0, 88.0, 128.0, 16.0, 208.0, 344.0]),
    (Algo::Dark, [32.0, 128.0, 128.0, 144.0, 312.0, 480.0]),
];

#[test]
fn every_algorithm_matches_the_reference_coflow_by_coflow() {
    let trace = parse(TINY, "tiny.txt").unwrap();
    let fabric = Fabric::uniform_bps(6, 1e9);
    let mut wrong = Vec::new();
    for (algo, want) in REFERENCE {
        let out = simulate(&trace, &fabric, algo).unwrap();
        let got: Vec<f64> = out.coflows.iter().map(|c| c.cct_s * 1000.0).collect();
        let close = got.len() == 6 && got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-6);
        if !close {
            wrong.push(format!("{algo:?}: ours {got:?}, reference {want:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn second_epoch_arrivals_count_from_the_epoch_start() {
    let trace = parse(TINY, "tiny.txt").unwrap();
    let out = simulate(&trace, &Fabric::uniform_bps(6, 1e9), Algo::Fifo).unwrap();
    let five = &out.coflows[4];
    assert_eq!(five.arrival_s, 15.0);
    // admitted at 10.24 s, done 208 ms later
    assert!(
        (five.finish_s - (10.24 + 0.208)).abs() < 1e-9,
        "{}",
        five.finish_s
    );
    assert!((five.cct_s - 0.208).abs() < 1e-9);
}

#[test]
fn dark_with_ten_queues_is_the_reference_and_one_queue_is_plain_fifo() {
    use coflowkit_flowsim::coflowsim::{simulate_ablated, Ablation};
    let fabric = Fabric::uniform_bps(6, 1e9);
    let ccts = |text: &str, k: Option<usize>| -> Vec<f64> {
        let trace = parse(text, "t.txt").unwrap();
        let ablation = Ablation {
            dark_queues: k,
            ..Default::default()
        };
        let out = simulate_ablated(&trace, &fabric, Algo::Dark, ablation).unwrap();
        out.coflows.iter().map(|c| c.cct_s * 1000.0).collect()
    };
    let dark = REFERENCE[7].1.to_vec();
    assert_eq!(ccts(TINY, None), dark);
    assert_eq!(ccts(TINY, Some(10)), dark);
    // A: 3000 MB from port 0 at 0 (one MB per 8 ms step: 24 s alone); B: 5 MB from port 0,
    // admitted at 10.24 s when A has sent 1280 MB. With ten queues A is in the fourth (past
    // 1000 MB) and B, in the first, takes port 0 for 40 ms; with one queue B waits for A.
    let two = "3 2\n1 0 1 0 1 1:3000.0\n2 15000 1 0 1 2:5.0\n";
    assert_eq!(ccts(two, Some(10)), vec![24_040.0, 40.0]);
    assert_eq!(ccts(two, Some(1)), vec![24_000.0, 24_040.0 - 10_240.0]);
}

//! Observing a run's progress changes nothing in it, and what it reports only grows.

use coflowkit_pktsim::{try_run, try_run_observed, SimConfig};
use coflowkit_shuffle::matrix::PacketMatrix;

#[test]
fn an_observed_run_reports_growing_progress_and_the_same_result() {
    let n = 6;
    let packets = (0..n * n)
        .map(|i| {
            if i % (n + 1) == 0 {
                0
            } else {
                3 + (i as u64 * 7) % 11
            }
        })
        .collect();
    let m = PacketMatrix { n, packets };
    let cfg = SimConfig::new(2, "grpf", 1);
    let plain = try_run(&m, &cfg).unwrap();
    let mut seen = Vec::new();
    let observed = try_run_observed(&m, &cfg, 5, |p| seen.push(p)).unwrap();
    assert_eq!(plain, observed);
    assert!(seen.len() > 2, "{seen:?}");
    assert!(seen
        .iter()
        .all(|p| p.steps % 5 == 0 && p.delivered <= p.total));
    assert!(seen
        .windows(2)
        .all(|w| w[0].steps < w[1].steps && w[0].delivered <= w[1].delivered));
    assert_eq!(seen[0].total, m.packets.iter().sum::<u64>());
    assert!(seen.last().unwrap().delivered > seen[0].delivered);
}

//! The answers by levels (`Levels::lower`, `Levels::refill`, through `Refill::answer_levels`)
//! against a fresh water-filling, over several rounds of lowered weights.

use super::super::refill::{LevelAnswer, Refill};
use super::super::waterfill::{Demand, WaterFill};
use super::super::Budget;
use coflowkit_model::Fabric;
use proptest::prelude::*;

/// Ports with capacities `caps` up, reversed down; demands; rounds of (demand, share kept).
type Case = (Vec<f64>, Vec<Demand>, Vec<Vec<(usize, f64)>>);

fn cases() -> impl Strategy<Value = Case> {
    cases_of(1..6)
}

/// `rounds` rounds of lowered weights.
fn cases_of(rounds: std::ops::Range<usize>) -> impl Strategy<Value = Case> {
    (2u32..7).prop_flat_map(move |ports| {
        let demand = (0..ports, 0..ports, 1u32..7).prop_map(|(src, dst, w)| Demand {
            src,
            dst,
            weight: w as f64,
        });
        // Whole capacities too: levels then tie, up to rounding.
        let cap = prop_oneof![0.5f64..2.0, (1u32..3).prop_map(f64::from)];
        let caps = prop::collection::vec(cap, ports as usize);
        let rounds = rounds.clone();
        (caps, prop::collection::vec(demand, 1..24)).prop_flat_map(move |(caps, ds)| {
            let n = ds.len();
            let round = prop::collection::vec((0..n, 0.0f64..1.0), 1..3);
            (
                Just(caps),
                Just(ds),
                prop::collection::vec(round, rounds.clone()),
            )
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn answers_by_levels_are_fresh_fills((caps, mut ds, rounds) in cases()) {
        let fabric = Fabric {
            up_bytes_per_s: caps.clone(),
            down_bytes_per_s: caps.iter().rev().copied().collect(),
        };
        let mut r = Refill::default();
        let mut rates = vec![0.0; ds.len()];
        let whole = matches!(
            r.answer_levels(&fabric, &ds, None, &mut rates, 0.0),
            LevelAnswer::Whole { .. }
        );
        prop_assert!(whole);
        for round in rounds {
            let mut lowered = Vec::new();
            for (i, keep) in round {
                // Whole flows: 0 to the present weight minus one.
                let w = ds[i].weight;
                if w > 0.0 {
                    ds[i].weight = (w * keep).floor().min(w - 1.0).max(0.0);
                    lowered.push(i as u32);
                }
            }
            if lowered.is_empty() {
                continue;
            }
            r.answer_levels(&fabric, &ds, Some(&lowered), &mut rates, 0.0);
            let mut fresh = vec![0.0; ds.len()];
            WaterFill::default().fill(&ds, &mut Budget::full(&fabric), &mut fresh);
            for (i, f) in fresh.iter().enumerate() {
                let got = r.levels.rate(&ds, i);
                prop_assert!(
                    (got - f).abs() <= 1e-9 * f.abs().max(1.0),
                    "demand {}: {} vs fresh {} ({:?}, caps {:?})", i, got, f, ds, caps
                );
            }
        }
    }
}

/// Everything an answer says, as bits.
fn bits(a: LevelAnswer<'_>, rates: &[f64]) -> (u8, Vec<(u32, u64)>, Vec<u64>) {
    let rates = rates.iter().map(|x| x.to_bits()).collect();
    match a {
        LevelAnswer::Whole { .. } => (0, Vec::new(), rates),
        LevelAnswer::Levels(l) => (1, l.iter().map(|&(r, x)| (r, x.to_bits())).collect(), rates),
        LevelAnswer::Refilled { changed, level, .. } => (
            2,
            changed
                .iter()
                .map(|&i| (i, level[i as usize].to_bits()))
                .collect(),
            rates,
        ),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// The capacity bounds of `Levels::lower` skip sums, never change a verdict: the same
    /// answers, bit for bit, as taking every sum.
    #[test]
    fn bounds_on_loads_give_the_verdicts_of_the_sums((caps, mut ds, rounds) in cases_of(4..16)) {
        let fabric = Fabric {
            up_bytes_per_s: caps.clone(),
            down_bytes_per_s: caps.iter().rev().copied().collect(),
        };
        let (mut a, mut b) = (Refill::default(), Refill::default());
        b.levels.sum_always = true;
        let (mut ra, mut rb) = (vec![0.0; ds.len()], vec![0.0; ds.len()]);
        a.answer_levels(&fabric, &ds, None, &mut ra, 0.0);
        b.answer_levels(&fabric, &ds, None, &mut rb, 0.0);
        for round in rounds {
            let mut lowered = Vec::new();
            for (i, keep) in round {
                let w = ds[i].weight;
                if w > 0.0 {
                    ds[i].weight = (w * keep).floor().min(w - 1.0).max(0.0);
                    lowered.push(i as u32);
                }
            }
            if lowered.is_empty() {
                continue;
            }
            let x = bits(a.answer_levels(&fabric, &ds, Some(&lowered), &mut ra, 0.0), &ra);
            let y = bits(b.answer_levels(&fabric, &ds, Some(&lowered), &mut rb, 0.0), &rb);
            prop_assert_eq!(x, y);
        }
    }
}

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
    (2u32..7).prop_flat_map(|ports| {
        let demand = (0..ports, 0..ports, 1u32..7).prop_map(|(src, dst, w)| Demand {
            src,
            dst,
            weight: w as f64,
        });
        // Whole capacities too: levels then tie, up to rounding.
        let cap = prop_oneof![0.5f64..2.0, (1u32..3).prop_map(f64::from)];
        let caps = prop::collection::vec(cap, ports as usize);
        (caps, prop::collection::vec(demand, 1..24)).prop_flat_map(|(caps, ds)| {
            let n = ds.len();
            let round = prop::collection::vec((0..n, 0.0f64..1.0), 1..3);
            (Just(caps), Just(ds), prop::collection::vec(round, 1..6))
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

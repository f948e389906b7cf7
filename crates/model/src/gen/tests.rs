//! Properties of generated workloads: they stay on the fabric, have positive sizes, and read
//! back unchanged after being written in either trace format.

use std::collections::HashSet;

use proptest::prelude::*;

use super::*;
use crate::coflow::Trace;
use crate::trace::{parse_str, write_to_string, Format};

prop_compose! {
    /// Random classes whose width ranges are reachable: a range at least `ports` wide that
    /// starts at or below `ports^2` always contains some `m x r` with `m, r <= ports`.
    fn custom_spec()(
        ports in 1u32..40,
        coflows in 0usize..15,
        seed in any::<u64>(),
        mean in 0.0f64..1e5,
        raw in prop::collection::vec(
            (1usize..=60, 0usize..200, 1e-6f64..100.0, 0.0f64..1000.0, 0.01f64..1.0),
            1..4,
        ),
    ) -> CustomSpec {
        let total: f64 = raw.iter().map(|r| r.4).sum();
        let p = ports as usize;
        let classes = raw
            .iter()
            .enumerate()
            .map(|(k, &(min_w, extra, min_l, extra_l, w))| ClassSpec {
                name: format!("C{k}"),
                fraction: w / total,
                min_width: min_w.min(p * p),
                max_width: min_w.min(p * p) + p + extra,
                min_length_mb: min_l,
                max_length_mb: min_l + extra_l,
            })
            .collect();
        CustomSpec { ports, coflows, classes, mean_interarrival_ms: mean, seed }
    }
}

fn check(t: &Trace) -> Result<(), TestCaseError> {
    let ids: HashSet<u64> = t.coflows.iter().map(|c| c.id).collect();
    prop_assert_eq!(ids.len(), t.coflows.len());
    for c in &t.coflows {
        prop_assert!(!c.flows.is_empty());
        for f in &c.flows {
            prop_assert!(f.src < t.ports && f.dst < t.ports);
            prop_assert!(f.bytes > 0.0 && f.bytes.is_finite());
        }
    }
    for format in Format::ALL {
        let text = write_to_string(t, format).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let back = parse_str(&text, "gen.txt").map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&back, t, "{} round trip", format);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn custom_workloads_round_trip(spec in custom_spec()) {
        let t = spec.generate().map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(t.coflows.len(), spec.coflows);
        check(&t)?;
    }

    #[test]
    fn fb_scaled_workloads_round_trip(
        base in custom_spec(),
        coflows in 0usize..20,
        load in 0.1f64..10.0,
        extra_ports in prop::option::of(0u32..50),
        seed in any::<u64>(),
    ) {
        let base = CustomSpec { coflows: 8, mean_interarrival_ms: 1000.0, ..base }
            .generate()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let spec = FbScaleSpec { coflows, load, ports: extra_ports.map(|e| base.ports + e), seed };
        let t = spec.generate(&base);
        // Eight Poisson arrivals 1 s apart on average almost never coincide; if they all
        // do, the base has no rate and is refused.
        prop_assume!(t.is_ok());
        let t = t.unwrap();
        prop_assert_eq!(t.coflows.len(), coflows);
        check(&t)?;
    }
}

#[test]
fn default_classes_sum_to_one_and_generate() {
    let spec = CustomSpec {
        ports: 150,
        coflows: 50,
        classes: default_classes(),
        mean_interarrival_ms: 100.0,
        seed: 3,
    };
    spec.validate().unwrap();
    let t = spec.generate().unwrap();
    for format in Format::ALL {
        let text = write_to_string(&t, format).unwrap();
        assert_eq!(parse_str(&text, "gen.txt").unwrap(), t);
    }
}

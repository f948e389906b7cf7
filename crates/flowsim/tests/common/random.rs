//! Random workloads for the property tests: a few ports with uneven capacities (downlinks
//! the uplinks reversed), coflows with optional deadlines.

use coflowkit_model::{Coflow, Fabric, Flow, Trace};
use proptest::prelude::*;

/// 2-5 ports; coflows arriving within `arrivals_s`, with fewer than `flows` flows each and
/// fewer than `coflows` coflows in all.
pub fn workload(
    arrivals_s: f64,
    flows: usize,
    coflows: usize,
) -> impl Strategy<Value = (Trace, Fabric)> {
    (2u32..6).prop_flat_map(move |ports| {
        let flow = (0..ports, 0..ports, 0.01f64..8.0).prop_map(|(src, dst, bytes)| Flow {
            src,
            dst,
            bytes,
        });
        let coflow = (
            0.0f64..arrivals_s,
            prop::collection::vec(flow, 1..flows),
            prop::option::of(0.5f64..10.0),
        );
        let caps = prop::collection::vec(0.5f64..2.0, ports as usize);
        (prop::collection::vec(coflow, 1..coflows), caps).prop_map(move |(cs, caps)| {
            let coflows = (cs.into_iter().enumerate())
                .map(|(i, (arrival, flows, deadline))| {
                    let mut c = Coflow::new(i as u64 + 1, arrival, flows);
                    c.deadline_s = deadline;
                    c
                })
                .collect();
            let fabric = Fabric {
                up_bytes_per_s: caps.clone(),
                down_bytes_per_s: caps.iter().rev().copied().collect(),
            };
            (Trace { ports, coflows }, fabric)
        })
    })
}

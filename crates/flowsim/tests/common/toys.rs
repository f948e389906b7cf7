//! Saath's toy examples (bashuffler-saath.md D3), shared by the Aalo and Saath oracle tests.
#![allow(dead_code)]

use coflowkit_model::{Fabric, Trace};

use super::{coflow, toy};

/// S1: C1 = {P1}, C2 = {P1, P2}, C3 = {P2}, unit sizes, distinct receivers; `c2_first` puts
/// C2 first in FIFO (S1a). CCTs in trace order.
pub fn s1(c2_first: bool) -> (Trace, Fabric) {
    let c1 = coflow(1, 0.0, &[(0, 2, 1.0)]);
    let c2 = coflow(2, 0.0, &[(0, 3, 1.0), (1, 4, 1.0)]);
    let c3 = coflow(3, 0.0, &[(1, 5, 1.0)]);
    let cs = if c2_first {
        vec![c2, c1, c3]
    } else {
        vec![c1, c2, c3]
    };
    toy(6, cs)
}

/// S3: L = {P1:8, P2..P4: 0.5}, S = {P1:1}, both at t=0, L first; distinct receivers.
pub fn s3() -> (Trace, Fabric) {
    toy(
        9,
        vec![
            coflow(
                1,
                0.0,
                &[(0, 4, 8.0), (1, 5, 0.5), (2, 6, 0.5), (3, 7, 0.5)],
            ),
            coflow(2, 0.0, &[(0, 8, 1.0)]),
        ],
    )
}

/// S4: C1 = {P1}, C2 = {P1, P2, P4}, C3 = {P2}, C4 = {P3}, unit sizes, FIFO C1..C4.
pub fn s4() -> (Trace, Fabric) {
    toy(
        10,
        vec![
            coflow(1, 0.0, &[(0, 4, 1.0)]),
            coflow(2, 0.0, &[(0, 5, 1.0), (1, 6, 1.0), (3, 7, 1.0)]),
            coflow(3, 0.0, &[(1, 8, 1.0)]),
            coflow(4, 0.0, &[(2, 9, 1.0)]),
        ],
    )
}

/// A mixed workload with staggered arrivals and shared ports, for "every mode finishes" checks.
pub fn mixed() -> (Trace, Fabric) {
    toy(
        6,
        vec![
            coflow(1, 0.0, &[(0, 3, 30.0), (1, 3, 5.0), (2, 4, 12.0)]),
            coflow(2, 0.5, &[(0, 4, 2.0), (0, 5, 2.0)]),
            coflow(3, 1.0, &[(1, 5, 50.0), (2, 3, 1.0)]),
            coflow(4, 2.0, &[(2, 5, 3.0), (0, 5, 1.0)]),
        ],
    )
}

//! Partially Greedy Source Selection (Algorithm 1): GSS restricted to the pending nodes with the
//! largest load count, i.e. the nodes expected to serve the most fetches soon. Spreading picks
//! over time this way keeps GSS from draining one part of the cluster early and leaving links
//! idle later. O(K (N + F)) per decision, K = number of heaviest nodes.

use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::bandwidth::Bandwidth;
use super::scan::first_best;
use super::{Heaviest, Source};

/// `load[n]` is node n's load count (spec A3); the caller decrements the winner's.
#[allow(clippy::too_many_arguments)]
pub fn pick(
    bw: &mut Bandwidth,
    pattern: &[(u32, u32)],
    dst: u32,
    candidates: &[Source],
    load: &[u64],
    heaviest: Heaviest,
    rng: &mut ChaCha8Rng,
    order: &mut Vec<u32>,
    tolerance: f64,
) -> u32 {
    let up = &bw.fabric().up_bytes_per_s;
    let weight = |n: u32| match heaviest {
        Heaviest::Count => load[n as usize] as f64,
        Heaviest::Time => load[n as usize] as f64 / up[n as usize],
    };
    let max = candidates
        .iter()
        .map(|s| weight(s.node))
        .fold(f64::NEG_INFINITY, f64::max);
    order.clear();
    order.extend(
        candidates
            .iter()
            .filter(|s| weight(s.node) == max)
            .map(|s| s.node),
    );
    // §3.5 "rearranging the selecting sequence": without it, first-hit favours the list front.
    order.shuffle(rng);
    first_best(bw, pattern, dst, order, tolerance)
}

//! Greedy Source Selection: try every pending node and keep the one whose new flow gives the
//! largest cluster-wide max-min utilization. O(M (N + F)) per decision. Ties are broken as in
//! PGSS (shuffled order, first hit), which the paper leaves open for GSS.

use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::bandwidth::Bandwidth;
use super::scan::first_best;
use super::Source;

pub fn pick(
    bw: &mut Bandwidth,
    pattern: &[(u32, u32)],
    dst: u32,
    candidates: &[Source],
    rng: &mut ChaCha8Rng,
    order: &mut Vec<u32>,
    tolerance: f64,
) -> u32 {
    order.clear();
    order.extend(candidates.iter().map(|s| s.node));
    order.shuffle(rng);
    first_best(bw, pattern, dst, order, tolerance)
}

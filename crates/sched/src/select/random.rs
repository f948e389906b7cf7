//! Random Source Selection: Hadoop's reduce-side `ShuffleSchedulerImpl.getHost()` picks a host
//! uniformly among the pending ones, blind to bandwidth. O(1) per decision.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::Source;

/// A pending node, uniformly at random (`candidates` non-empty).
pub fn pick(rng: &mut ChaCha8Rng, candidates: &[Source]) -> u32 {
    candidates[rng.gen_range(0..candidates.len())].node
}

//! Q2's `contributor_ip`: addresses from the whole IPv4 space, with a heavy-hitter head (a
//! share of the rows from a thousand hot addresses with Zipf frequencies) so the top 10 means
//! something and hash partitioning is skewed, as the paper saw (the unluckiest server about
//! 1.5x the average, spec §3.3).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::Distribution;

use crate::QueryError;

#[derive(Debug, Clone)]
pub struct Q2Params {
    /// Hot addresses.
    pub head: usize,
    /// The share of rows drawn from the head.
    pub head_share: f64,
    /// Zipf exponent within the head.
    pub zipf_s: f64,
}

impl Default for Q2Params {
    fn default() -> Self {
        Q2Params {
            head: 1000,
            head_share: 0.15,
            zipf_s: 1.2,
        }
    }
}

pub fn q2_rows(seed: u64, p: &Q2Params) -> Result<impl Iterator<Item = u32>, QueryError> {
    if !(0.0..=1.0).contains(&p.head_share) || p.head == 0 {
        return Err(QueryError::BadArgument(
            "Q2's head needs at least one address and a share in [0, 1]".into(),
        ));
    }
    let s = super::stream_seed(seed, "q2");
    let head: Vec<u32> = (0..p.head as u64)
        .map(|i| crate::hash::hash_bytes(s, &i.to_le_bytes()) as u32)
        .collect();
    let z = super::zipf(p.head, p.zipf_s)?;
    let mut rng = ChaCha8Rng::seed_from_u64(s);
    let share = p.head_share;
    Ok(std::iter::from_fn(move || {
        Some(if rng.gen_bool(share) {
            head[z.sample(&mut rng) as usize - 1]
        } else {
            rng.gen()
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn a_hot_head_over_a_large_space() {
        let p = Q2Params::default();
        let mut freq: HashMap<u32, usize> = HashMap::new();
        let n = 40_000;
        for ip in q2_rows(1, &p).unwrap().take(n) {
            *freq.entry(ip).or_default() += 1;
        }
        let top = *freq.values().max().unwrap();
        // 15 % from the head, the hottest with 1/H(1000, 1.2) of that: about 3.5 %.
        assert!(top > n / 50 && top < n / 15, "hottest {top} of {n}");
        // The rest is spread over 2^32 addresses: almost all distinct.
        assert!(freq.len() > n * 8 / 10, "{} distinct", freq.len());
    }
}

//! Q1's `language,views`: a few hundred language codes with Zipf frequencies, views small
//! positive integers (mostly 1-10, up to 1000).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::Distribution;

use crate::QueryError;

#[derive(Debug, Clone)]
pub struct Q1Params {
    /// Distinct languages ("a few hundred", spec §3.1).
    pub languages: usize,
    /// Zipf exponent of their frequencies.
    pub zipf_s: f64,
    pub max_views: u64,
}

impl Default for Q1Params {
    fn default() -> Self {
        Q1Params {
            languages: 300,
            zipf_s: 1.0,
            max_views: 1000,
        }
    }
}

/// Language i's code: two or three letters (Wikipedia-like: `en`, `de`, `zh-yue` ...), a
/// bijection of i so the most frequent is not simply `aa`.
pub fn language_name(i: usize) -> String {
    let letters = |mut n: usize, len: usize| {
        let mut s = vec![b'a'; len];
        for c in s.iter_mut().rev() {
            *c = b'a' + (n % 26) as u8;
            n /= 26;
        }
        String::from_utf8(s).expect("ascii")
    };
    if i < 676 {
        letters((i * 37 + 11) % 676, 2)
    } else {
        // Beyond two letters: a region suffix, as in `zh-yue`.
        format!("{}-{}", letters(i % 676, 2), letters(i / 676, 3))
    }
}

/// The global stream of rows (endless).
pub fn q1_rows(seed: u64, p: &Q1Params) -> Result<impl Iterator<Item = (String, u64)>, QueryError> {
    if p.languages == 0 || p.max_views == 0 {
        return Err(QueryError::BadArgument(
            "Q1 needs at least one language and views of at least 1".into(),
        ));
    }
    let names: Vec<String> = (0..p.languages).map(language_name).collect();
    let z = super::zipf(p.languages, p.zipf_s)?;
    let mut rng = ChaCha8Rng::seed_from_u64(super::stream_seed(seed, "q1"));
    let max = p.max_views;
    Ok(std::iter::from_fn(move || {
        let lang = names[z.sample(&mut rng) as usize - 1].clone();
        let u: f64 = rng.gen();
        let views = 1 + ((u.powi(4) * (max - 1) as f64) as u64).min(max - 1);
        Some((lang, views))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn names_are_distinct_and_frequencies_skewed() {
        let names: std::collections::HashSet<_> = (0..2000).map(language_name).collect();
        assert_eq!(names.len(), 2000);
        let mut freq: HashMap<String, usize> = HashMap::new();
        let p = Q1Params::default();
        for (l, v) in q1_rows(5, &p).unwrap().take(30_000) {
            assert!((1..=p.max_views).contains(&v));
            *freq.entry(l).or_default() += 1;
        }
        let mut f: Vec<usize> = freq.values().copied().collect();
        f.sort_unstable_by(|a, b| b.cmp(a));
        // Zipf(1) over 300: the top language has about 1/H(300) = 16 % of the rows.
        assert!(f[0] > 30_000 / 10 && f[0] < 30_000 / 4, "{}", f[0]);
        assert!(f.len() > 200, "only {} languages seen", f.len());
        let a: Vec<_> = q1_rows(5, &p).unwrap().take(50).collect();
        let b: Vec<_> = q1_rows(5, &p).unwrap().take(50).collect();
        let c: Vec<_> = q1_rows(6, &p).unwrap().take(50).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}

//! Q3's two tables over one repository key space.
//!
//! - `languages` (`lang,bytes,repo_name`): repository r has 1-4 distinct languages (Zipf over
//!   a hundred names), bytes log-uniform in 1..10^6; repositories are laid out in order until
//!   the table has its rows, which fixes the number of repositories R.
//! - `commits` (`repo_name,author`): as many rows (the original's parity); each picks a
//!   repository by Zipf (s = 0.9: a few very busy repositories, the hot keys of shuffle 1) and
//!   one of that repository's authors, whose number grows as the square root of the
//!   repository's expected commits. So the rows hold many duplicate (repo, author) pairs, as
//!   `GROUP BY repo_name, author` expects; authors come from a global pool (Zipf) so a
//!   prolific author spans many repositories and the (lang, author) sums add up across them.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::Distribution;

use crate::hash::hash_bytes;
use crate::QueryError;

/// Programming languages (the head of GitHub's list), then `Lang-NN`.
const NAMES: [&str; 30] = [
    "JavaScript",
    "Python",
    "Java",
    "Go",
    "C++",
    "Ruby",
    "PHP",
    "TypeScript",
    "C#",
    "C",
    "Shell",
    "Rust",
    "Swift",
    "Kotlin",
    "Objective-C",
    "Scala",
    "HTML",
    "CSS",
    "Perl",
    "R",
    "Lua",
    "Haskell",
    "Clojure",
    "Elixir",
    "Erlang",
    "Dart",
    "Julia",
    "OCaml",
    "F#",
    "Vim script",
];

#[derive(Debug, Clone)]
pub struct Q3Params {
    pub languages: usize,
    pub lang_zipf_s: f64,
    pub max_langs_per_repo: usize,
    pub repo_zipf_s: f64,
    /// Distinct authors per row of the table.
    pub authors_per_row: f64,
    pub author_zipf_s: f64,
    pub max_authors_per_repo: usize,
}

impl Default for Q3Params {
    fn default() -> Self {
        Q3Params {
            languages: 100,
            lang_zipf_s: 1.0,
            max_langs_per_repo: 4,
            repo_zipf_s: 0.9,
            authors_per_row: 0.25,
            author_zipf_s: 0.8,
            max_authors_per_repo: 300,
        }
    }
}

pub fn lang_name(i: usize) -> String {
    NAMES
        .get(i)
        .map(|s| s.to_string())
        .unwrap_or_else(|| format!("Lang-{i:02}"))
}

pub fn repo_name(r: usize) -> String {
    format!("user{}/repo{r}", r / 3)
}

pub fn author_name(a: usize) -> String {
    format!("dev{a:06}")
}

/// Both tables of `total` rows each.
pub struct Q3Gen {
    seed: u64,
    total: usize,
    p: Q3Params,
    repos: usize,
}

impl Q3Gen {
    pub fn new(seed: u64, total: usize, p: &Q3Params) -> Result<Q3Gen, QueryError> {
        if p.languages == 0 || p.max_langs_per_repo == 0 || p.max_authors_per_repo == 0 {
            return Err(QueryError::BadArgument(
                "Q3 needs languages, and at least one language and author per repository".into(),
            ));
        }
        let mut g = Q3Gen {
            seed,
            total,
            p: p.clone(),
            repos: 0,
        };
        let mut rows = 0;
        while rows < total {
            rows += g.langs_of(g.repos);
            g.repos += 1;
        }
        Ok(g)
    }

    /// Repositories the tables mention (R).
    pub fn repos(&self) -> usize {
        self.repos
    }

    fn h(&self, what: &str, a: u64, b: u64) -> u64 {
        let mut key = [0u8; 16];
        key[..8].copy_from_slice(&a.to_le_bytes());
        key[8..].copy_from_slice(&b.to_le_bytes());
        hash_bytes(super::stream_seed(self.seed, what), &key)
    }

    fn langs_of(&self, r: usize) -> usize {
        let n = 1 + (self.h("langs", r as u64, 0) % self.p.max_langs_per_repo as u64) as usize;
        n.min(self.p.languages)
    }

    /// Authors of repository r: about sqrt(its expected commits), at least one.
    fn authors_of(&self, r: usize, h_r: f64) -> usize {
        let expected = self.total as f64 * ((r + 1) as f64).powf(-self.p.repo_zipf_s) / h_r;
        let jitter = (self.h("jitter", r as u64, 0) % 2) as usize;
        (1 + expected.sqrt() as usize + jitter).min(self.p.max_authors_per_repo)
    }

    pub fn languages(&self) -> impl Iterator<Item = (String, u64, String)> + '_ {
        let z = super::zipf(self.p.languages, self.p.lang_zipf_s).expect("checked in new");
        let mut rng = ChaCha8Rng::seed_from_u64(super::stream_seed(self.seed, "q3-languages"));
        (0..self.repos)
            .flat_map(move |r| {
                let n = self.langs_of(r);
                let mut picked: Vec<usize> = Vec::with_capacity(n);
                while picked.len() < n {
                    let l = z.sample(&mut rng) as usize - 1;
                    if !picked.contains(&l) {
                        picked.push(l);
                    }
                }
                let name = repo_name(r);
                picked
                    .into_iter()
                    .map(|l| {
                        let bytes = 10f64.powf(rng.gen::<f64>() * 6.0) as u64;
                        (lang_name(l), bytes.max(1), name.clone())
                    })
                    .collect::<Vec<_>>()
            })
            .take(self.total)
    }

    pub fn commits(&self) -> impl Iterator<Item = (String, String)> + '_ {
        let repos = self.repos.max(1);
        let zr = super::zipf(repos, self.p.repo_zipf_s).expect("checked in new");
        let pool = ((self.total as f64 * self.p.authors_per_row) as usize).max(1);
        let za = super::zipf(pool, self.p.author_zipf_s).expect("checked in new");
        let h_r: f64 = (1..=repos)
            .map(|k| (k as f64).powf(-self.p.repo_zipf_s))
            .sum();
        let mut rng = ChaCha8Rng::seed_from_u64(super::stream_seed(self.seed, "q3-commits"));
        (0..self.total).map(move |_| {
            let r = zr.sample(&mut rng) as usize - 1;
            let slot = rng.gen_range(0..self.authors_of(r, h_r));
            // The author in this slot of this repository: fixed by (r, slot), drawn from the
            // global pool by its own seeded stream.
            let mut ra = ChaCha8Rng::seed_from_u64(self.h("author", r as u64, slot as u64));
            let author = za.sample(&mut ra) as usize - 1;
            // Authors are numbered so the most prolific is not simply dev000000.
            let author = (author * 7919 + 13) % pool.max(2);
            (repo_name(r), author_name(author))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    #[test]
    fn equal_row_counts_shared_repositories_and_duplicate_commits() {
        let p = Q3Params::default();
        let g = Q3Gen::new(9, 20_000, &p).unwrap();
        let langs: Vec<_> = g.languages().collect();
        let commits: Vec<_> = g.commits().collect();
        assert_eq!(langs.len(), 20_000);
        assert_eq!(commits.len(), 20_000);
        let repos: HashSet<&str> = langs.iter().map(|l| l.2.as_str()).collect();
        assert_eq!(repos.len(), g.repos());
        // Every commit's repository has languages (the join finds partners).
        assert!(commits.iter().all(|c| repos.contains(c.0.as_str())));
        // A repository's languages are distinct.
        let pairs: HashSet<(&str, &str)> =
            langs.iter().map(|l| (l.0.as_str(), l.2.as_str())).collect();
        assert_eq!(pairs.len(), langs.len());
        let distinct: HashSet<&(String, String)> = commits.iter().collect();
        assert!(
            distinct.len() < commits.len() * 3 / 4,
            "{} distinct of {}",
            distinct.len(),
            commits.len()
        );
        // A hot repository and authors in several repositories.
        let mut per_repo: HashMap<&str, usize> = HashMap::new();
        let mut repos_of: HashMap<&str, HashSet<&str>> = HashMap::new();
        for (r, a) in &commits {
            *per_repo.entry(r).or_default() += 1;
            repos_of.entry(a).or_default().insert(r);
        }
        assert!(*per_repo.values().max().unwrap() > 20_000 / 50);
        assert!(repos_of.values().any(|s| s.len() > 5));
        let again: Vec<_> = Q3Gen::new(9, 20_000, &p)
            .unwrap()
            .commits()
            .take(10)
            .collect();
        assert_eq!(again, commits[..10]);
    }
}

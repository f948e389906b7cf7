//! Seeded synthetic tables (spec millisort.md §8.4; the seeds give no generator, the original
//! used real BigQuery exports). Each table is one global stream of rows from its own seeded
//! generator, cut into `ranks` tablets of `rows_per_rank` rows, so rank r holds rows
//! `[r n, (r + 1) n)` as in the original.

mod q1;
mod q2;
mod q3;
mod write;

use std::path::{Path, PathBuf};

pub use q1::{q1_rows, Q1Params};
pub use q2::{q2_rows, Q2Params};
pub use q3::{Q3Gen, Q3Params};

use crate::tablet::Table;
use crate::QueryError;

/// The knobs of all three generators (defaults: see each).
#[derive(Debug, Clone, Default)]
pub struct GenParams {
    pub q1: Q1Params,
    pub q2: Q2Params,
    pub q3: Q3Params,
}

/// Writes the four tables' tablets under `dir` (`q1/`, `q2/`, `q3/`); returns the files.
pub fn generate(
    dir: &Path,
    ranks: usize,
    rows_per_rank: usize,
    seed: u64,
    params: &GenParams,
) -> Result<Vec<PathBuf>, QueryError> {
    if ranks == 0 {
        return Err(QueryError::BadArgument("--ranks must be at least 1".into()));
    }
    let total = ranks
        .checked_mul(rows_per_rank)
        .ok_or_else(|| QueryError::BadArgument("ranks x rows per rank overflows".into()))?;
    let mut files = Vec::new();
    files.extend(write::tablets(
        dir,
        Table::Views,
        ranks,
        rows_per_rank,
        q1_rows(seed, &params.q1)?.map(|(l, v)| vec![l, v.to_string()]),
    )?);
    files.extend(write::tablets(
        dir,
        Table::Edits,
        ranks,
        rows_per_rank,
        q2_rows(seed, &params.q2)?.map(|ip| vec![std::net::Ipv4Addr::from(ip).to_string()]),
    )?);
    let q3 = Q3Gen::new(seed, total, &params.q3)?;
    files.extend(write::tablets(
        dir,
        Table::Languages,
        ranks,
        rows_per_rank,
        q3.languages().map(|(l, b, r)| vec![l, b.to_string(), r]),
    )?);
    files.extend(write::tablets(
        dir,
        Table::Commits,
        ranks,
        rows_per_rank,
        q3.commits().map(|(r, a)| vec![r, a]),
    )?);
    Ok(files)
}

/// A generator's own seed: the run's seed and the table's name, hashed.
pub(crate) fn stream_seed(seed: u64, table: &str) -> u64 {
    crate::hash::hash_bytes(seed, table.as_bytes())
}

pub(crate) fn zipf(n: usize, s: f64) -> Result<rand_distr::Zipf<f64>, QueryError> {
    rand_distr::Zipf::new(n.max(1) as u64, s)
        .map_err(|e| QueryError::BadArgument(format!("Zipf over {n} with exponent {s}: {e}")))
}

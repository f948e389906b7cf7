//! How the reference orders coflows for its clairvoyant schedulers (`addToSortedJobs`): FIFO
//! appends; the others insert a new coflow before the first one it compares smaller than, so ties
//! keep admission order. The order is fixed at admission and never revisited (LCF compares the
//! bytes left at that moment; the others static keys).

use std::cmp::Ordering;

use super::book::Book;
use super::Algo;

/// Bytes LCF compares (`calcShuffleBytesLeft`).
fn lcf_left(book: &Book, job: u32) -> f64 {
    book.reducers_of(job)
        .map(|r| book.reducers[r].lcf_left)
        .sum()
}

fn compare(algo: Algo, book: &Book, a: u32, b: u32) -> Ordering {
    let (ja, jb) = (&book.jobs[a as usize], &book.jobs[b as usize]);
    let f = |x: f64, y: f64| x.partial_cmp(&y).unwrap_or(Ordering::Equal);
    match algo {
        Algo::Scf => f(ja.scf_key, jb.scf_key),
        Algo::Ncf => ja.ncf_key.cmp(&jb.ncf_key),
        Algo::Lcf => f(lcf_left(book, a), lcf_left(book, b)),
        Algo::Sebf => f(ja.alpha, jb.alpha),
        _ => Ordering::Equal,
    }
}

/// Insert `job` into `sorted` as the reference's `algo` does.
pub fn insert(algo: Algo, book: &Book, sorted: &mut Vec<u32>, job: u32) {
    let at = if algo == Algo::Fifo {
        sorted.len()
    } else {
        sorted
            .iter()
            .position(|&s| compare(algo, book, job, s) == Ordering::Less)
            .unwrap_or(sorted.len())
    };
    sorted.insert(at, job);
}

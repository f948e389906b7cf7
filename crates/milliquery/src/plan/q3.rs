//! Q3: shuffle the commits and the languages by repository, dedupe (repo, author) (the SQL's
//! `GROUP BY repo_name, author`), join on the repository locally while pre-aggregating
//! SUM(bytes) per (lang, author) (the original did both), shuffle those sums by (lang,
//! author), add them up, keep the local top 100 and gather with a top-100 merge. With hot-key
//! combining on, each rank also dedupes its own commits before shuffle 1, so a busy
//! repository costs one row per (author, sender) instead of one per commit.

use std::collections::HashMap;

use crate::codec::{Reader, Writer};
use crate::hash::{pair_target, target};
use crate::rows::{top_k, LangAuthorBytes, Q3_LIMIT};

pub fn partition_commits(
    commits: &[(String, String)],
    ranks: usize,
    seed: u64,
    combine: bool,
) -> Vec<Vec<u8>> {
    let mut refs: Vec<&(String, String)> = commits.iter().collect();
    if combine {
        refs.sort_unstable();
        refs.dedup();
    }
    let mut out = vec![Writer::default(); ranks];
    for (repo, author) in refs {
        let w = &mut out[target(seed, repo.as_bytes(), ranks)];
        w.str(repo);
        w.str(author);
    }
    out.into_iter().map(|w| w.0).collect()
}

/// Appends a message's (repo, author) rows; returns how many.
pub fn decode_commits<'a>(bytes: &'a [u8], into: &mut Vec<(&'a str, &'a str)>) -> Option<u64> {
    let mut r = Reader::new(bytes);
    let mut n = 0;
    while !r.is_empty() {
        into.push((r.str()?, r.str()?));
        n += 1;
    }
    Some(n)
}

/// `GROUP BY repo_name, author`: sorted by (repo, author), each pair once.
pub fn dedupe<'a>(mut rows: Vec<(&'a str, &'a str)>) -> Vec<(&'a str, &'a str)> {
    rows.sort_unstable();
    rows.dedup();
    rows
}

pub fn partition_languages(
    langs: &[(String, u64, String)],
    ranks: usize,
    seed: u64,
) -> Vec<Vec<u8>> {
    let mut out = vec![Writer::default(); ranks];
    for (lang, bytes, repo) in langs {
        let w = &mut out[target(seed, repo.as_bytes(), ranks)];
        w.str(lang);
        w.u64(*bytes);
        w.str(repo);
    }
    out.into_iter().map(|w| w.0).collect()
}

pub fn decode_languages<'a>(
    bytes: &'a [u8],
    into: &mut Vec<(&'a str, u64, &'a str)>,
) -> Option<u64> {
    let mut r = Reader::new(bytes);
    let mut n = 0;
    while !r.is_empty() {
        into.push((r.str()?, r.u64()?, r.str()?));
        n += 1;
    }
    Some(n)
}

/// The join on the repository (a hash join: the deduped authors are the build side, grouped
/// since they are sorted), pre-aggregated: SUM(bytes) per (lang, author) over this rank's
/// repositories. Also returns the join's output rows (before pre-aggregation).
pub fn join_preaggregate<'a>(
    authors: &[(&'a str, &'a str)],
    langs: &[(&'a str, u64, &'a str)],
) -> (HashMap<(&'a str, &'a str), u64>, u64) {
    let mut by_repo: HashMap<&str, (usize, usize)> = HashMap::new();
    let mut i = 0;
    while i < authors.len() {
        let mut j = i + 1;
        while j < authors.len() && authors[j].0 == authors[i].0 {
            j += 1;
        }
        by_repo.insert(authors[i].0, (i, j));
        i = j;
    }
    let mut agg: HashMap<(&str, &str), u64> = HashMap::new();
    let mut joined = 0;
    for &(lang, bytes, repo) in langs {
        if let Some(&(a, b)) = by_repo.get(repo) {
            joined += (b - a) as u64;
            for &(_, author) in &authors[a..b] {
                let s = agg.entry((lang, author)).or_insert(0);
                *s = s.saturating_add(bytes);
            }
        }
    }
    (agg, joined)
}

pub fn partition_sums(sums: &HashMap<(&str, &str), u64>, ranks: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut out = vec![Writer::default(); ranks];
    for (&(lang, author), &n) in sums {
        let w = &mut out[pair_target(seed, lang, author, ranks)];
        w.str(lang);
        w.str(author);
        w.u64(n);
    }
    out.into_iter().map(|w| w.0).collect()
}

/// Adds a message of (lang, author, sum) rows into `agg`; returns how many rows.
pub fn add_sums<'a>(bytes: &'a [u8], agg: &mut HashMap<(&'a str, &'a str), u64>) -> Option<u64> {
    let mut r = Reader::new(bytes);
    let mut n = 0;
    while !r.is_empty() {
        let (l, a, s) = (r.str()?, r.str()?, r.u64()?);
        let e = agg.entry((l, a)).or_insert(0);
        *e = e.saturating_add(s);
        n += 1;
    }
    Some(n)
}

fn order(a: &(&str, &str, u64), b: &(&str, &str, u64)) -> std::cmp::Ordering {
    b.2.cmp(&a.2)
        .then_with(|| a.0.cmp(b.0))
        .then_with(|| a.1.cmp(b.1))
}

/// The 100 largest sums, ties by lang then author ascending (`crate::rows::q3_order`).
pub fn local_top<'a>(agg: &HashMap<(&'a str, &'a str), u64>) -> Vec<(&'a str, &'a str, u64)> {
    let v: Vec<(&str, &str, u64)> = agg.iter().map(|(&(l, a), &n)| (l, a, n)).collect();
    top_k(v, Q3_LIMIT, order)
}

pub fn encode_top(top: &[(&str, &str, u64)]) -> Vec<u8> {
    let mut w = Writer::default();
    for &(l, a, n) in top {
        w.str(l);
        w.str(a);
        w.u64(n);
    }
    w.0
}

fn decode_top(bytes: &[u8]) -> Option<Vec<(&str, &str, u64)>> {
    let mut r = Reader::new(bytes);
    let mut v = Vec::new();
    while !r.is_empty() {
        v.push((r.str()?, r.str()?, r.u64()?));
    }
    Some(v)
}

/// The gather's combine: the top 100 of both lists (each (lang, author) lives on one rank
/// after shuffle 3, so its sum is complete).
pub fn merge_top(a: &[u8], b: &[u8]) -> Option<Vec<u8>> {
    let mut v = decode_top(a)?;
    v.extend(decode_top(b)?);
    Some(encode_top(&top_k(v, Q3_LIMIT, order)))
}

pub fn finish(bytes: &[u8]) -> Option<Vec<LangAuthorBytes>> {
    Some(
        top_k(decode_top(bytes)?, Q3_LIMIT, order)
            .into_iter()
            .map(|(l, a, n)| LangAuthorBytes {
                lang: l.to_string(),
                author: a.to_string(),
                total_bytes: n,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn dedupe_join_and_preaggregate() {
        let commits = s(&[("r1", "ann"), ("r1", "bob"), ("r1", "ann"), ("r2", "ann")]);
        for combine in [false, true] {
            let msg = partition_commits(&commits, 1, 7, combine).remove(0);
            let mut rows = Vec::new();
            let n = decode_commits(&msg, &mut rows).unwrap();
            assert_eq!(n, if combine { 3 } else { 4 });
            let authors = dedupe(rows);
            assert_eq!(authors, vec![("r1", "ann"), ("r1", "bob"), ("r2", "ann")]);
            let langs = [
                ("Go", 10, "r1"),
                ("C", 5, "r2"),
                ("Go", 1, "r2"),
                ("C", 9, "r3"),
            ];
            let (agg, joined) = join_preaggregate(&authors, &langs);
            // r1's Go pairs with ann and bob; r2's two languages with ann; r3 has no commits.
            assert_eq!(joined, 4);
            assert_eq!(agg[&("Go", "ann")], 11);
            assert_eq!(agg[&("Go", "bob")], 10);
            assert_eq!(agg[&("C", "ann")], 5);
            assert_eq!(agg.len(), 3);
        }
    }

    #[test]
    fn sums_from_several_senders_add_up_and_the_top_merges() {
        let mut a = HashMap::new();
        a.insert(("Go", "ann"), 3u64);
        a.insert(("C", "bob"), 4u64);
        let mut b = HashMap::new();
        b.insert(("Go", "ann"), 2u64);
        let (ma, mb) = (partition_sums(&a, 1, 0), partition_sums(&b, 1, 0));
        let mut agg = HashMap::new();
        assert_eq!(add_sums(&ma[0], &mut agg), Some(2));
        assert_eq!(add_sums(&mb[0], &mut agg), Some(1));
        let top = local_top(&agg);
        // Go/ann 5 first; C/bob 4.
        assert_eq!(top, vec![("Go", "ann", 5), ("C", "bob", 4)]);
        let merged = merge_top(&encode_top(&top), &encode_top(&[("Ada", "cy", 4)])).unwrap();
        let got = finish(&merged).unwrap();
        let keys: Vec<(&str, &str)> = got
            .iter()
            .map(|r| (r.lang.as_str(), r.author.as_str()))
            .collect();
        assert_eq!(keys, vec![("Go", "ann"), ("Ada", "cy"), ("C", "bob")]);
    }
}

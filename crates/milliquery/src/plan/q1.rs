//! Q1: scan into a per-language sum, then a gather whose merge adds the sums at every tree
//! node. Messages carry `(language, views)` pairs sorted by language.

use std::collections::HashMap;

use crate::codec::{Reader, Writer};
use crate::rows::LangViews;

/// The local aggregate of one tablet. Sums saturate at u64::MAX (a SQL engine's 64-bit sum
/// would fail earlier; the generator's values are far from either).
pub fn scan(rows: &[(String, u64)]) -> HashMap<String, u64> {
    let mut m: HashMap<String, u64> = HashMap::new();
    for (lang, views) in rows {
        match m.get_mut(lang.as_str()) {
            Some(v) => *v = v.saturating_add(*views),
            None => {
                m.insert(lang.clone(), *views);
            }
        }
    }
    m
}

pub fn encode(m: &HashMap<String, u64>) -> Vec<u8> {
    let mut v: Vec<(&String, &u64)> = m.iter().collect();
    v.sort_unstable();
    let mut w = Writer::default();
    for (l, n) in v {
        w.str(l);
        w.u64(*n);
    }
    w.0
}

pub fn decode_into(bytes: &[u8], m: &mut HashMap<String, u64>) -> Option<()> {
    let mut r = Reader::new(bytes);
    while !r.is_empty() {
        let l = r.str()?;
        let n = r.u64()?;
        match m.get_mut(l) {
            Some(v) => *v = v.saturating_add(n),
            None => {
                m.insert(l.to_string(), n);
            }
        }
    }
    Some(())
}

/// The gather's combine: the two maps' per-language sums.
pub fn merge(a: &[u8], b: &[u8]) -> Option<Vec<u8>> {
    let mut m = HashMap::new();
    decode_into(a, &mut m)?;
    decode_into(b, &mut m)?;
    Some(encode(&m))
}

/// The root's answer: every language with its sum, ordered by language.
pub fn finish(bytes: &[u8]) -> Option<Vec<LangViews>> {
    let mut m = HashMap::new();
    decode_into(bytes, &mut m)?;
    let mut v: Vec<LangViews> = m
        .into_iter()
        .map(|(language, views)| LangViews { language, views })
        .collect();
    v.sort_unstable_by(|a, b| a.language.cmp(&b.language));
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(v: &[(&str, u64)]) -> Vec<(String, u64)> {
        v.iter().map(|(l, n)| (l.to_string(), *n)).collect()
    }

    #[test]
    fn scan_merge_finish_sum_per_language() {
        let a = encode(&scan(&rows(&[("en", 2), ("de", 1), ("en", 3)])));
        let b = encode(&scan(&rows(&[("fr", 7), ("de", 4)])));
        let c = encode(&scan(&[]));
        let ab = merge(&a, &b).unwrap();
        let abc = merge(&ab, &c).unwrap();
        assert_eq!(merge(&c, &ab).unwrap(), abc);
        let got = finish(&abc).unwrap();
        let want = [("de", 5), ("en", 5), ("fr", 7)];
        assert_eq!(got.len(), 3);
        for (g, (l, n)) in got.iter().zip(want) {
            assert_eq!((g.language.as_str(), g.views), (l, n));
        }
        assert!(finish(&abc[..abc.len() - 1]).is_none());
    }
}

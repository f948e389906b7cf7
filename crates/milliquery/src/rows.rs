//! The result rows of the three queries and the one total order each top-K uses: larger
//! count or sum first, ties broken by the key ascending (Q2: the address as dotted-quad text;
//! Q3: lang, then author; text compares byte-wise, as SQL's binary collation does), so the
//! answer is unique.

use std::cmp::Ordering;

use serde::Serialize;

/// Q2 keeps the 10 most frequent addresses, Q3 the 100 largest sums (the SQL's LIMIT 100;
/// the original code's 10 is a known discrepancy, spec millisort.md §10.9).
pub const Q2_LIMIT: usize = 10;
pub const Q3_LIMIT: usize = 100;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LangViews {
    pub language: String,
    pub views: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IpCount {
    pub ip: String,
    pub count: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LangAuthorBytes {
    pub lang: String,
    pub author: String,
    pub total_bytes: u64,
}

/// A query's answer, as the JSON shows it (a list of row objects).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Answer {
    Q1(Vec<LangViews>),
    Q2(Vec<IpCount>),
    Q3(Vec<LangAuthorBytes>),
}

/// The dotted quad of an address, zero-padded to 15 bytes: comparing keys compares the texts
/// (a shorter text that is a prefix sorts first, and 0 is below every digit and the dot).
pub fn ip_text_key(ip: u32) -> [u8; 15] {
    let mut k = [0u8; 15];
    let mut n = 0;
    for (i, o) in ip.to_be_bytes().into_iter().enumerate() {
        if i > 0 {
            k[n] = b'.';
            n += 1;
        }
        if o >= 100 {
            k[n] = b'0' + o / 100;
            n += 1;
        }
        if o >= 10 {
            k[n] = b'0' + o / 10 % 10;
            n += 1;
        }
        k[n] = b'0' + o % 10;
        n += 1;
    }
    k
}

pub fn ip_text_cmp(a: u32, b: u32) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    ip_text_key(a).cmp(&ip_text_key(b))
}

/// Q2's order on (address, count).
pub fn q2_order(a: &(u32, u64), b: &(u32, u64)) -> Ordering {
    b.1.cmp(&a.1).then_with(|| ip_text_cmp(a.0, b.0))
}

/// Q3's order on (lang, author, total bytes).
pub fn q3_order(a: &(String, String, u64), b: &(String, String, u64)) -> Ordering {
    b.2.cmp(&a.2)
        .then_with(|| a.0.cmp(&b.0))
        .then_with(|| a.1.cmp(&b.1))
}

/// The first `k` of `v` under `order`, in that order: a selection, then a sort of only `k`.
pub fn top_k<T>(mut v: Vec<T>, k: usize, order: impl Fn(&T, &T) -> Ordering) -> Vec<T> {
    if k == 0 {
        return Vec::new();
    }
    if v.len() > k {
        v.select_nth_unstable_by(k - 1, &order);
        v.truncate(k);
    }
    v.sort_unstable_by(&order);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::net::Ipv4Addr;

    #[test]
    fn addresses_compare_as_text_not_as_numbers() {
        let nine = u32::from(Ipv4Addr::new(9, 0, 0, 1));
        let ten = u32::from(Ipv4Addr::new(10, 0, 0, 2));
        assert!(nine < ten);
        assert_eq!(ip_text_cmp(nine, ten), Ordering::Greater);
        assert_eq!(ip_text_cmp(ten, ten), Ordering::Equal);
        let max = u32::from(Ipv4Addr::new(255, 255, 255, 255));
        assert_eq!(ip_text_cmp(max, 0), Ordering::Greater);
    }

    proptest! {
        #[test]
        fn text_keys_order_as_the_dotted_quads_do(a: u32, b: u32) {
            let (x, y) = (Ipv4Addr::from(a).to_string(), Ipv4Addr::from(b).to_string());
            prop_assert_eq!(ip_text_cmp(a, b), x.cmp(&y));
            let k = ip_text_key(a);
            let len = k.iter().position(|&c| c == 0).unwrap_or(15);
            prop_assert_eq!(&k[..len], x.as_bytes());
        }
    }

    #[test]
    fn ties_are_broken_by_the_key_ascending() {
        let ip = |s: &str| u32::from(s.parse::<Ipv4Addr>().unwrap());
        let v = vec![
            (ip("9.9.9.9"), 3),
            (ip("10.0.0.1"), 3),
            (ip("1.2.3.4"), 5),
            (ip("100.0.0.0"), 3),
        ];
        let got = top_k(v, 3, q2_order);
        assert_eq!(
            got,
            vec![
                (ip("1.2.3.4"), 5),
                (ip("10.0.0.1"), 3),
                (ip("100.0.0.0"), 3)
            ]
        );
        let s = |a: &str, b: &str, n| (a.to_string(), b.to_string(), n);
        let got = top_k(
            vec![
                s("Go", "b", 7),
                s("C", "z", 7),
                s("Go", "a", 7),
                s("Zig", "a", 9),
            ],
            3,
            q3_order,
        );
        assert_eq!(got, vec![s("Zig", "a", 9), s("C", "z", 7), s("Go", "a", 7)]);
    }

    proptest! {
        #[test]
        fn top_k_is_the_prefix_of_the_full_sort(
            v in prop::collection::vec((0u32..50, 0u64..5), 0..60), k in 0usize..20
        ) {
            let mut all = v.clone();
            all.sort_by(q2_order);
            all.truncate(k);
            prop_assert_eq!(top_k(v, k, q2_order), all);
        }
    }
}

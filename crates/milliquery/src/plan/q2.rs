//! Q2: hash-partition the addresses, count per address where it lands, keep the local top
//! 10, and gather with a merge that keeps the top 10. With hot-key combining on, each rank
//! counts its own addresses first and ships an address seen at least `PAIR_MIN` times as one
//! (address, count) pair, the rest as raw addresses: a hot address costs one row per sender
//! instead of one per occurrence, and no message grows (a pair's 12 bytes replace at least
//! three 4-byte addresses).

use crate::codec::{Reader, Writer};
use crate::hash::ip_target;
use crate::rows::{ip_text_key, q2_order, top_k, IpCount, Q2_LIMIT};

/// Sort and run-length count (the original sorted with IPS4o and counted runs).
pub fn count(mut ips: Vec<u32>) -> Vec<(u32, u64)> {
    ips.sort_unstable();
    let mut out: Vec<(u32, u64)> = Vec::new();
    for ip in ips {
        match out.last_mut() {
            Some((last, n)) if *last == ip => *n += 1,
            _ => out.push((ip, 1)),
        }
    }
    out
}

/// Raw rows to their owners: four bytes per occurrence.
pub fn partition_raw(ips: &[u32], ranks: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new(); ranks];
    for &ip in ips {
        out[ip_target(seed, ip, ranks)].extend_from_slice(&ip.to_le_bytes());
    }
    out
}

/// An address seen this often here travels as one (address, count) pair when combining.
pub const PAIR_MIN: u64 = 3;

/// Combined rows to their owners: per message a u32 count of raw addresses, those addresses,
/// then (address, count) pairs for the addresses seen at least `PAIR_MIN` times here.
pub fn partition_combined(ips: &[u32], ranks: usize, seed: u64) -> Vec<Vec<u8>> {
    let counts = count(ips.to_vec());
    let mut raw = vec![Writer::default(); ranks];
    let mut pairs = vec![Writer::default(); ranks];
    for &(ip, n) in &counts {
        let t = ip_target(seed, ip, ranks);
        if n >= PAIR_MIN {
            pairs[t].u32(ip);
            pairs[t].u64(n);
        } else {
            for _ in 0..n {
                raw[t].u32(ip);
            }
        }
    }
    raw.into_iter()
        .zip(pairs)
        .map(|(r, p)| {
            let mut w = Writer::default();
            w.u32((r.0.len() / 4) as u32);
            w.0.extend(r.0);
            w.0.extend(p.0);
            w.0
        })
        .collect()
}

/// Appends a combined message's raw addresses and pairs; returns the rows (raw addresses
/// plus pairs) it carried. An empty message carries nothing.
pub fn decode_combined(
    bytes: &[u8],
    raw: &mut Vec<u32>,
    pairs: &mut Vec<(u32, u64)>,
) -> Option<u64> {
    if bytes.is_empty() {
        return Some(0);
    }
    let mut r = Reader::new(bytes);
    let n = r.u32()? as usize;
    let n_raw = decode_raw(r.take(n.checked_mul(4)?)?, raw)?;
    let n_pairs = decode_pairs(r.take(bytes.len() - 4 - 4 * n)?, pairs)?;
    Some(n_raw + n_pairs)
}

/// (address, count) pairs to their owners: twelve bytes each.
pub fn partition_counts(counts: &[(u32, u64)], ranks: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut out = vec![Writer::default(); ranks];
    for &(ip, n) in counts {
        let w = &mut out[ip_target(seed, ip, ranks)];
        w.u32(ip);
        w.u64(n);
    }
    out.into_iter().map(|w| w.0).collect()
}

/// Appends a raw message's addresses; returns how many.
pub fn decode_raw(bytes: &[u8], into: &mut Vec<u32>) -> Option<u64> {
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    into.extend(
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))),
    );
    Some(bytes.len() as u64 / 4)
}

/// Appends a message of pairs; returns how many.
pub fn decode_pairs(bytes: &[u8], into: &mut Vec<(u32, u64)>) -> Option<u64> {
    let mut r = Reader::new(bytes);
    let mut n = 0;
    while !r.is_empty() {
        into.push((r.u32()?, r.u64()?));
        n += 1;
    }
    Some(n)
}

/// Adds up pairs per address (the same address may come from several senders).
pub fn sum_pairs(mut pairs: Vec<(u32, u64)>) -> Vec<(u32, u64)> {
    pairs.sort_unstable_by_key(|p| p.0);
    let mut out: Vec<(u32, u64)> = Vec::new();
    for (ip, n) in pairs {
        match out.last_mut() {
            Some((last, m)) if *last == ip => *m += n,
            _ => out.push((ip, n)),
        }
    }
    out
}

/// The 10 largest counts (ties by the address as text). First the 10th largest count by a
/// selection on counts alone; only the addresses with at least that count (often many with
/// count 1) get their text keys for the final order.
pub fn local_top(counts: Vec<(u32, u64)>) -> Vec<(u32, u64)> {
    if counts.len() <= Q2_LIMIT {
        return top_k(counts, Q2_LIMIT, q2_order);
    }
    let mut c: Vec<u64> = counts.iter().map(|p| p.1).collect();
    let (_, &mut tenth, _) = c.select_nth_unstable_by(Q2_LIMIT - 1, |a, b| b.cmp(a));
    let keyed: Vec<(u64, [u8; 15], u32)> = counts
        .into_iter()
        .filter(|p| p.1 >= tenth)
        .map(|(ip, n)| (n, ip_text_key(ip), ip))
        .collect();
    top_k(keyed, Q2_LIMIT, |a, b| {
        b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1))
    })
    .into_iter()
    .map(|(n, _, ip)| (ip, n))
    .collect()
}

pub fn encode_top(top: &[(u32, u64)]) -> Vec<u8> {
    partition_counts(top, 1, 0).remove(0)
}

/// The gather's combine: the top 10 of both lists. Every address lives on one rank after
/// the shuffle, so its count is complete and the top 10 of the tops is the global top 10.
pub fn merge_top(a: &[u8], b: &[u8]) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    decode_pairs(a, &mut v)?;
    decode_pairs(b, &mut v)?;
    Some(encode_top(&local_top(v)))
}

pub fn finish(bytes: &[u8]) -> Option<Vec<IpCount>> {
    let mut v = Vec::new();
    decode_pairs(bytes, &mut v)?;
    Some(
        local_top(v)
            .into_iter()
            .map(|(ip, count)| IpCount {
                ip: std::net::Ipv4Addr::from(ip).to_string(),
                count,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_and_combined_shuffles_give_the_same_counts() {
        let ips: Vec<u32> = (0..500u32).map(|i| (i * i) % 37).collect();
        let m = 4;
        let raw = partition_raw(&ips, m, 3);
        let pre = partition_combined(&ips, m, 3);
        let (mut total_rows, mut combined_rows) = (0, 0);
        for dst in 0..m {
            let mut a = Vec::new();
            total_rows += decode_raw(&raw[dst], &mut a).unwrap();
            let (mut r, mut p) = (Vec::new(), Vec::new());
            combined_rows += decode_combined(&pre[dst], &mut r, &mut p).unwrap();
            p.extend(count(r));
            assert_eq!(count(a), sum_pairs(p));
            assert!(pre[dst].len() <= raw[dst].len() + 4);
        }
        assert_eq!(total_rows, 500);
        // Every value (a square mod 37) is seen at least three times: one pair each.
        let distinct = count(ips);
        assert!(distinct.iter().all(|c| c.1 >= PAIR_MIN));
        assert_eq!(combined_rows, distinct.len() as u64);
        assert!(decode_raw(&[1, 2, 3], &mut Vec::new()).is_none());
    }

    proptest::proptest! {
        #[test]
        fn local_top_is_the_prefix_of_the_full_order(
            v in proptest::collection::btree_map(proptest::prelude::any::<u32>(), 1u64..4, 0..80)
        ) {
            let v: Vec<(u32, u64)> = v.into_iter().collect();
            let mut all = v.clone();
            all.sort_by(q2_order);
            all.truncate(Q2_LIMIT);
            proptest::prop_assert_eq!(local_top(v), all);
        }
    }

    #[test]
    fn merging_tops_keeps_the_ten_largest_with_text_ties() {
        let a: Vec<(u32, u64)> = (0..12).map(|i| (i, 1 + i as u64 % 3)).collect();
        let b: Vec<(u32, u64)> = (100..112).map(|i| (i, 2)).collect();
        let ta = encode_top(&local_top(a.clone()));
        let tb = encode_top(&local_top(b.clone()));
        let merged = finish(&merge_top(&ta, &tb).unwrap()).unwrap();
        let mut all: Vec<(u32, u64)> = a.into_iter().chain(b).collect();
        all.sort_by(q2_order);
        let want: Vec<String> = all[..10]
            .iter()
            .map(|p| std::net::Ipv4Addr::from(p.0).to_string())
            .collect();
        let got: Vec<String> = merged.iter().map(|r| r.ip.clone()).collect();
        assert_eq!(got, want);
    }
}

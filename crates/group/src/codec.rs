//! The few byte layouts collectives put inside messages: a set of per-rank values (all-gather)
//! and a row of sizes (high-entropy). Little-endian, length-prefixed; decoding checks every
//! length so a short or garbled message is an error, never a panic.

/// `count u32 | (rank u32 | len u64 | bytes)*`.
pub fn encode_values<'a>(values: impl Iterator<Item = (usize, &'a [u8])>) -> Vec<u8> {
    let mut out = vec![0u8; 4];
    let mut n = 0u32;
    for (rank, bytes) in values {
        n += 1;
        out.extend_from_slice(&(rank as u32).to_le_bytes());
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    out[..4].copy_from_slice(&n.to_le_bytes());
    out
}

pub fn decode_values(mut b: &[u8]) -> Option<Vec<(usize, Vec<u8>)>> {
    let n = u32::from_le_bytes(take(&mut b, 4)?.try_into().ok()?);
    let mut out = Vec::new();
    for _ in 0..n {
        let rank = u32::from_le_bytes(take(&mut b, 4)?.try_into().ok()?) as usize;
        let len = u64::from_le_bytes(take(&mut b, 8)?.try_into().ok()?);
        let len = usize::try_from(len).ok()?;
        out.push((rank, take(&mut b, len)?.to_vec()));
    }
    b.is_empty().then_some(out)
}

pub fn encode_sizes(sizes: &[u64]) -> Vec<u8> {
    sizes.iter().flat_map(|s| s.to_le_bytes()).collect()
}

pub fn decode_sizes(b: &[u8], want: usize) -> Option<Vec<u64>> {
    if b.len() != want * 8 {
        return None;
    }
    Some(
        b.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
    )
}

fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if b.len() < n {
        return None;
    }
    let (head, tail) = b.split_at(n);
    *b = tail;
    Some(head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn values_round_trip(vals in proptest::collection::vec((0usize..1000, proptest::collection::vec(any::<u8>(), 0..50)), 0..10)) {
            let enc = encode_values(vals.iter().map(|(r, b)| (*r, b.as_slice())));
            prop_assert_eq!(decode_values(&enc).unwrap(), vals);
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode_values(&bytes);
            let _ = decode_sizes(&bytes, 3);
        }
    }

    #[test]
    fn truncated_and_overlong_messages_are_rejected() {
        let enc = encode_values([(3usize, &b"abc"[..])].into_iter());
        assert!(decode_values(&enc[..enc.len() - 1]).is_none());
        let mut long = enc.clone();
        long.push(0);
        assert!(decode_values(&long).is_none());
        assert_eq!(decode_sizes(&encode_sizes(&[1, 2]), 2), Some(vec![1, 2]));
        assert_eq!(decode_sizes(&encode_sizes(&[1, 2]), 3), None);
    }
}

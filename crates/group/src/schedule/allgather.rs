//! All-gather by recursive doubling, generalised to any group size by folding into the largest
//! power of two `p <= size` (what MilliSort's code does; the alternative is Ruefenacht et al.'s
//! general factorisation). With `r = size - p` extra ranks:
//!
//! 1. fold: extra rank `p + i` sends its value to rank `i` (r messages);
//! 2. log2(p) doubling rounds among ranks `0..p`: in round j rank i swaps everything it holds
//!    with rank `i XOR 2^j` (p messages each);
//! 3. unfold: rank `i < r` sends the full result to rank `p + i` (r messages).
//!
//! Messages: `2r + p log2 p`, at most `size * ceil(log2 size)` (proved in the tests below):
//! O(M log M), never M^2. Rounds: `log2 p + 2` (the fold rounds are empty when r = 0).

use super::Round;

/// The largest power of two not above `size` (1 for size 0 or 1).
pub fn fold_size(size: usize) -> usize {
    if size <= 1 {
        1
    } else {
        1usize << (usize::BITS - 1 - size.leading_zeros())
    }
}

/// Rounds every rank walks through (idle ones included), so op ids line up.
pub fn rounds(size: usize) -> usize {
    fold_size(size).trailing_zeros() as usize + 2
}

/// Rank `me`'s round `j` (0 <= j < rounds(size)).
pub fn round(size: usize, me: usize, j: usize) -> Round {
    let p = fold_size(size);
    let r = size - p.min(size);
    let last = rounds(size) - 1;
    let idle = Round {
        send_to: None,
        recv_from: None,
    };
    if j == 0 {
        Round {
            send_to: (me >= p).then(|| me - p),
            recv_from: (me < r).then_some(me + p),
        }
    } else if j == last {
        Round {
            send_to: (me < r).then_some(me + p),
            recv_from: (me >= p).then(|| me - p),
        }
    } else if me < p {
        let peer = me ^ (1 << (j - 1));
        Round {
            send_to: Some(peer),
            recv_from: Some(peer),
        }
    } else {
        idle
    }
}

/// Total messages over all ranks: `2r + p log2 p`.
pub fn messages(size: usize) -> usize {
    let p = fold_size(size);
    let r = size.saturating_sub(p);
    2 * r + p * p.trailing_zeros() as usize
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)] // ranks index several tables at once
mod tests {
    use super::super::ceil_log2;
    use super::*;
    use std::collections::BTreeSet;

    /// Pure simulation: every rank starts knowing itself; a message carries everything its
    /// sender knows at the start of the round.
    fn knowledge(size: usize) -> (Vec<BTreeSet<usize>>, usize) {
        let mut know: Vec<BTreeSet<usize>> = (0..size).map(|i| BTreeSet::from([i])).collect();
        let mut sent = 0;
        for j in 0..rounds(size) {
            let before = know.clone();
            for me in 0..size {
                let rd = round(size, me, j);
                if let Some(to) = rd.send_to {
                    sent += 1;
                    assert_eq!(
                        round(size, to, j).recv_from,
                        Some(me),
                        "size {size} round {j}"
                    );
                    know[to].extend(before[me].iter().copied());
                }
                if let Some(from) = rd.recv_from {
                    assert_eq!(round(size, from, j).send_to, Some(me));
                }
            }
        }
        (know, sent)
    }

    #[test]
    fn everyone_learns_everything_with_the_stated_message_count() {
        for size in 1..=300usize {
            let (know, sent) = knowledge(size);
            for (i, k) in know.iter().enumerate() {
                assert_eq!(k.len(), size, "size {size}: rank {i} knows {k:?}");
            }
            assert_eq!(sent, messages(size), "size {size}");
        }
    }

    #[test]
    fn message_count_is_at_most_m_ceil_log2_m() {
        // 2r + p log p <= (p + r)(log p + 1) = p log p + p + r log p + r, as p > r when r > 0.
        for size in 1..=100_000usize {
            let m = messages(size);
            assert!(m <= size * ceil_log2(size) as usize, "size {size}: {m}");
            if size.is_power_of_two() {
                assert_eq!(m, size * size.trailing_zeros() as usize);
            }
        }
        // And far below the naive M(M-1) once M grows.
        assert!(messages(1000) * 50 < 1000 * 999);
    }

    #[test]
    fn fold_size_is_the_largest_power_of_two_below() {
        assert_eq!(fold_size(1), 1);
        assert_eq!(fold_size(2), 2);
        assert_eq!(fold_size(3), 2);
        assert_eq!(fold_size(17), 16);
        assert_eq!(fold_size(64), 64);
    }
}

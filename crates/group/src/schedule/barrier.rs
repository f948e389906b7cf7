//! The dissemination barrier (Hensgen, Finkel & Manber): ceil(log2 M) rounds; in round j rank i
//! signals `(i + 2^j) mod M` and waits for `(i - 2^j) mod M`. After the last round every rank
//! has heard, transitively, from every rank, so none leaves before all have arrived. M messages
//! per round, M ceil(log2 M) in all, and no rank is a hot spot (unlike gather + broadcast).

use super::{ceil_log2, Round};

pub fn rounds(size: usize) -> usize {
    ceil_log2(size) as usize
}

pub fn round(size: usize, me: usize, j: usize) -> Round {
    let step = (1usize << j) % size;
    Round {
        send_to: Some((me + step) % size),
        recv_from: Some((me + size - step) % size),
    }
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)] // ranks index several tables at once
mod tests {
    use super::*;

    #[test]
    fn after_the_last_round_everyone_has_heard_from_everyone() {
        for size in 1..=200usize {
            let mut heard: Vec<Vec<bool>> = (0..size)
                .map(|i| (0..size).map(|j| i == j).collect())
                .collect();
            for j in 0..rounds(size) {
                let before = heard.clone();
                for me in 0..size {
                    let rd = round(size, me, j);
                    let to = rd.send_to.unwrap();
                    assert_ne!(to, me, "size {size}");
                    assert_eq!(round(size, to, j).recv_from, Some(me));
                    for x in 0..size {
                        heard[to][x] |= before[me][x];
                    }
                }
            }
            assert!(heard.iter().all(|h| h.iter().all(|&b| b)), "size {size}");
            // One round fewer is not enough (the count is tight) for size > 1.
            if size > 1 {
                assert!((1usize << (rounds(size) - 1)) < size);
            }
        }
    }
}

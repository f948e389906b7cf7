//! MilliSort's "high-entropy" shuffle (spec millisort.md §4.4) as a schedule of rounds.
//!
//! Every message is cut into chunks of at most `chunk_bytes` (40 KB); a sender has at most
//! `max_outstanding` chunks (16) in flight and at most one per destination; it picks each next
//! destination by power-of-two choices (two distinct random candidates, the one with more bytes
//! left wins: "power-of-two LRPT"), from its own seeded stream.
//!
//! Realisation (our choice, docs/group.md): a chunk is in flight for exactly one round, and a
//! round is one exchange in which every sender sends its picks. Because the picks depend only
//! on the sender's row of the size matrix and the seed, every rank computes every sender's
//! picks alone, so each knows whom to hear from in each round without asking. What this loses
//! against the RPC original: a sender refills a freed slot only at the end of its round rather
//! than the moment one chunk is acknowledged.

use coflowkit_shuffle::proto::priority::mix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::GroupError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HighEntropyOptions {
    /// Largest chunk (`MAX_SHUFFLE_CHUNK_SIZE = 40000` in MilliSort's code).
    pub chunk_bytes: u64,
    /// Chunks a sender has in flight at once (16 in MilliSort's code).
    pub max_outstanding: usize,
    pub seed: u64,
}

impl Default for HighEntropyOptions {
    fn default() -> Self {
        HighEntropyOptions {
            chunk_bytes: 40_000,
            max_outstanding: 16,
            seed: 1,
        }
    }
}

/// Bytes `offset .. offset + len` of the message from `src` to `dst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    pub src: usize,
    pub dst: usize,
    pub offset: u64,
    pub len: u64,
}

/// The rounds of the shuffle for the byte matrix `sizes[src][dst]` (the diagonal is ignored:
/// a rank keeps its own part). Empty messages get no chunk: the receiver knows their size.
pub fn plan(sizes: &[Vec<u64>], opts: &HighEntropyOptions) -> Result<Vec<Vec<Chunk>>, GroupError> {
    if opts.chunk_bytes == 0 {
        return Err(GroupError::BadOption(
            "high-entropy chunk_bytes must be at least 1".into(),
        ));
    }
    if opts.max_outstanding == 0 {
        return Err(GroupError::BadOption(
            "high-entropy max_outstanding must be at least 1".into(),
        ));
    }
    let m = sizes.len();
    if let Some((i, row)) = sizes.iter().enumerate().find(|(_, r)| r.len() != m) {
        return Err(GroupError::BadOption(format!(
            "size matrix row {i} has {} entries, expected {m}",
            row.len()
        )));
    }
    let mut senders: Vec<SenderState> = (0..m)
        .map(|s| SenderState::new(s, &sizes[s], opts.seed))
        .collect();
    let mut rounds = Vec::new();
    loop {
        let mut round = Vec::new();
        for st in senders.iter_mut() {
            st.pick(opts, &mut round);
        }
        if round.is_empty() {
            return Ok(rounds);
        }
        rounds.push(round);
    }
}

struct SenderState {
    src: usize,
    left: Vec<u64>,
    sent: Vec<u64>,
    rng: ChaCha8Rng,
}

impl SenderState {
    fn new(src: usize, row: &[u64], seed: u64) -> Self {
        let mut left = row.to_vec();
        left[src] = 0;
        SenderState {
            src,
            left,
            sent: vec![0; row.len()],
            rng: ChaCha8Rng::seed_from_u64(mix(seed, src as u64)),
        }
    }

    /// This round's picks: up to `max_outstanding` distinct destinations.
    fn pick(&mut self, opts: &HighEntropyOptions, out: &mut Vec<Chunk>) {
        let mut cand: Vec<usize> = (0..self.left.len()).filter(|&d| self.left[d] > 0).collect();
        for _ in 0..opts.max_outstanding {
            let i = match cand.len() {
                0 => break,
                1 => 0,
                n => {
                    let a = self.rng.gen_range(0..n);
                    let mut b = self.rng.gen_range(0..n - 1);
                    if b >= a {
                        b += 1;
                    }
                    if self.left[cand[b]] > self.left[cand[a]] {
                        b
                    } else {
                        a
                    }
                }
            };
            let d = cand.swap_remove(i);
            let len = self.left[d].min(opts.chunk_bytes);
            out.push(Chunk {
                src: self.src,
                dst: d,
                offset: self.sent[d],
                len,
            });
            self.left[d] -= len;
            self.sent[d] += len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn opts(chunk: u64, cap: usize, seed: u64) -> HighEntropyOptions {
        HighEntropyOptions {
            chunk_bytes: chunk,
            max_outstanding: cap,
            seed,
        }
    }

    proptest! {
        /// Every off-diagonal byte is covered exactly once, in order; no chunk exceeds the
        /// limit; per round a sender has at most `cap` chunks and at most one per destination.
        #[test]
        fn chunks_tile_every_message_within_the_limits(
            m in 1usize..9,
            cells in proptest::collection::vec(0u64..200_000, 81),
            chunk in 1u64..70_000,
            cap in 1usize..20,
            seed in any::<u64>(),
        ) {
            let sizes: Vec<Vec<u64>> = (0..m).map(|i| cells[i * 9..i * 9 + m].to_vec()).collect();
            let rounds = plan(&sizes, &opts(chunk, cap, seed)).unwrap();
            let mut next = vec![vec![0u64; m]; m];
            for round in &rounds {
                prop_assert!(!round.is_empty());
                let mut per_src = vec![0usize; m];
                let mut pair = std::collections::HashSet::new();
                for c in round {
                    prop_assert!(c.src != c.dst);
                    prop_assert!(c.len >= 1 && c.len <= chunk);
                    prop_assert_eq!(c.offset, next[c.src][c.dst]);
                    next[c.src][c.dst] += c.len;
                    per_src[c.src] += 1;
                    prop_assert!(pair.insert((c.src, c.dst)));
                }
                prop_assert!(per_src.iter().all(|&n| n <= cap));
            }
            for s in 0..m {
                for d in 0..m {
                    let want = if s == d { 0 } else { sizes[s][d] };
                    prop_assert_eq!(next[s][d], want);
                }
            }
        }
    }

    #[test]
    fn of_two_candidates_the_one_with_more_bytes_left_always_goes_first() {
        // One slot, two messages: power-of-two choice always sees both and takes the larger,
        // so the sender drains the big message down to the small one's size first.
        for seed in 0..50 {
            let sizes = vec![vec![0, 100, 30], vec![0; 3], vec![0; 3]];
            let rounds = plan(&sizes, &opts(10, 1, seed)).unwrap();
            let from0: Vec<usize> = rounds
                .iter()
                .flat_map(|r| r.iter().filter(|c| c.src == 0).map(|c| c.dst))
                .collect();
            assert_eq!(&from0[..7], &[1; 7], "seed {seed}");
            assert_eq!(from0.len(), 13);
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_plan_and_another_seed_another() {
        let m = 12;
        let sizes: Vec<Vec<u64>> = (0..m)
            .map(|i| {
                (0..m)
                    .map(|j| ((i * 7 + j * 13) % 11) as u64 * 9_000)
                    .collect()
            })
            .collect();
        let a = plan(&sizes, &opts(4_000, 4, 7)).unwrap();
        assert_eq!(a, plan(&sizes, &opts(4_000, 4, 7)).unwrap());
        assert_ne!(a, plan(&sizes, &opts(4_000, 4, 8)).unwrap());
    }

    #[test]
    fn rounds_are_bounded_below_by_the_largest_message_and_by_the_cap() {
        let sizes = vec![vec![0, 400_000, 1], vec![5, 0, 5], vec![0, 0, 0]];
        let rounds = plan(&sizes, &HighEntropyOptions::default()).unwrap();
        // 400 000 bytes in 40 000-byte chunks, one per round to that destination.
        assert_eq!(rounds.len(), 10);
        let cap1 = plan(&sizes, &opts(40_000, 1, 1)).unwrap();
        assert_eq!(cap1.len(), 11);
    }

    #[test]
    fn bad_options_and_ragged_matrices_are_errors() {
        let sizes = vec![vec![0, 1], vec![1, 0]];
        assert!(plan(&sizes, &opts(0, 1, 1)).is_err());
        assert!(plan(&sizes, &opts(1, 0, 1)).is_err());
        let e = plan(&[vec![0, 1], vec![1]], &opts(1, 1, 1)).unwrap_err();
        assert!(e.to_string().contains("row 1"), "{e}");
        assert!(plan(&[], &opts(1, 1, 1)).unwrap().is_empty());
    }
}

//! The source's choice for a receiver that asks it for "any block" (spec §2.3 item 5): every
//! block once, round robin, before any block a second time; then the least-sent block the
//! receiver lacks.

#[derive(Debug, Clone)]
pub struct RoundRobin {
    sent: Vec<u32>,
    cursor: usize,
}

impl RoundRobin {
    pub fn new(blocks: u32) -> RoundRobin {
        RoundRobin {
            sent: vec![0; blocks as usize],
            cursor: 0,
        }
    }

    /// A block for a receiver whose have-map (held or already requested: 1) is `have`; `None`
    /// when it lacks nothing.
    pub fn pick(&mut self, have: &[u8]) -> Option<u32> {
        let n = self.sent.len();
        let lacks = |b: usize| have.get(b).is_none_or(|&h| h == 0);
        for i in 0..n {
            let b = (self.cursor + i) % n;
            if self.sent[b] == 0 && lacks(b) {
                self.cursor = b + 1;
                self.sent[b] += 1;
                return Some(b as u32);
            }
        }
        let b = (0..n)
            .filter(|&b| lacks(b))
            .min_by_key(|&b| (self.sent[b], b))?;
        self.sent[b] += 1;
        Some(b as u32)
    }

    /// Blocks the source has not sent yet.
    pub fn unsent(&self) -> usize {
        self.sent.iter().filter(|&&s| s == 0).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn first_pass_round_robin_across_receivers() {
        let mut rr = RoundRobin::new(5);
        let none = vec![0u8; 5];
        let picks: Vec<u32> = (0..5).map(|_| rr.pick(&none).unwrap()).collect();
        assert_eq!(picks, [0, 1, 2, 3, 4]);
        assert_eq!(rr.unsent(), 0);
        // Then the least sent the asker lacks.
        assert_eq!(rr.pick(&[1, 1, 0, 0, 0]), Some(2));
        assert_eq!(rr.pick(&[1, 1, 1, 1, 1]), None);
    }

    proptest! {
        /// Whatever the receivers hold, no block goes out twice while one has not gone out
        /// once to a receiver lacking it.
        #[test]
        fn no_duplicate_before_every_block_once(maps in proptest::collection::vec(proptest::collection::vec(0u8..2, 8), 1..30)) {
            let mut rr = RoundRobin::new(8);
            let mut sent = [0u32; 8];
            for have in &maps {
                if let Some(b) = rr.pick(have) {
                    prop_assert_eq!(have[b as usize], 0);
                    if sent[b as usize] > 0 {
                        // Every block this asker lacks went out already.
                        for (x, &h) in have.iter().enumerate() {
                            prop_assert!(h == 1 || sent[x] > 0);
                        }
                    }
                    sent[b as usize] += 1;
                } else {
                    prop_assert!(have.iter().all(|&h| h == 1));
                }
            }
        }
    }
}

use std::collections::BTreeMap;

use crate::codec::{decode_values, encode_values};
use crate::schedule::allgather;
use crate::{Group, GroupError};

impl Group {
    /// Every member's `bytes`, indexed by group rank (recursive doubling, folded into the
    /// largest power of two: `schedule::allgather`).
    pub fn allgather(&mut self, bytes: Vec<u8>) -> Result<Vec<Vec<u8>>, GroupError> {
        let size = self.size();
        let rounds = allgather::rounds(size);
        let base = self.reserve(rounds);
        let mut have: BTreeMap<usize, Vec<u8>> = BTreeMap::from([(self.rank(), bytes)]);
        for j in 0..rounds {
            let rd = allgather::round(size, self.rank(), j);
            let sends = match rd.send_to {
                Some(to) => {
                    let enc = encode_values(have.iter().map(|(&r, b)| (r, b.as_slice())));
                    vec![(to, enc)]
                }
                None => vec![],
            };
            let from: Vec<usize> = rd.recv_from.into_iter().collect();
            if sends.is_empty() && from.is_empty() {
                continue;
            }
            let got = self.xchg(base, j, sends, &from, None)?;
            for (msg, &src) in got.iter().zip(&from) {
                let bad = GroupError::Malformed {
                    from: src,
                    what: "all-gather block",
                };
                for (r, b) in decode_values(msg).ok_or(bad)? {
                    if r >= size {
                        return Err(GroupError::Malformed {
                            from: src,
                            what: "all-gather rank",
                        });
                    }
                    have.entry(r).or_insert(b);
                }
            }
        }
        if have.len() != size {
            let missing = (0..size).find(|r| !have.contains_key(r)).unwrap_or(0);
            return Err(GroupError::Malformed {
                from: missing,
                what: "all-gather (a rank's value never arrived)",
            });
        }
        Ok(have.into_values().collect())
    }
}

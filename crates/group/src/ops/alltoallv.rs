use crate::codec::{decode_sizes, encode_sizes};
use crate::schedule::{barrier, high_entropy, lockstep};
use crate::{Group, GroupError, ShuffleProto};

impl Group {
    /// Personalised all-to-all: `data[j]` goes to rank j; returns what each rank sent here
    /// (index = sender), own part included, under the protocol of this call.
    pub fn alltoallv(
        &mut self,
        mut data: Vec<Vec<u8>>,
        proto: &ShuffleProto,
    ) -> Result<Vec<Vec<u8>>, GroupError> {
        let size = self.size();
        if data.len() != size {
            return Err(GroupError::WrongCount {
                got: data.len(),
                size,
            });
        }
        let me = self.rank();
        let mut out = vec![Vec::new(); size];
        out[me] = std::mem::take(&mut data[me]);
        match proto {
            ShuffleProto::Wire(wire) => {
                // Every ordered pair has a message, empty ones included (PLAN-16 Interface 1).
                let base = self.reserve(1);
                let peers: Vec<usize> = (0..size).filter(|&j| j != me).collect();
                let sends = peers
                    .iter()
                    .map(|&j| (j, std::mem::take(&mut data[j])))
                    .collect();
                let got = self.xchg(base, 0, sends, &peers, Some(wire))?;
                for (j, b) in peers.into_iter().zip(got) {
                    out[j] = b;
                }
            }
            ShuffleProto::Lockstep => {
                let steps = lockstep::steps(size);
                let per = 1 + barrier::rounds(size);
                let base = self.reserve(steps * per);
                for s in 1..=steps {
                    let rd = lockstep::step(size, me, s);
                    let (to, from) = (rd.send_to.unwrap(), rd.recv_from.unwrap());
                    let sends = vec![(to, std::mem::take(&mut data[to]))];
                    out[from] = self
                        .xchg(base, (s - 1) * per, sends, &[from], None)?
                        .remove(0);
                    if s < steps {
                        for j in 0..barrier::rounds(size) {
                            let b = barrier::round(size, me, j);
                            let (t, f) = (b.send_to.unwrap(), b.recv_from.unwrap());
                            self.xchg(base, (s - 1) * per + 1 + j, vec![(t, vec![])], &[f], None)?;
                        }
                    }
                }
            }
            ShuffleProto::HighEntropy(opts) => {
                let row: Vec<u64> = data.iter().map(|d| d.len() as u64).collect();
                let rows = self.allgather(encode_sizes(&row))?;
                let mut sizes = Vec::with_capacity(size);
                for (src, r) in rows.iter().enumerate() {
                    sizes.push(decode_sizes(r, size).ok_or(GroupError::Malformed {
                        from: src,
                        what: "high-entropy size row",
                    })?);
                }
                let rounds = high_entropy::plan(&sizes, opts)?;
                let base = self.reserve(rounds.len());
                for (r, round) in rounds.iter().enumerate() {
                    let sends: Vec<(usize, Vec<u8>)> = round
                        .iter()
                        .filter(|c| c.src == me)
                        .map(|c| {
                            let d = &data[c.dst];
                            (
                                c.dst,
                                d[c.offset as usize..(c.offset + c.len) as usize].to_vec(),
                            )
                        })
                        .collect();
                    let incoming: Vec<_> = round.iter().filter(|c| c.dst == me).collect();
                    if sends.is_empty() && incoming.is_empty() {
                        continue;
                    }
                    let from: Vec<usize> = incoming.iter().map(|c| c.src).collect();
                    let got = self.xchg(base, r, sends, &from, None)?;
                    for (c, b) in incoming.into_iter().zip(got) {
                        if b.len() as u64 != c.len {
                            return Err(GroupError::Malformed {
                                from: c.src,
                                what: "high-entropy chunk (wrong length)",
                            });
                        }
                        out[c.src].extend_from_slice(&b);
                    }
                }
                for (src, o) in out.iter().enumerate() {
                    if src != me && o.len() as u64 != sizes[src][me] {
                        return Err(GroupError::Malformed {
                            from: src,
                            what: "high-entropy message (short)",
                        });
                    }
                }
            }
        }
        Ok(out)
    }
}

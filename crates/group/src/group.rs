//! A group: an ordered list of world ranks with this process among them. Ranks inside a group
//! are indices into that list; the collectives (in `ops/`) speak group ranks and this module
//! turns them into world ranks and op ids for the `Exchange`.

use std::collections::HashSet;
use std::sync::Arc;

use crate::exchange::{Exchange, WireProto};
use crate::id::{op_id, subgroup_id, world_id};
use crate::GroupError;

/// One process's handle on a group. Collectives on one `Group` run one after the other (they
/// take `&mut self`); different groups (the world and a sub-group, say) may run at the same
/// time from different threads over the same `Exchange`. Every member must call the same
/// collectives in the same order, as in MPI.
pub struct Group {
    ex: Arc<dyn Exchange>,
    members: Vec<u32>,
    me: usize,
    id: u32,
    seq: u32,
    wire: WireProto,
    messages_sent: u64,
}

impl Group {
    /// Every rank of the exchange's world, in world-rank order.
    pub fn world(ex: Arc<dyn Exchange>) -> Result<Group, GroupError> {
        let (rank, size) = (ex.world_rank(), ex.world_size());
        if rank >= size {
            return Err(GroupError::BadWorld { rank, size });
        }
        Ok(Group {
            ex,
            members: (0..size).collect(),
            me: rank as usize,
            id: world_id(size),
            seq: 0,
            wire: WireProto::default(),
            messages_sent: 0,
        })
    }

    /// The sub-group of the listed ranks of this group (in that order: its rank i is
    /// `members[i]`). Every member computes the same id alone; two live sub-groups with the
    /// same parent and member list must differ in `subgroup_tagged`'s tag.
    pub fn subgroup(&self, members: &[usize]) -> Result<Group, GroupError> {
        self.subgroup_tagged(members, 0)
    }

    pub fn subgroup_tagged(&self, members: &[usize], tag: u32) -> Result<Group, GroupError> {
        if members.is_empty() {
            return Err(GroupError::EmptyGroup);
        }
        let mut seen = HashSet::new();
        for &m in members {
            if m >= self.size() {
                return Err(GroupError::NoSuchRank {
                    rank: m,
                    size: self.size(),
                });
            }
            if !seen.insert(m) {
                return Err(GroupError::DuplicateMember(m));
            }
        }
        let world: Vec<u32> = members.iter().map(|&m| self.members[m]).collect();
        let me = members
            .iter()
            .position(|&m| m == self.me)
            .ok_or(GroupError::NotMember(self.members[self.me]))?;
        Ok(Group {
            ex: self.ex.clone(),
            id: subgroup_id(self.id, tag, &world),
            members: world,
            me,
            seq: 0,
            wire: self.wire.clone(),
            messages_sent: 0,
        })
    }

    /// The transport protocol of the tree collectives, all-gather and barrier (GRPF by
    /// default; with one message per peer the choice matters little).
    pub fn with_wire(mut self, wire: WireProto) -> Group {
        self.wire = wire;
        self
    }

    pub fn rank(&self) -> usize {
        self.me
    }

    pub fn size(&self) -> usize {
        self.members.len()
    }

    pub fn id(&self) -> u32 {
        self.id
    }

    /// World ranks of the members, in group-rank order.
    pub fn members(&self) -> &[u32] {
        &self.members
    }

    /// Messages this process has sent through this group (a message per peer per exchange).
    pub fn messages_sent(&self) -> u64 {
        self.messages_sent
    }

    pub(crate) fn check_rank(&self, rank: usize) -> Result<(), GroupError> {
        if rank >= self.size() {
            return Err(GroupError::BadRoot {
                root: rank,
                size: self.size(),
            });
        }
        Ok(())
    }

    /// Reserve `n` consecutive sequence numbers; returns the first.
    pub(crate) fn reserve(&mut self, n: usize) -> u32 {
        let base = self.seq;
        self.seq = self.seq.wrapping_add(n as u32);
        base
    }

    /// One exchange in group ranks under op `base + step`: returns the messages of
    /// `recv_from`, in that order.
    pub(crate) fn xchg(
        &mut self,
        base: u32,
        step: usize,
        sends: Vec<(usize, Vec<u8>)>,
        recv_from: &[usize],
        wire: Option<&WireProto>,
    ) -> Result<Vec<Vec<u8>>, GroupError> {
        let op = op_id(self.id, base.wrapping_add(step as u32));
        self.messages_sent += sends.len() as u64;
        let sends: Vec<(u32, Vec<u8>)> = sends
            .into_iter()
            .map(|(r, b)| (self.members[r], b))
            .collect();
        let from: Vec<u32> = recv_from.iter().map(|&r| self.members[r]).collect();
        let wire = wire.unwrap_or(&self.wire);
        let got = self.ex.exchange(op, sends, &from, wire)?;
        let mut out: Vec<Option<Vec<u8>>> = vec![None; from.len()];
        for (src, bytes) in got {
            let slot = from.iter().position(|&f| f == src).ok_or_else(|| {
                GroupError::Exchange(
                    format!("exchange returned a message from world rank {src}, not asked for")
                        .into(),
                )
            })?;
            if out[slot].replace(bytes).is_some() {
                return Err(GroupError::Exchange(
                    format!("exchange returned two messages from world rank {src}").into(),
                ));
            }
        }
        out.into_iter()
            .zip(&from)
            .map(|(b, &src)| {
                b.ok_or_else(|| {
                    GroupError::Exchange(
                        format!("exchange returned no message from world rank {src}").into(),
                    )
                })
            })
            .collect()
    }
}

//! Group and operation ids. A group id is a hash of the parent's id, a tag and the members'
//! world ranks, so every member computes it alone; an op id is `group id << 32 | sequence`, and
//! each collective reserves a block of sequence numbers whose size depends only on the group
//! size (or on data every member has), so all members name each step alike and operations on
//! different groups never share an id (up to a 32-bit hash collision between live groups).

use coflowkit_shuffle::proto::priority::mix;

const WORLD_TAG: u64 = 0x636f_666c_6f77_6b69; // "coflowki"

pub fn world_id(size: u32) -> u32 {
    fold(mix(WORLD_TAG, size as u64))
}

pub fn subgroup_id(parent: u32, tag: u32, members: &[u32]) -> u32 {
    let mut h = mix(parent as u64, (tag as u64) << 32 | members.len() as u64);
    for &m in members {
        h = mix(h, m as u64);
    }
    fold(h)
}

pub fn op_id(group: u32, seq: u32) -> u64 {
    (group as u64) << 32 | seq as u64
}

fn fold(h: u64) -> u32 {
    (h ^ (h >> 32)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_depend_on_parent_tag_members_and_their_order() {
        let w = world_id(8);
        let a = subgroup_id(w, 0, &[0, 1, 2]);
        assert_eq!(a, subgroup_id(w, 0, &[0, 1, 2]));
        assert_ne!(a, subgroup_id(w, 1, &[0, 1, 2]));
        assert_ne!(a, subgroup_id(w, 0, &[0, 1, 3]));
        assert_ne!(a, subgroup_id(w, 0, &[1, 0, 2]));
        assert_ne!(a, subgroup_id(a, 0, &[0, 1, 2]));
        assert_ne!(w, world_id(9));
        assert_eq!(op_id(a, 5) >> 32, a as u64);
        assert_eq!(op_id(a, 5) & 0xffff_ffff, 5);
    }

    #[test]
    fn the_blocks_of_millisort_groups_get_distinct_ids() {
        // World of 1024, pivot-sorter groups of 32 consecutive ranks, plus the group of all
        // pivot sorters: no two of these 34 ids collide.
        let w = world_id(1024);
        let mut ids: Vec<u32> = (0..32u32)
            .map(|g| subgroup_id(w, 0, &(g * 32..g * 32 + 32).collect::<Vec<_>>()))
            .collect();
        ids.push(subgroup_id(
            w,
            0,
            &(0..32).map(|g| g * 32).collect::<Vec<_>>(),
        ));
        ids.push(w);
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n);
    }
}

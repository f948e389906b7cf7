//! Lockstep all-to-all (MilliSort §4.2, the HPC baseline): in step s = 1..M-1 rank n sends to
//! `(n + s) mod M` and hears from `(n - s) mod M`, with a barrier between steps.

use super::Round;

pub fn steps(size: usize) -> usize {
    size.saturating_sub(1)
}

/// Step `s` (1-based, 1..=steps(size)).
pub fn step(size: usize, me: usize, s: usize) -> Round {
    Round {
        send_to: Some((me + s) % size),
        recv_from: Some((me + size - s % size) % size),
    }
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)] // ranks index several tables at once
mod tests {
    use super::*;

    #[test]
    fn each_step_is_a_permutation_and_all_steps_cover_every_pair_once() {
        for size in 1..=64usize {
            let mut pairs = vec![vec![0u32; size]; size];
            for s in 1..=steps(size) {
                let mut hit = vec![0u32; size];
                for me in 0..size {
                    let rd = step(size, me, s);
                    let to = rd.send_to.unwrap();
                    assert_ne!(to, me);
                    assert_eq!(step(size, to, s).recv_from, Some(me));
                    hit[to] += 1;
                    pairs[me][to] += 1;
                }
                assert!(hit.iter().all(|&h| h == 1));
            }
            for (i, row) in pairs.iter().enumerate() {
                for (j, &c) in row.iter().enumerate() {
                    assert_eq!(c, u32::from(i != j), "size {size} pair {i}->{j}");
                }
            }
        }
    }
}

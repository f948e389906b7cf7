//! Who talks to whom, and in which round, for each collective: pure functions of the group size
//! (and of the sizes and a seed for the high-entropy shuffle). `Group` only drives them over an
//! `Exchange`; these modules are where the algorithms live and are tested without any I/O.

pub mod allgather;
pub mod barrier;
pub mod gather;
pub mod high_entropy;
pub mod knomial;
pub mod lockstep;

/// One round of a rank in a pairwise schedule: at most one peer to send to and one to hear from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Round {
    pub send_to: Option<usize>,
    pub recv_from: Option<usize>,
}

/// The smallest `d` with `2^d >= n` (0 for n <= 1).
pub fn ceil_log2(n: usize) -> u32 {
    if n <= 1 {
        0
    } else {
        usize::BITS - (n - 1).leading_zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceil_log2_against_repeated_doubling() {
        for n in 0..5000usize {
            let mut d = 0;
            while (1usize << d) < n {
                d += 1;
            }
            assert_eq!(ceil_log2(n), d, "n = {n}");
        }
    }
}

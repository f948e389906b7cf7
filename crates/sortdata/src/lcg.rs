//! The 128-bit linear congruential generator behind gensort 1.5:
//! `x' = A·x + C mod 2^128`, started at 0, with skip-ahead in O(log n).
//!
//! The constants are the published ones (A from L'Ecuyer's table of good multipliers, C odd, so
//! the period is the full 2^128). Skip-ahead composes the affine step with itself by repeated
//! squaring, the way gensort jumps to any record number.

/// The multiplier A.
pub const MULTIPLIER: u128 = 0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645;
/// The increment C (odd).
pub const INCREMENT: u128 = 0x4a69_6d47_7261_7952_4950_2020_2020_2001;

/// The affine map `x -> mul·x + add (mod 2^128)`; powers of the step are maps of this form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Affine {
    pub mul: u128,
    pub add: u128,
}

impl Affine {
    /// One step of the generator.
    pub const STEP: Affine = Affine {
        mul: MULTIPLIER,
        add: INCREMENT,
    };
    /// Zero steps.
    pub const IDENTITY: Affine = Affine { mul: 1, add: 0 };

    pub const fn apply(self, x: u128) -> u128 {
        self.mul.wrapping_mul(x).wrapping_add(self.add)
    }

    /// `self` after `first`: x -> self(first(x)).
    pub const fn after(self, first: Affine) -> Affine {
        Affine {
            mul: self.mul.wrapping_mul(first.mul),
            add: self.mul.wrapping_mul(first.add).wrapping_add(self.add),
        }
    }

    /// `self` applied `n` times, by squaring: at most 128 squarings and 128 compositions.
    pub const fn pow(self, mut n: u128) -> Affine {
        let mut result = Affine::IDENTITY;
        let mut square = self;
        while n != 0 {
            if n & 1 == 1 {
                result = square.after(result);
            }
            square = square.after(square);
            n >>= 1;
        }
        result
    }
}

/// The next number of the sequence after `x`.
#[inline(always)]
pub const fn step(x: u128) -> u128 {
    Affine::STEP.apply(x)
}

/// The `n`-th number of the sequence started at 0 (`nth(0) = 0`, `nth(1) = C`), in O(log n).
/// Record `r` of gensort is built from `nth(r + 1)` onwards.
pub const fn nth(n: u128) -> u128 {
    Affine::STEP.pow(n).add
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_numbers_are_c_then_a_c_plus_c() {
        assert_eq!(nth(0), 0);
        assert_eq!(nth(1), INCREMENT);
        assert_eq!(
            nth(2),
            MULTIPLIER.wrapping_mul(INCREMENT).wrapping_add(INCREMENT)
        );
    }

    #[test]
    fn full_period_wraps_to_zero() {
        // A ≡ 1 (mod 4) and C odd: the period is 2^128, so 2^128 - 1 steps then one more is 0.
        assert_eq!(step(nth(u128::MAX)), 0);
        assert_ne!(nth(u128::MAX), 0);
        assert_ne!(nth(1 << 127), 0);
    }
}

//! `java.util.Random`'s generator, for the one draw sequence the reference makes: each coflow's
//! deadline multiplier `1 + nextDouble() × factor` from `new Random(17)`. With deadlines off the
//! reference still orders its work conservation by these deadlines, so they shape its results.

const MULT: u64 = 0x5_DEEC_E66D;
const MASK: u64 = (1 << 48) - 1;

/// The linear congruential generator of `java.util.Random`.
pub struct JavaRandom {
    seed: u64,
}

impl JavaRandom {
    pub fn new(seed: i64) -> Self {
        JavaRandom {
            seed: (seed as u64 ^ MULT) & MASK,
        }
    }

    fn next(&mut self, bits: u32) -> u64 {
        self.seed = (self.seed.wrapping_mul(MULT).wrapping_add(0xB)) & MASK;
        self.seed >> (48 - bits)
    }

    /// `Random.nextDouble()`: 53 random bits over 2^53.
    pub fn next_f64(&mut self) -> f64 {
        let hi = self.next(26);
        let lo = self.next(27);
        ((hi << 27) + lo) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_java_util_random() {
        // `new java.util.Random(17).nextDouble()` x3 and `new Random(0).nextDouble()`, printed by
        // OpenJDK 17.
        let mut r = JavaRandom::new(17);
        let got: Vec<f64> = (0..3).map(|_| r.next_f64()).collect();
        assert_eq!(got, JAVA_17);
        assert_eq!(JavaRandom::new(0).next_f64(), JAVA_0);
    }

    const JAVA_17: [f64; 3] = [0.7323115139597316, 0.6973704783607497, 0.08295611145017068];
    const JAVA_0: f64 = 0.730967787376657;
}

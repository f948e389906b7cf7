//! The reference's units (CoflowSim `Constants`). Its clock counts "milliseconds" of which 1024
//! make a simulated second, and a port carries 1024·2^20 bit/s, so a full-rate flow moves exactly
//! one MB (2^20 bytes) per 8 ms time step.

/// Port capacity, bit/s (`RACK_BITS_PER_SEC`).
pub const PORT_BPS: f64 = 1024.0 * 1_048_576.0;
/// Port capacity, bytes per simulated second (`RACK_BYTES_PER_SEC`).
pub const PORT_BYTES_PER_S: f64 = PORT_BPS / 8.0;
/// Simulated milliseconds in a simulated second (`SIMULATION_SECOND_MILLIS`).
pub const SECOND_MS: i64 = 1024;
/// One time step (`SIMULATION_QUANTA` = 1024 / 128).
pub const STEP_MS: i64 = 8;
/// Arrivals are admitted once per epoch of ten simulated seconds, at its start.
pub const EPOCH_MS: i64 = 10 * SECOND_MS;
/// The reference stops its clock here (`SIMULATION_ENDTIME_MILLIS`).
pub const END_MS: i64 = 86_400 * SECOND_MS;
/// Bytes below which a flow counts as finished, and rates below which a port counts as full
/// (`Constants.ZERO`).
pub const ZERO: f64 = 1e-3;
/// 2^20 bytes.
pub const MB: f64 = 1_048_576.0;
/// Bytes a flow at `bps` moves in one step, computed as the reference does
/// (`bps / 8 * (8 / 1024)`; every factor is a power of two, so this is exact).
pub fn bytes_per_step(bps: f64) -> f64 {
    (bps / 8.0) * (STEP_MS as f64 / SECOND_MS as f64)
}

/// Steps until `rem` bytes, moving `per_step` bytes a step, drop to `ZERO` or below (at least
/// 1), as the reference's repeated `rem -= min(per_step, rem)` would; `None` if never.
pub fn steps_to_finish(rem: f64, per_step: f64) -> Option<u64> {
    if per_step.is_nan() || per_step <= 0.0 {
        return None;
    }
    let guess = ((rem - ZERO) / per_step).ceil();
    if !guess.is_finite() || guess > 1e15 {
        return None;
    }
    let mut k = (guess as u64).max(1);
    while k > 1 && rem - (k - 1) as f64 * per_step <= ZERO {
        k -= 1;
    }
    while rem - k as f64 * per_step > ZERO {
        k += 1;
    }
    Some(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_rate_flow_moves_one_mb_per_step() {
        assert_eq!(STEP_MS, 8);
        assert_eq!(bytes_per_step(PORT_BPS), MB);
        assert_eq!(steps_to_finish(3.0 * MB, MB), Some(3));
        assert_eq!(steps_to_finish(3.0 * MB, MB / 3.0), Some(9));
        assert_eq!(steps_to_finish(3.0 * MB + 1.0, MB), Some(4));
        assert_eq!(steps_to_finish(1.0, MB), Some(1));
        assert_eq!(steps_to_finish(MB, 0.0), None);
    }

    #[test]
    fn steps_match_repeated_subtraction() {
        for (rem, b) in [
            (7.0 * MB, MB / 7.0),
            (5.0 * MB, 123_456.789),
            (MB, MB / 150.0),
        ] {
            let (mut r, mut k) = (rem, 0u64);
            while r > ZERO {
                r -= b.min(r);
                k += 1;
            }
            assert_eq!(steps_to_finish(rem, b), Some(k), "rem {rem} b {b}");
        }
    }
}

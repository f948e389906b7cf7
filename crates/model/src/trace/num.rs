//! The unit conversions of the trace formats, shared by readers, writers and generators so that
//! a written number always reads back to the very same f64.

use crate::units::MB;

/// Trace arrival times are milliseconds; coflows hold seconds.
pub fn arrival_s_of_ms(ms: f64) -> f64 {
    ms / 1000.0
}

/// Bytes of each flow when a reducer's `reducer_mb` is split equally over `mappers` mappers
/// (CoflowSim's reading of the coflow-benchmark format).
pub fn flow_bytes(reducer_mb: f64, mappers: usize) -> f64 {
    reducer_mb * MB / mappers as f64
}

/// Longest number a trace writer prints plainly; a longer one is printed with an exponent.
const PLAIN_MAX: usize = 24;

/// `x` as a trace file holds it: the shortest text that reads back as `x`, plain (`10833`,
/// `0.25`) unless that is longer than 24 characters, then with an exponent (`1e-320`; plainly
/// it is 325 characters).
pub(crate) fn written(x: f64) -> String {
    let plain = format!("{x}");
    if plain.len() <= PLAIN_MAX {
        plain
    } else {
        format!("{x:e}")
    }
}

/// Milliseconds to print for `arrival_s` such that `arrival_s_of_ms` gives `arrival_s` back.
pub(crate) fn ms_for(arrival_s: f64) -> f64 {
    let guess = arrival_s * 1000.0;
    nearest_that(guess, |ms| arrival_s_of_ms(ms) == arrival_s)
}

/// Reducer MB to print for flows of `bytes` each over `mappers` mappers such that `flow_bytes`
/// gives `bytes` back.
pub(crate) fn reducer_mb_for(bytes: f64, mappers: usize) -> f64 {
    let guess = bytes * mappers as f64 / MB;
    nearest_that(guess, |mb| flow_bytes(mb, mappers) == bytes)
}

/// The integer nearest `guess` if it satisfies `ok`, else the first f64 within a few ulps of
/// `guess` that does, else `guess` itself (then a round trip may drift by an ulp).
fn nearest_that(guess: f64, ok: impl Fn(f64) -> bool) -> f64 {
    let rounded = guess.round();
    if ok(rounded) {
        return rounded;
    }
    if ok(guess) || !guess.is_finite() || guess <= 0.0 {
        return guess;
    }
    let bits = guess.to_bits();
    for k in 1..=8u64 {
        for cand in [f64::from_bits(bits + k), f64::from_bits(bits - k)] {
            if ok(cand) {
                return cand;
            }
        }
    }
    guess
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_values_come_back_integral() {
        assert_eq!(ms_for(10.833), 10833.0);
        assert_eq!(reducer_mb_for(flow_bytes(48.0, 3), 3), 48.0);
    }

    #[test]
    fn awkward_values_round_trip() {
        for (mb, m) in [(0.1, 3), (1.0 / 3.0, 7), (123.456, 11), (5e-9, 13)] {
            let b = flow_bytes(mb, m);
            assert_eq!(flow_bytes(reducer_mb_for(b, m), m), b);
        }
        for s in [0.1234567, 1.0 / 3.0, 3629.235] {
            assert_eq!(arrival_s_of_ms(ms_for(s)), s);
        }
    }

    /// Adversarial pass 32, A11: `trace convert` wrote a 1e-320 ms arrival in 325 characters.
    #[test]
    fn numbers_are_written_short_and_read_back_the_same() {
        assert_eq!(written(10833.0), "10833");
        assert_eq!(written(0.25), "0.25");
        for x in [
            1e-320,
            5e-324,
            1e-300,
            1.0 / 3.0,
            9007199254740992.0,
            1e-7,
            123.456e-9,
        ] {
            let w = written(x);
            assert!(w.len() <= PLAIN_MAX, "{x}: {w}");
            assert_eq!(w.parse::<f64>().unwrap().to_bits(), x.to_bits(), "{w}");
        }
        assert_eq!(written(1e-320), "1e-320");
    }
}

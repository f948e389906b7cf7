//! Units. Internally sizes are bytes (f64) and time is seconds (f64); rates are bytes per second.
//! Traces speak megabytes (2^20 bytes) and milliseconds; users speak bits per second.

use thiserror::Error;

/// Bytes in one trace megabyte (the coflow literature's MB is 2^20 bytes).
pub const MB: f64 = 1_048_576.0;

#[derive(Debug, Error, PartialEq)]
#[error("invalid rate `{text}`: {why} (use bits per second, e.g. 1000000000, 10gbit, 500mbit)")]
pub struct RateError {
    pub text: String,
    pub why: &'static str,
}

/// The slowest and fastest link rates accepted, bits per second.
pub const MIN_RATE_BPS: f64 = 1.0;
pub const MAX_RATE_BPS: f64 = 1e15;

/// Parse a link rate given in bits per second: a plain number (`1e9`, `1000000000`) or a number
/// with a unit suffix `kbit`, `mbit`, `gbit`, `tbit`, `pbit` (decimal, as `tc` reads them; `bps`/`bit`
/// are plain). Returns bits per second.
pub fn parse_rate_bps(text: &str) -> Result<f64, RateError> {
    let t = text.trim().to_ascii_lowercase();
    let err = |why| RateError {
        text: crate::echo::echo(text),
        why,
    };
    let split = t
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.trim().parse().map_err(|_| err("not a number"))?;
    let mult = match unit.trim() {
        "" | "bit" | "bps" => 1.0,
        "kbit" | "kbps" => 1e3,
        "mbit" | "mbps" => 1e6,
        "gbit" | "gbps" => 1e9,
        "tbit" | "tbps" => 1e12,
        // The range below is worded in Pbit/s: the unit it names is read.
        "pbit" | "pbps" => 1e15,
        _ => return Err(err("unknown unit")),
    };
    let bps = value * mult;
    if !bps.is_finite() || bps <= 0.0 {
        return Err(err("must be positive and finite"));
    }
    // No link is slower or faster; beyond these, times in the simulators stop being exact
    // (1e-300 bit/s used to make every flow stall, 1e308 to overflow).
    if !(MIN_RATE_BPS..=MAX_RATE_BPS).contains(&bps) {
        return Err(err("must be between 1 bit/s and 1 Pbit/s (1e15)"));
    }
    Ok(bps)
}

#[derive(Debug, Error, PartialEq)]
#[error("invalid size `{text}`: {why} (use bytes, e.g. 100, 1k, 64k, 1m; k = 1024)")]
pub struct SizeError {
    pub text: String,
    pub why: &'static str,
}

/// Parse a size in bytes: a whole number with an optional binary suffix `k`, `m`, `g` (or `kb`,
/// `kib`, ...; 1k = 1024 bytes, as traces count MB), e.g. `100`, `1k`, `64k`, `1m`.
pub fn parse_size_bytes(text: &str) -> Result<u64, SizeError> {
    let t = text.trim().to_ascii_lowercase();
    let err = |why| SizeError {
        text: crate::echo::echo(text),
        why,
    };
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(err("not a whole number"));
    }
    let value: u64 = num.parse().map_err(|_| err("too large"))?;
    let shift = match unit.trim() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(err("unknown unit")),
    };
    value.checked_mul(1 << shift).ok_or(err("too large"))
}

/// `v` for a message: as written for everyday magnitudes, in exponent form beyond them
/// (`{}` of 1e-300 is 300 digits long).
pub fn short_num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || (1e-4..1e15).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adversarial pass 32, A5 and A9: a 100 KB rate token was quoted whole; `1pbit` was an
    /// unknown unit while the range error names 1 Pbit/s.
    #[test]
    fn long_rates_and_sizes_are_quoted_bounded_and_pbit_is_a_unit() {
        let long = format!("{}x", "9".repeat(100_000));
        let e = parse_rate_bps(&long).unwrap_err().to_string();
        assert!(e.len() < 400 && e.contains("bytes)"), "{} bytes", e.len());
        let e = parse_size_bytes(&long).unwrap_err().to_string();
        assert!(e.len() < 400 && e.contains("bytes)"), "{} bytes", e.len());
        assert_eq!(parse_rate_bps("1pbit"), Ok(1e15));
        assert_eq!(parse_rate_bps("0.5Pbps"), Ok(5e14));
        let e = parse_rate_bps("2pbit").unwrap_err();
        assert!(e.why.contains("1 Pbit/s"), "{e}");
    }

    #[test]
    fn numbers_in_messages_stay_short() {
        assert_eq!(short_num(0.001), "0.001");
        assert_eq!(short_num(1e300), "1e300");
        assert_eq!(short_num(-1e-300), "-1e-300");
        assert_eq!(short_num(42.0), "42");
    }

    #[test]
    fn parses_plain_and_suffixed_rates() {
        assert_eq!(parse_rate_bps("1000000000").unwrap(), 1e9);
        assert_eq!(parse_rate_bps("1e9").unwrap(), 1e9);
        assert_eq!(parse_rate_bps("10gbit").unwrap(), 1e10);
        assert_eq!(parse_rate_bps("500mbit").unwrap(), 5e8);
        assert_eq!(parse_rate_bps("160Mbit").unwrap(), 1.6e8);
        for absurd in ["1e-300", "0.5bit", "1e308", "2000tbit"] {
            let e = parse_rate_bps(absurd).unwrap_err();
            assert!(
                e.to_string().contains("between 1 bit/s and 1 Pbit/s"),
                "{e}"
            );
        }
        assert_eq!(parse_rate_bps("1bit").unwrap(), 1.0);
        assert_eq!(parse_rate_bps("1000tbit").unwrap(), 1e15);
    }

    #[test]
    fn rejects_bad_rates() {
        assert!(parse_rate_bps("fast").is_err());
        assert!(parse_rate_bps("-1gbit").is_err());
        assert!(parse_rate_bps("0").is_err());
        assert!(parse_rate_bps("10furlong").is_err());
    }
    #[test]
    fn sizes_take_binary_suffixes_and_refuse_the_rest() {
        assert_eq!(parse_size_bytes("100"), Ok(100));
        assert_eq!(parse_size_bytes("1k"), Ok(1024));
        assert_eq!(parse_size_bytes("64K"), Ok(65536));
        assert_eq!(parse_size_bytes("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size_bytes("2g"), Ok(2 << 30));
        for bad in ["", "k", "1.5k", "-1", "1t", "99999999999999999999"] {
            assert!(parse_size_bytes(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_size_bytes("18446744073709551615k").unwrap_err().why,
            "too large"
        );
    }
}

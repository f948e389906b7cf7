//! Value parsers for real-valued flags: a finite number inside the flag's documented range, or
//! clap's error naming the flag (`invalid value 'NaN' for '--load <LOAD>': ...`). NaN, infinity
//! and values such as 1e-308 Gbps are refused where they are typed, not met later as a
//! 300-digit statistic. Integer flags use clap's own `value_parser!(u64).range(..)`.

/// Parses a finite f64 in `lo..=hi`.
pub fn f64_in(lo: f64, hi: f64) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    move |s| match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (lo..=hi).contains(&v) => Ok(v + 0.0),
        _ => Err(format!("expected a number from {lo} to {hi}")),
    }
}

/// Parses a finite f64 above 0 and at most `hi` (a fraction, a speed-up factor).
pub fn f64_positive(hi: f64) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    move |s| match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= hi => Ok(v),
        _ => Err(format!("expected a number above 0 and at most {hi}")),
    }
}

/// Link speeds in Gbps: 1 Mbps to 10 Tbps. Slower or faster is a typo, and 1e-308 Gbps turns
/// every time into a 300-digit number.
pub const GBPS: (f64, f64) = (0.001, 10_000.0);

/// Parses a link speed in Gbps within [`GBPS`].
pub fn gbps() -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    f64_in(GBPS.0, GBPS.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_and_out_of_range_values_are_refused_with_the_range() {
        let p = f64_in(0.0, 1.0);
        assert_eq!(p("0.25"), Ok(0.25));
        assert_eq!(p("1"), Ok(1.0));
        assert!(p("-0").is_ok_and(|v| v.is_sign_positive()));
        for bad in ["NaN", "inf", "-inf", "1.0000001", "-1e-308", "x", ""] {
            assert_eq!(p(bad), Err("expected a number from 0 to 1".into()), "{bad}");
        }
        let q = f64_positive(1000.0);
        assert_eq!(q("1e-308"), Ok(1e-308));
        assert!(q("0").is_err() && q("1000.5").is_err() && q("NaN").is_err());
        let g = gbps();
        assert!(g("1e-308").is_err() && g("25").is_ok() && g("18446744073709551615").is_err());
        assert_eq!(
            g("0.0001"),
            Err("expected a number from 0.001 to 10000".into())
        );
    }
}

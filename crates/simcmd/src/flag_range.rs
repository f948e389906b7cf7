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

/// Parses 0 (a flag's "off" or "exact") or a finite f64 in `lo..=hi`.
pub fn zero_or_in(lo: f64, hi: f64) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    move |s| match s.trim().parse::<f64>() {
        Ok(0.0) => Ok(0.0),
        Ok(v) if v.is_finite() && (lo..=hi).contains(&v) => Ok(v),
        _ => Err(format!("expected 0 or a number from {lo} to {hi}")),
    }
}

/// Parses 0 or a finite f64 of at least `lo` (the upper bound is checked where it depends on
/// other flags).
pub fn zero_or_at_least(lo: f64) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    move |s| match s.trim().parse::<f64>() {
        Ok(0.0) => Ok(0.0),
        Ok(v) if v.is_finite() && v >= lo => Ok(v),
        _ => Err(format!("expected 0 or a finite number of at least {lo}")),
    }
}

/// Simulated time steps, in seconds (Varys's T and δ, Aalo's and Saath's Δ, `--refresh`,
/// `--flow-quantum`): at least a millisecond, so that `t + step` still moves past `t` at the
/// latest time a trace holds (2^53 ms, where one ulp is about 2 ms) and a run takes a bounded
/// number of steps; at most 10^9 s (32 years, past which a step is simply never taken).
pub const SIM_STEP_S: (f64, f64) = (1e-3, 1e9);

/// Parses a simulated time step within [`SIM_STEP_S`].
pub fn sim_step_s() -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    f64_in(SIM_STEP_S.0, SIM_STEP_S.1)
}

/// Parses 0 (off, exact or event-driven) or a simulated time step within [`SIM_STEP_S`].
pub fn zero_or_sim_step_s() -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    zero_or_in(SIM_STEP_S.0, SIM_STEP_S.1)
}

/// Link speeds in Gbps: 1 Mbps to 10 Tbps. Slower or faster is a typo, and 1e-308 Gbps turns
/// every time into a 300-digit number.
pub const GBPS: (f64, f64) = (0.001, 10_000.0);

/// Parses a link speed in Gbps within [`GBPS`].
pub fn gbps() -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    f64_in(GBPS.0, GBPS.1)
}

/// Ranges of the flags that become a wait (`std::time::Duration`). `Duration::from_secs_f64`
/// panics on NaN, negative values and more than 2^64 s, and a finite value such as 1e17 ms means
/// "never": each is bounded where it is typed. The upper bounds are far beyond any useful
/// setting, yet short enough that a typo shows within a working day.
pub mod wait {
    /// A decision tick, ms (`coordinator`, `replay`; 0 = only on events): at most a minute.
    pub const TICK_MS: (f64, f64) = (0.0, 60_000.0);
    /// A progress report interval, ms (`coordinator --report-interval-ms`).
    pub const REPORT_INTERVAL_MS: (f64, f64) = (1.0, 10_000.0);
    /// The lead time of a synchronised start, ms (`millisort`, `milliquery run`).
    pub const START_MARGIN_MS: (f64, f64) = (0.0, 60_000.0);
    /// A whole run's timeout, or a silence before a peer or a run is declared dead, s: above
    /// 0 and at most a day.
    pub const TIMEOUT_S: f64 = 86_400.0;
    /// The shortest timeout, s: a millisecond (no reply comes sooner).
    pub const MIN_TIMEOUT_S: f64 = 0.001;
    /// A moment within a run, s (`transfers --adhoc-at-s`): from the start to a day later.
    pub const AT_S: (f64, f64) = (0.0, 86_400.0);
}

/// Parses a timeout in seconds: at least [`wait::MIN_TIMEOUT_S`] (a millisecond) and at most
/// [`wait::TIMEOUT_S`]. Below a millisecond no answer can come (`status --timeout-s 1e-320`
/// was accepted as "above 0" and then reported a 330-character wait; pass 34, C11).
pub fn timeout_s() -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    let (lo, hi) = (wait::MIN_TIMEOUT_S, wait::TIMEOUT_S);
    move |s| match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (lo..=hi).contains(&v) => Ok(v),
        _ => Err(format!(
            "expected a number above 0 and at most {hi}, at least {lo} (a millisecond)"
        )),
    }
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
        // Every wait converts to a Duration without panicking, at both ends of its range.
        let t = timeout_s();
        for bad in [
            "0", "-1", "NaN", "inf", "1e300", "86400.5", "1e-320", "5e-324", "0.0009",
        ] {
            assert!(t(bad).is_err(), "{bad}");
        }
        assert_eq!(t("0.001"), Ok(0.001));
        for (lo, hi) in [
            wait::TICK_MS,
            wait::START_MARGIN_MS,
            wait::REPORT_INTERVAL_MS,
        ] {
            assert!(std::time::Duration::try_from_secs_f64(lo / 1e3).is_ok());
            assert!(std::time::Duration::try_from_secs_f64(hi / 1e3).is_ok());
        }
        assert!(std::time::Duration::try_from_secs_f64(t("86400").unwrap()).is_ok());
        let z = zero_or_sim_step_s();
        assert_eq!(z("0"), Ok(0.0));
        assert_eq!(z("-0"), Ok(0.0));
        assert_eq!(z("0.01"), Ok(0.01));
        for bad in ["1e-308", "0.0009", "NaN", "inf", "-1", "1e10"] {
            assert_eq!(
                z(bad),
                Err("expected 0 or a number from 0.001 to 1000000000".into()),
                "{bad}"
            );
        }
        assert!(sim_step_s()("0").is_err() && sim_step_s()("2").is_ok());
        // The low end of the range converts too (1e-308 was the low end before pass 34, C11).
        assert!(std::time::Duration::try_from_secs_f64(t("0.001").unwrap()).is_ok());
        assert!(t("1e-308").is_err());
    }
}

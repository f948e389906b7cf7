//! CoflowSim's CUSTOM-style synthetic workload: each coflow belongs to a class (drawn by its
//! fraction) that bounds its width (flows) and length (longest flow, MB); arrivals are Poisson.
//!
//! A coflow has distinct random mapper ports and distinct random reducer ports (a port may be
//! both, giving a self-flow, as in the FB trace). Each reducer draws its own longest-flow length
//! uniformly in the class range and receives `length x mappers` MB, split equally over the
//! mappers: every flow then lies in the length range and the coflow is writable in the
//! coflow-benchmark format.

use std::fmt;
use std::str::FromStr;

use rand::seq::index::sample;
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::arrivals::{max_mean_ms, too_late, PoissonArrivals};
use super::width::WidthPlan;
use super::GenError;
use crate::coflow::{Coflow, Flow, Trace};
use crate::trace::num::flow_bytes;
use crate::trace::MAX_MB;

/// Tolerance on the sum of class fractions.
const FRACTION_TOLERANCE: f64 = 1e-6;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassSpec {
    pub name: String,
    /// Share of coflows drawn from this class; the fractions of a spec sum to 1.
    pub fraction: f64,
    /// Flows per coflow (mappers x reducers), inclusive range.
    pub min_width: usize,
    pub max_width: usize,
    /// Longest flow in MB, half-open range `[min, max)` (a point if equal), so that a class
    /// ending at 5 MB stays *short* in the bins' sense.
    pub min_length_mb: f64,
    pub max_length_mb: f64,
}

/// The FB trace's bin mix as published with Varys (52% SN, 16% LN, 15% SW, 17% LW), with widths
/// and lengths spanning what the FB2010 trace shows in each bin (widths up to ~20,000 flows,
/// lengths up to ~2,500 MB), split at the bin boundaries (50 flows, 5 MB).
pub fn default_classes() -> Vec<ClassSpec> {
    let class = |name: &str, fraction, w: (usize, usize), l: (f64, f64)| ClassSpec {
        name: name.to_string(),
        fraction,
        min_width: w.0,
        max_width: w.1,
        min_length_mb: l.0,
        max_length_mb: l.1,
    };
    vec![
        class("SN", 0.52, (1, 50), (0.1, 5.0)),
        class("LN", 0.16, (1, 50), (5.0, 2500.0)),
        class("SW", 0.15, (51, 20_000), (0.1, 5.0)),
        class("LW", 0.17, (51, 20_000), (5.0, 2500.0)),
    ]
}

impl ClassSpec {
    fn check(&self) -> Result<(), GenError> {
        let bad = |why: &str| {
            Err(GenError::BadClass {
                name: self.name.clone(),
                why: why.to_string(),
            })
        };
        // At most 1: `A:1e308:..` was refused only by a sum printed in 309 digits.
        if !(self.fraction.is_finite() && (0.0..=1.0).contains(&self.fraction)) {
            return bad("fraction must be a number from 0 to 1");
        }
        if self.min_width == 0 || self.min_width > self.max_width {
            return bad("width range must satisfy 1 <= min <= max");
        }
        let (lo, hi) = (self.min_length_mb, self.max_length_mb);
        // Up to 2^33 MB (2^53 bytes), what trace readers take.
        if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && lo <= hi && hi <= MAX_MB) {
            return bad("length range must satisfy 0 < min <= max <= 2^33 MB");
        }
        Ok(())
    }

    fn draw_length_mb(&self, rng: &mut impl Rng) -> f64 {
        if self.min_length_mb < self.max_length_mb {
            rng.gen_range(self.min_length_mb..self.max_length_mb)
        } else {
            self.min_length_mb
        }
    }
}

impl fmt::Display for ClassSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}-{}:{}-{}",
            self.name,
            self.fraction,
            self.min_width,
            self.max_width,
            self.min_length_mb,
            self.max_length_mb
        )
    }
}

/// `NAME:FRACTION:MINW-MAXW:MINMB-MAXMB`, e.g. `SN:0.52:1-50:0.1-5`. A range may be a single
/// value (`LW:0.17:100:10`).
impl FromStr for ClassSpec {
    type Err = GenError;

    fn from_str(text: &str) -> Result<Self, GenError> {
        let bad = |why: String| GenError::BadClassText {
            text: text.to_string(),
            why,
        };
        let parts: Vec<&str> = text.trim().split(':').collect();
        let [name, fraction, width, length] = parts[..] else {
            return Err(bad(format!("{} `:`-separated parts, not 4", parts.len())));
        };
        if name.is_empty() {
            return Err(bad("empty name".into()));
        }
        let fraction = fraction
            .parse()
            .map_err(|_| bad(format!("fraction `{fraction}` is not a number")))?;
        let (min_width, max_width) = range(width)
            .ok_or_else(|| bad(format!("width `{width}` is not `MIN-MAX` in flows")))?;
        let (min_length_mb, max_length_mb) = range(length)
            .ok_or_else(|| bad(format!("length `{length}` is not `MIN-MAX` in MB")))?;
        let class = ClassSpec {
            name: name.to_string(),
            fraction,
            min_width,
            max_width,
            min_length_mb,
            max_length_mb,
        };
        class.check()?;
        Ok(class)
    }
}

/// `A-B` or `A`. The dash of an exponent (`1e-3`) does not split.
fn range<T: FromStr + Copy>(text: &str) -> Option<(T, T)> {
    let bytes = text.as_bytes();
    let split =
        (1..bytes.len()).find(|&i| bytes[i] == b'-' && !matches!(bytes[i - 1], b'e' | b'E'));
    match split {
        Some(i) => Some((text[..i].parse().ok()?, text[i + 1..].parse().ok()?)),
        None => {
            let v = text.parse().ok()?;
            Some((v, v))
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomSpec {
    pub ports: u32,
    pub coflows: usize,
    pub classes: Vec<ClassSpec>,
    /// Mean of the exponential inter-arrival times; arrivals are rounded to whole ms.
    pub mean_interarrival_ms: f64,
    pub seed: u64,
}

impl CustomSpec {
    pub fn validate(&self) -> Result<(), GenError> {
        self.plans().map(|_| ())
    }

    /// Coflows with ids 1..=coflows, the first arriving at 0.
    pub fn generate(&self) -> Result<Trace, GenError> {
        let plans = self.plans()?;
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut arrivals = PoissonArrivals::new(self.mean_interarrival_ms);
        let ports = self.ports as usize;
        let mut coflows = Vec::with_capacity(self.coflows);
        for id in 1..=self.coflows as u64 {
            let arrival_s = arrivals.next_s(&mut rng);
            let k = self.pick_class(&mut rng);
            let class = &self.classes[k];
            let (m, r) = plans[k].draw(&mut rng);
            let mappers = sample(&mut rng, ports, m).into_vec();
            let reducers = sample(&mut rng, ports, r).into_vec();
            let mut flows = Vec::with_capacity(m * r);
            for &dst in &reducers {
                let bytes = flow_bytes(class.draw_length_mb(&mut rng) * m as f64, m);
                flows.extend(mappers.iter().map(|&src| Flow {
                    src: src as u32,
                    dst: dst as u32,
                    bytes,
                }));
            }
            coflows.push(Coflow::new(id, arrival_s, flows));
        }
        Ok(Trace {
            ports: self.ports,
            coflows,
        })
    }

    /// Index of a class drawn by fraction (the last class absorbs rounding).
    fn pick_class(&self, rng: &mut impl Rng) -> usize {
        let mut u: f64 = rng.gen();
        for (k, c) in self.classes.iter().enumerate() {
            if u < c.fraction {
                return k;
            }
            u -= c.fraction;
        }
        self.classes.len() - 1
    }

    /// Validates the spec and plans each class's widths on this fabric.
    fn plans(&self) -> Result<Vec<WidthPlan>, GenError> {
        let spec = |field, why: &str| {
            Err(GenError::BadSpec {
                field,
                why: why.to_string(),
            })
        };
        if self.ports == 0 {
            return spec("ports", "must be at least 1");
        }
        if !(self.mean_interarrival_ms.is_finite() && self.mean_interarrival_ms >= 0.0) {
            return spec("mean_interarrival_ms", "must be finite and not negative");
        }
        if let Some(why) = too_late(self.mean_interarrival_ms, self.coflows) {
            return spec(
                "mean_interarrival_ms",
                &format!(
                    "{} ms is too long: {why}; for {} coflows it must be at most {:.3e} ms",
                    crate::units::short_num(self.mean_interarrival_ms),
                    self.coflows,
                    max_mean_ms(self.coflows)
                ),
            );
        }
        if self.classes.is_empty() {
            return spec("classes", "at least one class is needed");
        }
        let sum: f64 = self.classes.iter().map(|c| c.fraction).sum();
        if (sum - 1.0).abs() > FRACTION_TOLERANCE {
            return Err(GenError::Fractions { sum });
        }
        self.classes
            .iter()
            .map(|c| {
                c.check()?;
                WidthPlan::new(c.min_width, c.max_width, self.ports as usize).ok_or_else(|| {
                    GenError::BadClass {
                        name: c.name.clone(),
                        why: format!(
                            "no mappers x reducers on {} ports gives {}..={} flows",
                            self.ports, c.min_width, c.max_width
                        ),
                    }
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bins::Bin;
    use crate::units::MB;

    fn spec(seed: u64) -> CustomSpec {
        CustomSpec {
            ports: 150,
            coflows: 400,
            classes: default_classes(),
            mean_interarrival_ms: 500.0,
            seed,
        }
    }

    #[test]
    fn parses_and_prints_classes() {
        let c: ClassSpec = "SN:0.52:1-50:0.1-5".parse().unwrap();
        assert_eq!(c, default_classes()[0]);
        assert_eq!(c.to_string(), "SN:0.52:1-50:0.1-5");
        let c: ClassSpec = "X:1:100:1e-3-2E-2".parse().unwrap();
        assert_eq!((c.min_width, c.max_width), (100, 100));
        assert_eq!((c.min_length_mb, c.max_length_mb), (1e-3, 2e-2));
    }

    #[test]
    fn bad_classes_say_why() {
        for (text, why) in [
            ("SN:0.5:1-50", "3 `:`-separated parts"),
            (":0.5:1-50:1-2", "empty name"),
            ("SN:half:1-50:1-2", "fraction `half`"),
            ("A:1e308:1-2:1-2", "fraction must be a number from 0 to 1"),
            ("A:1.5:1-2:1-2", "fraction must be a number from 0 to 1"),
            ("SN:0.5:a-50:1-2", "width `a-50`"),
            ("SN:0.5:1-50:x", "length `x`"),
            ("SN:0.5:50-1:1-2", "width range"),
            ("SN:0.5:1-50:0-2", "length range"),
        ] {
            let e = text.parse::<ClassSpec>().unwrap_err().to_string();
            assert!(e.contains(why), "{text}: {e}");
        }
    }

    #[test]
    fn fractions_must_sum_to_one() {
        let mut s = spec(1);
        s.classes[0].fraction = 0.5;
        let e = s.generate().unwrap_err();
        assert!(matches!(e, GenError::Fractions { .. }), "{e}");
        assert!(e.to_string().contains("sum to 0.98"), "{e}");
    }

    #[test]
    fn unreachable_width_is_an_error() {
        let mut s = spec(1);
        s.ports = 4;
        let e = s.generate().unwrap_err().to_string();
        assert!(e.contains("class SW") && e.contains("4 ports"), "{e}");
    }

    #[test]
    fn same_seed_same_trace_other_seed_other_trace() {
        assert_eq!(spec(7).generate().unwrap(), spec(7).generate().unwrap());
        assert_ne!(spec(7).generate().unwrap(), spec(8).generate().unwrap());
    }

    #[test]
    fn coflows_respect_their_class() {
        let t = spec(11).generate().unwrap();
        assert_eq!(t.coflows.len(), 400);
        let mut per_bin = [0usize; 4];
        for c in &t.coflows {
            per_bin[Bin::ALL.iter().position(|&b| b == Bin::of(c)).unwrap()] += 1;
            assert!(c
                .flows
                .iter()
                .all(|f| f.bytes > 0.0 && f.src < 150 && f.dst < 150));
            let len_mb = c.length_bytes() / MB;
            assert!((0.1 - 1e-9..2500.0 + 1e-9).contains(&len_mb));
        }
        // Bins follow the class fractions (52/16/15/17%) within sampling noise.
        for (n, p) in per_bin.iter().zip([0.52, 0.16, 0.15, 0.17]) {
            let share = *n as f64 / 400.0;
            assert!((share - p).abs() < 0.07, "{per_bin:?}");
        }
    }
}

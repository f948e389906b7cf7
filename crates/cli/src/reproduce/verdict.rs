//! Verdicts by a stated tolerance, not by eye: each number of a row is compared with the
//! thesis' and the row's verdict follows from its numbers.

use std::fmt;

/// Two ratios (speed-ups, slowdowns) agree when they are within this factor of each other.
pub const RATIO_TOLERANCE: f64 = 1.15;
/// A ratio within this factor of 1 is "no difference" when judging direction.
pub const NEUTRAL: f64 = 1.05;
/// Two percentages agree within this many percentage points; "partly" up to three times it.
pub const PERCENT_POINTS: f64 = 5.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Reproduced,
    Partly,
    Not,
    /// Needs a testbed, or a feature another issue builds, or the thesis gives no number.
    NotRun,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Reproduced => "reproduced",
            Verdict::Partly => "partly",
            Verdict::Not => "not",
            Verdict::NotRun => "not run",
        })
    }
}

/// What a claim compares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A ratio such as "X is 2.16x slower than Varys" (above 1: Varys better).
    Ratio,
    /// A percentage such as "75% met their deadline".
    Percent,
    /// An upper bound on a ratio, such as "within 12%" (1.12).
    AtMost,
}

/// One number of a row: the thesis' and ours.
#[derive(Debug, Clone)]
pub struct Check {
    pub label: String,
    pub kind: Kind,
    pub thesis: f64,
    pub ours: f64,
}

fn direction(x: f64) -> i8 {
    if x > NEUTRAL {
        1
    } else if x < 1.0 / NEUTRAL {
        -1
    } else {
        0
    }
}

impl Check {
    pub fn ratio(label: impl Into<String>, thesis: f64, ours: f64) -> Check {
        Check {
            label: label.into(),
            kind: Kind::Ratio,
            thesis,
            ours,
        }
    }

    pub fn percent(label: impl Into<String>, thesis: f64, ours: f64) -> Check {
        Check {
            label: label.into(),
            kind: Kind::Percent,
            thesis,
            ours,
        }
    }

    pub fn at_most(label: impl Into<String>, thesis: f64, ours: f64) -> Check {
        Check {
            label: label.into(),
            kind: Kind::AtMost,
            thesis,
            ours,
        }
    }

    /// Ratios: reproduced within [`RATIO_TOLERANCE`] and on the same side of 1 (by more than
    /// [`NEUTRAL`], or both within it); not when neither holds; partly when one does. Percentages: reproduced
    /// within [`PERCENT_POINTS`], partly within three times that. Bounds: reproduced when ours
    /// is at most the bound times the tolerance, partly when at least on the bound's side of 1.
    pub fn verdict(&self) -> Verdict {
        if !self.ours.is_finite() {
            return Verdict::Not;
        }
        match self.kind {
            Kind::Ratio => {
                let close = (self.ours / self.thesis).ln().abs() <= RATIO_TOLERANCE.ln();
                let same_way = direction(self.ours) == direction(self.thesis);
                match (close, same_way) {
                    (true, true) => Verdict::Reproduced,
                    (false, false) => Verdict::Not,
                    _ => Verdict::Partly,
                }
            }
            Kind::Percent => {
                let d = (self.ours - self.thesis).abs();
                if d <= PERCENT_POINTS {
                    Verdict::Reproduced
                } else if d <= 3.0 * PERCENT_POINTS {
                    Verdict::Partly
                } else {
                    Verdict::Not
                }
            }
            Kind::AtMost => {
                if self.ours <= self.thesis * RATIO_TOLERANCE {
                    Verdict::Reproduced
                } else {
                    Verdict::Not
                }
            }
        }
    }

    /// "fair/varys avg 2.72 (thesis 2.16, 1.26x apart)".
    pub fn describe(&self) -> String {
        let apart = match self.kind {
            Kind::Percent => format!("{:.1} pp apart", (self.ours - self.thesis).abs()),
            Kind::AtMost => format!("bound {}", fmt_num(self.thesis)),
            Kind::Ratio => {
                let r = self.ours / self.thesis;
                format!("{:.2}x apart", r.max(1.0 / r))
            }
        };
        let unit = if self.kind == Kind::Percent { "%" } else { "" };
        format!(
            "{} {}{unit} (thesis {}{unit}, {apart})",
            self.label,
            fmt_num(self.ours),
            fmt_num(self.thesis)
        )
    }
}

/// A row's verdict from its checks: all reproduced, reproduced; all not, not; else partly.
pub fn combine(checks: &[Check]) -> Verdict {
    if checks.is_empty() {
        return Verdict::NotRun;
    }
    let v: Vec<Verdict> = checks.iter().map(Check::verdict).collect();
    if v.iter().all(|&x| x == Verdict::Reproduced) {
        Verdict::Reproduced
    } else if v.iter().all(|&x| x == Verdict::Not) {
        Verdict::Not
    } else {
        Verdict::Partly
    }
}

/// Numbers as people write them: three significant digits.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    let a = x.abs();
    if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_within_the_tolerance_are_reproduced_and_direction_decides_the_rest() {
        assert_eq!(Check::ratio("a", 2.16, 2.40).verdict(), Verdict::Reproduced);
        assert_eq!(Check::ratio("a", 2.16, 1.90).verdict(), Verdict::Reproduced);
        // 2.71 against 2.16 is 1.25x apart: same direction, so only partly (the example).
        assert_eq!(Check::ratio("a", 2.16, 2.71).verdict(), Verdict::Partly);
        // 1.51x worse against 1.80x better: opposite directions.
        assert_eq!(Check::ratio("a", 1.51, 1.0 / 1.80).verdict(), Verdict::Not);
        // Close, but no difference (within 5% of 1) against a clear one: only partly.
        assert_eq!(Check::ratio("a", 1.14, 1.02).verdict(), Verdict::Partly);
        // Far, and no difference against a clear one.
        assert_eq!(Check::ratio("a", 2.16, 1.0).verdict(), Verdict::Not);
        assert_eq!(Check::ratio("a", 1.0, f64::NAN).verdict(), Verdict::Not);
    }

    #[test]
    fn percentages_and_bounds() {
        assert_eq!(
            Check::percent("m", 75.0, 71.0).verdict(),
            Verdict::Reproduced
        );
        assert_eq!(Check::percent("m", 75.0, 64.0).verdict(), Verdict::Partly);
        assert_eq!(Check::percent("m", 75.0, 55.0).verdict(), Verdict::Not);
        assert_eq!(
            Check::at_most("b", 1.12, 1.25).verdict(),
            Verdict::Reproduced
        );
        assert_eq!(Check::at_most("b", 1.12, 1.73).verdict(), Verdict::Not);
    }

    #[test]
    fn a_row_is_reproduced_only_when_every_number_is() {
        let good = Check::ratio("a", 2.0, 2.1);
        let bad = Check::ratio("b", 2.0, 0.4);
        assert_eq!(combine(&[good.clone(), good.clone()]), Verdict::Reproduced);
        assert_eq!(combine(&[good, bad.clone()]), Verdict::Partly);
        assert_eq!(combine(&[bad.clone(), bad]), Verdict::Not);
        assert_eq!(combine(&[]), Verdict::NotRun);
        assert_eq!(
            Check::ratio("fair/varys avg", 2.16, 2.71).describe(),
            "fair/varys avg 2.71 (thesis 2.16, 1.25x apart)"
        );
    }
}

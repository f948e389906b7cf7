//! The thesis' random stepped CDF (Figures 5.6, 5.7), drawn on a unit "shape" axis t in (0, 1]
//! and mapped to message sizes by the generator (see `general::size_of`).

use rand::Rng;
use serde::{Deserialize, Serialize};

/// How the CDF joins its random points (spec §13 item 15).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CdfInterp {
    /// Steps: the value jumps to y_k at x_k, so the sizes are the n points plus the end point.
    #[default]
    Step,
    /// Straight lines between the points: a continuous distribution.
    Linear,
}

/// A random CDF through (0, 0), (t_1, y_1), ..., (t_n, y_n), (1, 1) with sorted uniform t and y.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeCdf {
    /// Knots including both end points: t[0] = 0, t[n + 1] = 1.
    t: Vec<f64>,
    y: Vec<f64>,
    interp: CdfInterp,
}

impl ShapeCdf {
    /// Draws the thesis' random CDF with `points` interior points.
    pub fn random(points: usize, interp: CdfInterp, rng: &mut impl Rng) -> Self {
        let mut t: Vec<f64> = (0..points).map(|_| rng.gen::<f64>()).collect();
        let mut y: Vec<f64> = (0..points).map(|_| rng.gen::<f64>()).collect();
        t.sort_by(f64::total_cmp);
        y.sort_by(f64::total_cmp);
        Self::from_points(&t, &y, interp)
    }

    /// A CDF through the given interior points (both sorted ascending, inside (0, 1)).
    pub fn from_points(t: &[f64], y: &[f64], interp: CdfInterp) -> Self {
        assert_eq!(t.len(), y.len());
        let mut tt = Vec::with_capacity(t.len() + 2);
        let mut yy = Vec::with_capacity(t.len() + 2);
        tt.push(0.0);
        yy.push(0.0);
        tt.extend_from_slice(t);
        yy.extend_from_slice(y);
        tt.push(1.0);
        yy.push(1.0);
        ShapeCdf {
            t: tt,
            y: yy,
            interp,
        }
    }

    /// Inverse CDF: the shape coordinate in (0, 1] of quantile `u` in [0, 1).
    pub fn quantile(&self, u: f64) -> f64 {
        // First knot whose y exceeds u (k >= 1 because y[0] = 0 <= u).
        let k = self.y.partition_point(|&y| y <= u).min(self.y.len() - 1);
        match self.interp {
            CdfInterp::Step => self.t[k],
            CdfInterp::Linear => {
                let (t0, t1, y0, y1) = (self.t[k - 1], self.t[k], self.y[k - 1], self.y[k]);
                if y1 > y0 {
                    t0 + (t1 - t0) * (u - y0) / (y1 - y0)
                } else {
                    t1
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_quantiles_are_the_knots() {
        let c = ShapeCdf::from_points(&[0.2, 0.5], &[0.3, 0.6], CdfInterp::Step);
        assert_eq!(c.quantile(0.0), 0.2);
        assert_eq!(c.quantile(0.29), 0.2);
        assert_eq!(c.quantile(0.3), 0.5);
        assert_eq!(c.quantile(0.59), 0.5);
        assert_eq!(c.quantile(0.6), 1.0);
        assert_eq!(c.quantile(0.999), 1.0);
    }

    #[test]
    fn linear_quantiles_interpolate() {
        let c = ShapeCdf::from_points(&[0.2], &[0.4], CdfInterp::Linear);
        assert!((c.quantile(0.2) - 0.1).abs() < 1e-12);
        assert!((c.quantile(0.7) - 0.6).abs() < 1e-12);
    }
}

//! BASHuffler's bandwidth estimate (spec A2): the max-min fair rates of a pattern of flows on
//! per-node uplinks and downlinks, and their sum, the pattern's *utilization*. It is the shared
//! [`WaterFill`] with unit weights on a full [`Budget`]; only the scratch space lives here, so
//! that evaluating a candidate allocates nothing.

use coflowkit_model::Fabric;

use crate::alloc::{Budget, Demand, WaterFill};

/// Reusable max-min estimator over one fabric.
#[derive(Debug, Clone)]
pub struct Bandwidth {
    fabric: Fabric,
    /// The full capacities, never taken from: an evaluation reads only the ports its flows
    /// touch (a reset per evaluation made each one O(N), and GSS's decisions O(M N)).
    budget: Budget,
    fill: WaterFill,
    demands: Vec<Demand>,
    rates: Vec<f64>,
    evaluations: u64,
    /// Flows filled over all evaluations: the work of the estimates, O(F) each.
    filled: u64,
}

impl Bandwidth {
    pub fn new(fabric: Fabric) -> Self {
        Bandwidth {
            budget: Budget::full(&fabric),
            fabric,
            fill: WaterFill::default(),
            demands: Vec::new(),
            rates: Vec::new(),
            evaluations: 0,
            filled: 0,
        }
    }

    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    /// Replace the capacities (a node registered, changed or left).
    pub fn set_fabric(&mut self, fabric: Fabric) {
        self.budget = Budget::full(&fabric);
        self.fabric = fabric;
        self.fill = WaterFill::default();
    }

    /// Patterns filled so far (the unit of Table 1's costs).
    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// The work of the evaluations so far: flows filled, plus ports written by resets of the
    /// capacities (none since a reset is no longer needed: the work does not grow with the
    /// cluster's size; a regression test counts it).
    pub fn work(&self) -> u64 {
        self.filled + self.budget.ports_reset()
    }

    /// Max-min rates of `pattern` followed by `extra`, in that order. Cost O(F) (the ports the
    /// flows touch, at most 2F, are all it reads).
    pub fn rates(&mut self, pattern: &[(u32, u32)], extra: &[(u32, u32)]) -> &[f64] {
        self.evaluations += 1;
        self.filled += (pattern.len() + extra.len()) as u64;
        self.demands.clear();
        self.demands
            .extend(pattern.iter().chain(extra).map(|&(src, dst)| Demand {
                src,
                dst,
                weight: 1.0,
            }));
        self.rates.clear();
        self.rates.resize(self.demands.len(), 0.0);
        // `fill` would take the rates from the budget, and the next evaluation reset it.
        self.fill
            .fill_rates(&self.demands, &self.budget, &mut self.rates);
        &self.rates
    }

    /// Utilization (sum of max-min rates) of `pattern` plus `extra`.
    pub fn total(&mut self, pattern: &[(u32, u32)], extra: &[(u32, u32)]) -> f64 {
        self.rates(pattern, extra).iter().sum()
    }

    /// Two utilizations closer than this count as equal: floating-point filling of a pattern
    /// whose exact (rational) rates tie leaves dust of ~1e-15 of the largest capacity.
    pub fn tie_tolerance(&self, relative: f64) -> f64 {
        let max = self
            .fabric
            .up_bytes_per_s
            .iter()
            .chain(&self.fabric.down_bytes_per_s)
            .fold(0.0f64, |a, &b| a.max(b));
        relative * max.max(f64::MIN_POSITIVE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_flows_are_appended_after_the_pattern() {
        let mut bw = Bandwidth::new(Fabric::uniform(3, 6.0));
        let r = bw.rates(&[(0, 2), (1, 2)], &[(2, 1)]).to_vec();
        assert_eq!(r.len(), 3);
        assert!((r[2] - 6.0).abs() < 1e-12);
        assert!((bw.total(&[(0, 2), (1, 2)], &[]) - 6.0).abs() < 1e-12);
    }

    /// Spec D1's "Overall" column (Tables 2-5); the per-flow rates are the water-filling's own
    /// oracles in alloc::waterfill.
    #[test]
    fn table_totals_m1_to_m12() {
        let (a, b, c) = (0, 1, 2);
        let m4 = vec![(a, c), (b, c), (b, c), (c, a)];
        let m10 = vec![(b, a), (c, a), (a, b), (c, b), (a, c), (b, c)];
        let homo = Fabric::uniform(3, 6.0);
        let hetero = Fabric {
            up_bytes_per_s: vec![6.0, 6.0, 12.0],
            down_bytes_per_s: vec![6.0, 6.0, 12.0],
        };
        type Row<'a> = (&'a Fabric, Vec<(u32, u32)>, &'a [(u32, u32)], f64);
        let rows: [Row; 12] = [
            (&homo, vec![(a, c), (b, c)], &[], 6.0),
            (&homo, vec![(a, c), (b, c)], &[(a, b)], 9.0),
            (&homo, vec![(a, c), (b, c)], &[(c, b)], 12.0),
            (&homo, m4.clone(), &[], 12.0),
            (&homo, m4.clone(), &[(a, b)], 16.0),
            (&homo, m4, &[(c, b)], 12.0),
            (&hetero, vec![(a, c), (b, c)], &[], 12.0),
            (&hetero, vec![(a, c), (b, c)], &[(a, b)], 12.0),
            (&hetero, vec![(a, c), (b, c)], &[(c, b)], 18.0),
            (&hetero, m10.clone(), &[], 18.0),
            (&hetero, m10.clone(), &[(a, b)], 17.0),
            (&hetero, m10, &[(c, b)], 19.0),
        ];
        for (i, (fabric, pattern, extra, total)) in rows.into_iter().enumerate() {
            let mut bw = Bandwidth::new(fabric.clone());
            let got = bw.total(&pattern, extra);
            assert!((got - total).abs() < 1e-9, "M{}: {got} != {total}", i + 1);
        }
    }
}

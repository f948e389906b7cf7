//! `fifo-lm`: Baraat's FIFO with limited multiplexing (Dogar et al., SIGCOMM 2014), the
//! baseline of the Aalo chapter's simulations (row 22 of the thesis' key results). Coflows are
//! served in arrival order, each coflow's flows sharing per flow (max-min, as TCP would); a
//! coflow that has sent more than a threshold is *heavy* and stops blocking: it shares its class
//! with the next light coflow behind it, so one elephant does not hold every later coflow. Across
//! classes priority is strict. Not clairvoyant: only bytes sent are read.

use crate::alloc::{fill_coflows, Budget, PairFill};
use crate::machinery::Machinery;
use crate::{Decision, Rates, Scheduler, Snapshot};

#[derive(Debug, Default)]
pub struct FifoLm {
    /// A coflow that has sent more than this many bytes is heavy (the thesis: the 80th
    /// percentile of coflow sizes).
    pub heavy_bytes: f64,
    budget: Budget,
    fill: PairFill,
    class: Vec<std::ops::Range<usize>>,
    /// The rates of one class, moved out of the decision's and back.
    part: Rates,
}

impl FifoLm {
    pub fn new(heavy_bytes: f64) -> Self {
        FifoLm {
            heavy_bytes,
            ..Default::default()
        }
    }

    /// Classes as ranges of the snapshot (arrival order): a light coflow closes its class, and
    /// heavy coflows join the class of the first light coflow after them.
    fn classes(&mut self, snap: &Snapshot) {
        self.class.clear();
        let mut start = 0;
        for (i, c) in snap.coflows.iter().enumerate() {
            if c.sent_bytes <= self.heavy_bytes {
                self.class.push(start..i + 1);
                start = i + 1;
            }
        }
        if start < snap.coflows.len() {
            self.class.push(start..snap.coflows.len());
        }
    }
}

impl Machinery for FifoLm {}

impl Scheduler for FifoLm {
    fn name(&self) -> &str {
        "fifo-lm"
    }

    fn clairvoyant(&self) -> bool {
        false
    }

    fn allocate(&mut self, snap: &Snapshot, rates: &mut Rates) -> Decision {
        for r in &mut rates.per_coflow {
            r.iter_mut().for_each(|x| *x = 0.0);
        }
        self.budget.reset(snap.fabric);
        self.classes(snap);
        for range in &self.class {
            // Strict priority: each class fills what the earlier ones left, per flow max-min.
            self.part.per_coflow.clear();
            for r in &mut rates.per_coflow[range.clone()] {
                self.part.per_coflow.push(std::mem::take(r));
            }
            let cs = &snap.coflows[range.clone()];
            fill_coflows(
                &mut self.fill,
                cs,
                &mut self.budget,
                &mut self.part,
                |_, _| Some(1.0),
            );
            for (r, p) in rates.per_coflow[range.clone()]
                .iter_mut()
                .zip(self.part.per_coflow.drain(..))
            {
                *r = p;
            }
        }
        Decision::none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CoflowState;

    fn decide(coflows: &[CoflowState], heavy: f64) -> Vec<Vec<f64>> {
        crate::policy::test_world::decide(&mut FifoLm::new(heavy), coflows)
    }

    #[test]
    fn light_head_blocks_heavy_head_multiplexes_with_the_next() {
        // Three coflows on port 0 -> 1, the first has sent 5 bytes.
        let mut a = CoflowState::of_flows(&[(0, 1, 10.0)]);
        a.sent_bytes = 5.0;
        let b = CoflowState::of_flows(&[(0, 1, 10.0), (0, 1, 10.0)]);
        let c = CoflowState::of_flows(&[(0, 1, 10.0)]);
        let cs = [a, b, c];
        // Light (threshold above what it sent): FIFO, the head takes the port.
        assert_eq!(
            decide(&cs, 10.0),
            vec![vec![1.0], vec![0.0, 0.0], vec![0.0]]
        );
        // Heavy: it shares per flow with the next coflow (3 flows, 1/3 each); the third waits.
        let r = decide(&cs, 1.0);
        for x in [r[0][0], r[1][0], r[1][1]] {
            assert!((x - 1.0 / 3.0).abs() < 1e-12, "{r:?}");
        }
        assert_eq!(r[2], vec![0.0]);
    }

    #[test]
    fn a_later_class_takes_what_earlier_ones_leave() {
        // The head uses port 0 -> 1; the next coflow's flow 2 -> 3 runs beside it.
        let a = CoflowState::of_flows(&[(0, 1, 10.0)]);
        let b = CoflowState::of_flows(&[(0, 3, 10.0), (2, 3, 10.0)]);
        assert_eq!(decide(&[a, b], 100.0), vec![vec![1.0], vec![0.0, 1.0]]);
    }
}

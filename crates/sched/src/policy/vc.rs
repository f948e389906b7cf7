//! `vc`: a Virtual Cluster reservation (Oktopus, Ballani et al. SIGCOMM 2011), the baseline of
//! Varys's deadline simulations (thesis §5.7, row 14 of the key results: VC 73% met against
//! Varys 75%). A coflow with a deadline asks on arrival for a virtual cluster `<N, B>`: every
//! one of its N ports gets the same hose bandwidth B, each way, for the coflow's whole life.
//! B is the least that lets it finish by its deadline, its most loaded port's bytes over the
//! time left. It is admitted iff every one of its ports still has B unreserved; then its flows
//! are paced to finish at the deadline (each at bytes left / time left, which no port's B
//! exceeds). A rejected coflow, and one without a deadline, shares per flow (max-min) what no
//! reservation holds; reserved bandwidth a virtual cluster leaves idle is not lent out.
//!
//! Where it parts from Varys's admission (`varys` with deadlines): Varys reserves on each port
//! only that port's bytes over the time left and releases it flow by flow; a virtual cluster
//! reserves its bottleneck's rate on every port until the coflow ends. Rates change on coflow
//! events only, as a static reservation does (a flow's end leaves its rate idle).

use std::collections::HashMap;

use coflowkit_model::CoflowId;

use crate::alloc::{fill_coflows, Budget, PairFill};
use crate::machinery::Machinery;
use crate::{CoflowState, Decision, FlowCompletion, Rates, Scheduler, Snapshot};

/// Relative slack of the admission test.
const EPS: f64 = 1e-9;

#[derive(Debug, Clone)]
enum Verdict {
    /// The hose bandwidth and the ports it is reserved on (uplinks, downlinks).
    Admitted {
        b: f64,
        up: Vec<u32>,
        down: Vec<u32>,
    },
    Rejected,
}

#[derive(Debug, Default)]
pub struct VirtualCluster {
    verdicts: HashMap<CoflowId, Verdict>,
    /// What no reservation holds.
    free: Budget,
    fill: PairFill,
}

impl VirtualCluster {
    pub fn new() -> Self {
        Self::default()
    }

    /// The ports of `c`'s unfinished flows, and the most bytes any of them carries.
    fn ports_and_bottleneck(c: &CoflowState, ports: usize) -> (Vec<u32>, Vec<u32>, f64) {
        let (mut out, mut inn) = (vec![0.0; ports], vec![0.0; ports]);
        for f in &c.flows {
            out[f.src as usize] += f.remaining_bytes;
            inn[f.dst as usize] += f.remaining_bytes;
        }
        let used = |v: &[f64]| (0..ports as u32).filter(|&p| v[p as usize] > 0.0).collect();
        let max = out.iter().chain(&inn).fold(0.0f64, |a, &b| a.max(b));
        (used(&out), used(&inn), max)
    }

    /// Decide on coflows seen for the first time, in arrival order, against `self.free` (the
    /// capacity the admitted coflows' reservations leave), reserving for those admitted.
    fn admit_new(&mut self, snap: &Snapshot) {
        let ports = snap.fabric.ports();
        for c in snap.coflows {
            if self.verdicts.contains_key(&c.id) {
                continue;
            }
            let Some(deadline) = c.deadline_s else {
                continue;
            };
            let left = deadline - snap.now_s;
            let (up, down, max) = Self::ports_and_bottleneck(c, ports);
            let b = max / left;
            let fits =
                |cap: &[f64], p: &[u32]| p.iter().all(|&p| b <= cap[p as usize] * (1.0 + EPS));
            let v = if left > 0.0 && fits(&self.free.up, &up) && fits(&self.free.down, &down) {
                for &p in &up {
                    self.free.up[p as usize] = (self.free.up[p as usize] - b).max(0.0);
                }
                for &p in &down {
                    self.free.down[p as usize] = (self.free.down[p as usize] - b).max(0.0);
                }
                Verdict::Admitted { b, up, down }
            } else {
                Verdict::Rejected
            };
            self.verdicts.insert(c.id, v);
        }
    }
}

impl Machinery for VirtualCluster {}

impl Scheduler for VirtualCluster {
    fn name(&self) -> &str {
        "vc"
    }

    fn clairvoyant(&self) -> bool {
        true
    }

    fn on_flow_completion(&self) -> FlowCompletion {
        FlowCompletion::Ignore
    }

    fn allocate(&mut self, snap: &Snapshot, rates: &mut Rates) -> Decision {
        // Forget coflows that left; their reservations go with them.
        let active: std::collections::HashSet<CoflowId> =
            snap.coflows.iter().map(|c| c.id).collect();
        self.verdicts.retain(|id, _| active.contains(id));
        self.free.reset(snap.fabric);
        for v in self.verdicts.values() {
            if let Verdict::Admitted { b, up, down } = v {
                for &p in up {
                    self.free.up[p as usize] = (self.free.up[p as usize] - b).max(0.0);
                }
                for &p in down {
                    self.free.down[p as usize] = (self.free.down[p as usize] - b).max(0.0);
                }
            }
        }
        self.admit_new(snap);
        let ports = snap.fabric.ports();
        let verdicts = &self.verdicts;
        let cs = snap.coflows;
        fill_coflows(
            &mut self.fill,
            cs,
            &mut self.free,
            rates,
            |ci, _| match verdicts.get(&cs[ci].id) {
                Some(Verdict::Admitted { .. }) => None,
                _ => Some(1.0),
            },
        );
        // The admitted, paced to end at the deadline (if already due, float dust, as fast as the
        // reservation allows); fill_coflows left their rates alone.
        for (i, c) in snap.coflows.iter().enumerate() {
            if let Some(Verdict::Admitted { b, .. }) = self.verdicts.get(&c.id) {
                let (_, _, max) = Self::ports_and_bottleneck(c, ports);
                let left = c.deadline_s.unwrap_or(f64::INFINITY) - snap.now_s;
                let tau = left.max(max / b);
                for (r, f) in rates.per_coflow[i].iter_mut().zip(&c.flows) {
                    *r = f.remaining_bytes / tau;
                }
            }
        }
        Decision::none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::test_world::decide;
    use crate::policy::varys::{Varys, VarysConfig};

    fn with_deadline(id: CoflowId, deadline: f64, flows: &[(u32, u32, f64)]) -> CoflowState {
        let mut c = CoflowState::of_flows(flows);
        c.id = id;
        c.deadline_s = Some(deadline);
        c
    }

    /// A needs 2 units out of port 0 and 0.5 out of port 1 by t = 2: its virtual cluster holds
    /// rate 1 on ports 0 and 1 (and on downlinks 2 and 3), though port 1 needs only 1/4. B
    /// needs 0.5 out of port 1 by t = 1: Varys admits it beside A (A's 1/4 leaves 3/4), the
    /// virtual cluster has nothing left there and rejects it; B then gets no rate at all,
    /// since reserved bandwidth is not lent.
    #[test]
    fn a_reservation_sized_by_the_bottleneck_turns_away_what_varys_admits() {
        let a = with_deadline(1, 2.0, &[(0, 2, 2.0), (1, 3, 0.5)]);
        let b = with_deadline(2, 1.0, &[(1, 3, 0.5)]);
        let cs = [a, b];
        let vc = decide(&mut VirtualCluster::new(), &cs);
        assert_eq!(vc, vec![vec![1.0, 0.25], vec![0.0]]);
        let cfg = VarysConfig {
            starvation: None,
            ..VarysConfig::default()
        };
        let varys = decide(&mut Varys::new(cfg), &cs);
        assert!(varys[1][0] >= 0.5 - 1e-12, "varys admits B: {varys:?}");
    }

    /// O10 (spec §9): A needs 2 units by 4 on one port (rate 1/2); B with 1 unit by 1 would need
    /// rate 1 and is rejected, with deadline 2 it needs 1/2 and is admitted. On one port a
    /// virtual cluster is Varys's admission. A rejected B still gets what no reservation holds.
    #[test]
    fn o10_one_port_admission() {
        for (deadline, admitted) in [(1.0, false), (2.0, true), (4.0, true)] {
            let a = with_deadline(1, 4.0, &[(0, 1, 2.0)]);
            let b = with_deadline(2, deadline, &[(0, 1, 1.0)]);
            let mut vc = VirtualCluster::new();
            let r = decide(&mut vc, &[a, b]);
            let ok = matches!(vc.verdicts[&2], Verdict::Admitted { .. });
            assert_eq!(ok, admitted, "deadline {deadline}");
            assert_eq!(r[0], vec![0.5]);
            // Admitted: paced to end at the deadline; rejected: the unreserved half.
            let want = if admitted { 1.0 / deadline } else { 0.5 };
            assert_eq!(r[1], vec![want], "deadline {deadline}");
        }
    }

    /// Coflows without deadlines share per flow what reservations leave.
    #[test]
    fn without_deadlines_it_is_per_flow_fair_sharing() {
        let a = CoflowState::of_flows(&[(0, 1, 1.0), (0, 1, 5.0)]);
        let b = CoflowState::of_flows(&[(0, 1, 1.0)]);
        let r = decide(&mut VirtualCluster::new(), &[a, b]);
        for x in r.iter().flatten() {
            assert!((x - 1.0 / 3.0).abs() < 1e-12, "{r:?}");
        }
    }
}

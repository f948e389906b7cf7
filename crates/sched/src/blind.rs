//! A scheduler that is not told flow sizes: the simulator's counterpart of a coflow registered
//! non-clairvoyant with the real coordinator (`replay --non-clairvoyant`). The wrapped policy
//! sees every unfinished flow's `remaining_bytes` as `f64::INFINITY`, exactly as the
//! coordinator's snapshot shows a coflow whose sizes it hides (hug, drf and psp then use a
//! reported or estimated vector, issue 22), and everything else as it is; the world still
//! moves the real bytes.

use crate::machinery::Machinery;
use crate::{CoflowState, Decision, FlowCompletion, Rates, Scheduler, Snapshot};

pub struct Blind {
    inner: Box<dyn Scheduler>,
    /// The snapshot as shown, reused between decisions.
    seen: Vec<CoflowState>,
}

impl Blind {
    pub fn new(inner: Box<dyn Scheduler>) -> Self {
        Blind {
            inner,
            seen: Vec::new(),
        }
    }
}

impl Scheduler for Blind {
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// It reads no sizes, whatever the wrapped policy would.
    fn clairvoyant(&self) -> bool {
        false
    }

    fn allocate(&mut self, snap: &Snapshot, rates: &mut Rates) -> Decision {
        self.seen.clear();
        self.seen.extend(snap.coflows.iter().cloned());
        for f in self.seen.iter_mut().flat_map(|c| c.flows.iter_mut()) {
            if f.remaining_bytes > 0.0 {
                f.remaining_bytes = f64::INFINITY;
            }
        }
        let seen = Snapshot {
            now_s: snap.now_s,
            fabric: snap.fabric,
            coflows: &self.seen,
        };
        self.inner.allocate(&seen, rates)
    }

    fn on_flow_completion(&self) -> FlowCompletion {
        self.inner.on_flow_completion()
    }
}

/// No hand-on machinery: a freed flow's bandwidth would be handed on by sizes the policy must
/// not see, so every completion the policy asks to act on gets a full (blind) decision.
impl Machinery for Blind {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{build, SchedOptions, SchedulerKind};
    use coflowkit_model::Fabric;

    /// A policy that reads sizes.
    struct Seen;
    impl Scheduler for Seen {
        fn name(&self) -> &str {
            "seen"
        }
        fn clairvoyant(&self) -> bool {
            true
        }
        fn allocate(&mut self, _: &Snapshot, _: &mut Rates) -> Decision {
            Decision::none()
        }
    }
    impl Machinery for Seen {}

    #[test]
    fn sizes_are_hidden_and_finished_flows_stay_finished() {
        let fabric = Fabric::uniform(3, 1.0);
        let mut c = CoflowState::of_flows(&[(0, 1, 5.0), (1, 2, 0.0), (2, 0, 7.0)]);
        c.flows[0].sent_bytes = 2.0;
        let coflows = vec![c];
        let snap = Snapshot {
            now_s: 1.0,
            fabric: &fabric,
            coflows: &coflows,
        };
        let mut rates = Rates::default();
        rates.reset(&coflows);
        let mut b = Blind::new(Box::new(Seen));
        b.allocate(&snap, &mut rates);
        assert_eq!(b.seen[0].flows[0].remaining_bytes, f64::INFINITY);
        assert_eq!(b.seen[0].flows[0].sent_bytes, 2.0);
        assert_eq!(b.seen[0].flows[1].remaining_bytes, 0.0);
        assert_eq!(b.seen[0].flows[2].remaining_bytes, f64::INFINITY);
        assert!(!b.clairvoyant());
        // The original snapshot is untouched.
        assert_eq!(coflows[0].flows[0].remaining_bytes, 5.0);
    }

    /// HUG on a blind snapshot counts one unit per flow (docs/hug.md choice 13), not bytes.
    #[test]
    fn hug_blind_uses_the_non_clairvoyant_vector() {
        // X: 0->2 (9 bytes), 1->2 (1 byte); Y: 1->0 (1 byte). MADD gives X <9/10, 1/10 | 1>,
        // one unit per flow gives X <1/2, 1/2 | 1>.
        let fabric = Fabric::uniform(3, 1.0);
        let mut x = CoflowState::of_flows(&[(0, 2, 9.0), (1, 2, 1.0)]);
        x.id = 1;
        let mut y = CoflowState::of_flows(&[(1, 0, 1.0)]);
        y.id = 2;
        let coflows = vec![x, y];
        let snap = Snapshot {
            now_s: 0.0,
            fabric: &fabric,
            coflows: &coflows,
        };
        let decide = |s: &mut dyn Scheduler| {
            let mut r = Rates::default();
            r.reset(&coflows);
            s.allocate(&snap, &mut r);
            r.per_coflow
        };
        let opts = SchedOptions::default();
        let seeing = decide(build(SchedulerKind::Hug, &opts).as_mut());
        let blind = decide(&mut Blind::new(build(SchedulerKind::Hug, &opts)));
        // Clairvoyant: uplink 1 holds X's 1/10 and Y's 1, P* = 1/(1/10 + 1) = 10/11, so Y
        // gets 10/11 and X's flow on it 1/11.
        assert!((seeing[1][0] - 10.0 / 11.0).abs() < 1e-9, "{seeing:?}");
        // Blind: X counts 1/2 on uplink 1 (and 1 on downlink 2), P* = 1/(1/2 + 1) = 2/3.
        assert!((blind[1][0] - 2.0 / 3.0).abs() < 1e-9, "{blind:?}");
        assert!((blind[0][1] - 1.0 / 3.0).abs() < 1e-9, "{blind:?}");
    }
}

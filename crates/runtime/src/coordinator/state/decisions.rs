//! The coordinator's decisions: the decision clock (shared with the simulator) says per event
//! whether to run a full round (snapshot, the shared scheduler, rates recorded), to hand the
//! bandwidth of finished flows on, or to wait; either way every daemon gets its full rate table.

use coflowkit_sched::{clock, DecisionClock, Event, Handed, Scheduler, Snapshot, Step};

use super::snapshot::{self, Last};
use super::State;
use crate::proto::{FlowRate, RateUpdate};

/// What one step produced: new rate tables for the daemons, and the wake-up the policy asked
/// for.
pub struct Round {
    pub wake_at_s: Option<f64>,
    pub updates: Vec<RateUpdate>,
    /// A full round (else a hand-on of freed bandwidth).
    pub full: bool,
}

/// When to decide, and how many times it did.
#[derive(Default)]
pub(super) struct Brain {
    pub(super) clock: DecisionClock,
    pub(super) rounds: u64,
    pub(super) hand_ons: u64,
}

impl State {
    /// What the brain does when woken at `now_s` (`timed_out`: by the wake-up it asked for or
    /// the safety-net tick), as the decision clock says: a full round, a hand-on of freed
    /// bandwidth, or nothing (`None`).
    pub fn step(
        &mut self,
        sched: &mut dyn Scheduler,
        now_s: f64,
        timed_out: bool,
    ) -> Option<Round> {
        let dirty = self.rec.dirty;
        let event = if dirty.major {
            Event::Arrival
        } else if timed_out {
            Event::WakeUp
        } else if dirty.flow_done {
            Event::FlowEnd
        } else {
            return None;
        };
        let step = self.brain.clock.on(now_s, event);
        if step == Step::Wait {
            return None;
        }
        if step == Step::HandOn {
            if let Some(updates) = self.hand_on(sched, now_s) {
                return Some(Round {
                    wake_at_s: self.brain.clock.wake_at_s(),
                    updates,
                    full: false,
                });
            }
        }
        let (wake_at_s, updates) = self.decide(sched, now_s);
        Some(Round {
            wake_at_s,
            updates,
            full: true,
        })
    }

    /// One full round at `now_s`: snapshot, allocate, record rates. Returns the wake-up the
    /// scheduler asked for and the rate table per daemon (every unfinished flow it serves).
    pub fn decide(
        &mut self,
        sched: &mut dyn Scheduler,
        now_s: f64,
    ) -> (Option<f64>, Vec<RateUpdate>) {
        let (fabric, active, keys) = snapshot::build(&mut self.rec, sched.clairvoyant());
        for f in self.rec.flows.values_mut() {
            f.rate = 0.0;
            f.slot = None;
        }
        let mut rates = std::mem::take(&mut self.last.rates);
        let snap = Snapshot {
            now_s,
            fabric: &fabric,
            coflows: &active,
        };
        self.brain.clock.decide(sched, &snap, &mut rates);
        let order = (clock::priority_order(sched).iter())
            .filter_map(|&ci| active.get(ci as usize).map(|c| c.id))
            .collect();
        let ports = fabric.ports();
        let (mut up, mut down) = (vec![0.0; ports], vec![0.0; ports]);
        for (ci, (ks, rs)) in keys.iter().zip(&mut rates.per_coflow).enumerate() {
            for (fi, (k, r)) in ks.iter().zip(rs.iter_mut()).enumerate() {
                if !(r.is_finite() && *r > 0.0) {
                    *r = 0.0;
                }
                let fs = &active[ci].flows[fi];
                up[fs.src as usize] += *r;
                down[fs.dst as usize] += *r;
                if let Some(f) = self.rec.flows.get_mut(k) {
                    f.rate = *r;
                    f.slot = Some((ci as u32, fi as u32));
                }
            }
        }
        self.brain.clock.loads(&fabric, &up, &down);
        self.last = Last {
            active,
            keys,
            fabric,
            rates,
            order,
        };
        self.brain.rounds += 1;
        let updates = self.rate_tables();
        self.rec.dirty = Default::default();
        (self.brain.clock.wake_at_s(), updates)
    }

    /// Hand the bandwidth of flows that ended since the last round on (the clock's
    /// [`Step::HandOn`]) at `now_s`: the rate tables, or `None` when the policy asks for a
    /// full round instead.
    pub fn hand_on(&mut self, sched: &mut dyn Scheduler, now_s: f64) -> Option<Vec<RateUpdate>> {
        let last = &mut self.last;
        let snap = Snapshot {
            now_s,
            fabric: &last.fabric,
            coflows: &last.active,
        };
        match self.brain.clock.hand_on(sched, &snap, &mut last.rates) {
            Handed::Decide => return None,
            Handed::Nothing => {
                // Only flows without a rate ended: every table stands.
                self.rec.dirty.flow_done = false;
                return Some(Vec::new());
            }
            Handed::Changed(changed) => {
                for &(ci, fi, _) in changed {
                    let (ci, fi) = (ci as usize, fi as usize);
                    if let Some(f) = self.rec.flows.get_mut(&last.keys[ci][fi]) {
                        f.rate = last.rates.per_coflow[ci][fi];
                    }
                }
            }
        }
        self.rec.dirty.flow_done = false;
        self.brain.hand_ons += 1;
        Some(self.rate_tables())
    }

    /// Every daemon's full rate table (every unfinished flow it sends).
    fn rate_tables(&self) -> Vec<RateUpdate> {
        let rec = &self.rec;
        let mut updates: Vec<RateUpdate> = (0..rec.daemons.len())
            .map(|_| RateUpdate {
                round: self.brain.rounds,
                rates: Vec::new(),
                unregistered: rec.unregistered.iter().copied().collect(),
                tenant: None,
            })
            .collect();
        for (k, f) in &rec.flows {
            if !f.done {
                updates[f.src].rates.push(FlowRate {
                    flow: k.1,
                    bytes_per_s: f.rate,
                });
            }
        }
        updates
    }
}

//! Weighted max-min on the whole fabric, kept between calls so that a call after some weights
//! went down refills only what can change.
//!
//! Why it is exact: progressive filling freezes demands in ascending level (rate over
//! weight). Lowering the weight of demand `d`, frozen at level `L`, leaves every demand frozen
//! below `L` as it was: below `L`, `d` was still rising, and a lighter `d` only leaves its two
//! ports more room, so no port fills earlier than before. The demands at `L` and above are
//! filled again on what those below leave. On the FB trace under `fair` a flow's end leaves
//! about two thirds of the pairs below that level.
//!
//! Weights that are bytes left (`wss`, [`Drift::Draining`]) change between calls, but not the
//! answer: a demand frozen at level `L` drains at `w * L`, so every weight at one level
//! shrinks by the same factor, the levels keep their order and the rates stay. A level `L`
//! at time `t` says the demand ends at `t + 1/L`, the same at every later call; the freeze
//! order is kept by that end (latest first). The demands that end are the ones with the
//! highest level, so a refill after them redoes almost nothing (the freed bandwidth waits for
//! the next arrival, as max-min says).

use coflowkit_model::Fabric;

use super::budget::Budget;
use super::levels::Levels;
use super::waterfill::{Demand, WaterFill};

/// Relative difference below which two levels count as one (rounding).
const LEVEL_TOLERANCE: f64 = 1e-9;

/// [`Refill::bottlenecks`] of a demand without a rate.
pub const NO_BOTTLENECK: u32 = u32::MAX;

/// How the weights of demands that keep their rates move between calls.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Drift {
    /// They stay (`fair`: flow counts); a level means the same at every call.
    #[default]
    Still,
    /// They are bytes left and drain at the rates given (`wss`).
    Draining,
}

#[derive(Debug, Default, Clone)]
pub struct Refill {
    drift: Drift,
    fill: WaterFill,
    /// Per demand: where it froze in the last answer, as a key that ascends with the level
    /// and means the same at every call (see [`Refill::key`]).
    keys: Vec<f64>,
    /// Per demand: the resource it froze at in the last answer (its bottleneck, as
    /// [`WaterFill::frozen_at`] names it; [`NO_BOTTLENECK`] without a rate) and its level there.
    /// Kept under [`Drift::Still`] only (wss has no use for them and is near its time budget).
    bottleneck: Vec<u32>,
    level: Vec<f64>,
    /// The demands with a rate, in the order they froze (ascending key up to rounding), and
    /// the running maximum of their keys along that order (exactly ascending).
    order: Vec<u32>,
    reached: Vec<f64>,
    /// Per port and side: the rates of the last answer summed.
    load: Budget,
    /// Scratch for a refill: its demands, their positions, their rates, what they may use.
    sub: Vec<Demand>,
    at: Vec<u32>,
    sub_rates: Vec<f64>,
    budget: Budget,
    changed: Vec<u32>,
    /// The levels per resource, for [`Refill::answer_levels`].
    pub(crate) levels: Levels,
    /// An answer by levels alone left the per-demand state above behind: the next answer
    /// must be a whole fill.
    stale: bool,
}

/// [`Refill::answer_levels`]: a whole fill (rates, and per demand its bottleneck and level),
/// or only the levels that moved, per resource, every demand keeping its bottleneck.
pub enum LevelAnswer<'a> {
    Whole {
        bottleneck: &'a [u32],
        level: &'a [f64],
    },
    Levels(&'a [(u32, f64)]),
    /// Only the demands at `changed` moved (their rates written), to these bottlenecks and
    /// levels (read at `changed` only).
    Refilled {
        changed: &'a [u32],
        bottleneck: &'a [u32],
        level: &'a [f64],
    },
}

impl Refill {
    /// Weighted max-min rates of `demands` on `fabric` at `now`, into `rates`; the refills
    /// that follow take the weights to move by `drift`.
    pub fn fill(
        &mut self,
        fabric: &Fabric,
        demands: &[Demand],
        rates: &mut [f64],
        now: f64,
        drift: Drift,
    ) {
        self.drift = drift;
        self.stale = false;
        self.levels.invalidate();
        self.budget.reset(fabric);
        self.fill.fill_rates(demands, &self.budget, rates);
        self.keys.clear();
        self.keys.resize(demands.len(), 0.0);
        self.bottleneck.clear();
        self.bottleneck.resize(demands.len(), NO_BOTTLENECK);
        self.level.clear();
        self.level.resize(demands.len(), 0.0);
        self.order.clear();
        self.reached.clear();
        self.take_order(true, now);
        self.load.up.clear();
        self.load.up.resize(fabric.ports(), 0.0);
        self.load.down.clear();
        self.load.down.resize(fabric.ports(), 0.0);
        for (d, &r) in demands.iter().zip(rates.iter()) {
            self.load.up[d.src as usize] += r;
            self.load.down[d.dst as usize] += r;
        }
    }

    /// A [`PairPolicy`](crate::PairPolicy)'s answer: a refill after `lowered` weights, a
    /// whole fill without.
    pub fn answer(
        &mut self,
        fabric: &Fabric,
        demands: &[Demand],
        lowered: Option<&[u32]>,
        rates: &mut [f64],
        now: f64,
        drift: Drift,
    ) -> Option<&[u32]> {
        match lowered {
            Some(lowered) if !self.stale => Some(self.refill(fabric, demands, lowered, rates, now)),
            Some(_) => {
                self.fill(fabric, demands, rates, now, drift);
                None
            }
            None => {
                self.fill(fabric, demands, rates, now, drift);
                None
            }
        }
    }

    /// The same answer as [`Refill::fill`] at `now` when, since the last call, only the
    /// demands at positions `lowered` changed, and only by a lower weight (0: gone), besides
    /// the last fill's drift, and `rates` still holds the last answer. Returns the positions
    /// whose rate may have changed.
    pub fn refill(
        &mut self,
        fabric: &Fabric,
        demands: &[Demand],
        lowered: &[u32],
        rates: &mut [f64],
        now: f64,
    ) -> &[u32] {
        self.levels.invalidate();
        let cut = (lowered.iter())
            .map(|&i| self.keys[i as usize])
            .fold(f64::INFINITY, f64::min);
        // Levels equal up to rounding are equal: such a demand may have frozen with the cut's.
        let cut = if cut >= 0.0 {
            cut * (1.0 - LEVEL_TOLERANCE)
        } else {
            cut * (1.0 + LEVEL_TOLERANCE)
        };
        let keep = self.reached.partition_point(|&l| l < cut);
        // What the demands kept leave of each port: all minus those refilled.
        self.budget.reset(fabric);
        for (b, l) in self.budget.up.iter_mut().zip(&self.load.up) {
            *b = (*b - l).max(0.0);
        }
        for (b, l) in self.budget.down.iter_mut().zip(&self.load.down) {
            *b = (*b - l).max(0.0);
        }
        self.sub.clear();
        self.at.clear();
        self.changed.clear();
        self.changed.extend_from_slice(&self.order[keep..]);
        // Bottlenecks are kept for a world that moves progress per resource (`fair` only).
        let still = self.drift == Drift::Still;
        self.order.truncate(keep);
        self.reached.truncate(keep);
        for &i in &self.changed {
            let d = demands[i as usize];
            let old = rates[i as usize];
            self.budget.up[d.src as usize] += old;
            self.budget.down[d.dst as usize] += old;
            self.load.up[d.src as usize] -= old;
            self.load.down[d.dst as usize] -= old;
            rates[i as usize] = 0.0;
            if still {
                self.bottleneck[i as usize] = NO_BOTTLENECK;
                self.level[i as usize] = 0.0;
            }
            if d.weight > 0.0 {
                self.sub.push(d);
                self.at.push(i);
            }
        }
        self.sub_rates.clear();
        self.sub_rates.resize(self.sub.len(), 0.0);
        self.fill
            .fill_rates(&self.sub, &self.budget, &mut self.sub_rates);
        for (&i, (d, &r)) in self.at.iter().zip(self.sub.iter().zip(&self.sub_rates)) {
            rates[i as usize] = r;
            self.load.up[d.src as usize] += r;
            self.load.down[d.dst as usize] += r;
        }
        // The refilled demands froze at or above the cut, in order after those kept.
        self.take_order(false, now);
        &self.changed
    }

    /// Under [`Drift::Still`] (`fair`), for a world that moves progress by one clock per
    /// bottleneck resource: after only the weights at `lowered` went down, the levels that
    /// moved if every demand keeps its bottleneck ([`Levels`]; `rates` are then left as they
    /// were, and the next answer here is a whole fill or levels again); otherwise, and
    /// without `lowered`, a whole fill.
    pub fn answer_levels(
        &mut self,
        fabric: &Fabric,
        demands: &[Demand],
        lowered: Option<&[u32]>,
        rates: &mut [f64],
        now: f64,
    ) -> LevelAnswer<'_> {
        if let Some(lowered) = lowered {
            if self.levels.lower(demands, lowered).is_some() {
                self.stale = true;
                return LevelAnswer::Levels(self.levels.changed());
            }
            if (self.levels)
                .refill(&mut self.fill, demands, lowered, rates)
                .is_some()
            {
                self.stale = true;
                let (bottleneck, level) = self.levels.bottlenecks();
                return LevelAnswer::Refilled {
                    changed: self.levels.moved(),
                    bottleneck,
                    level,
                };
            }
        }
        self.fill(fabric, demands, rates, now, Drift::Still);
        (self.levels).build(
            fabric,
            demands,
            &self.bottleneck,
            &self.level,
            self.fill.frozen_at(),
        );
        LevelAnswer::Whole {
            bottleneck: &self.bottleneck,
            level: &self.level,
        }
    }

    /// What level `level` at `now` is kept as: the level itself when weights stay; when they
    /// drain, minus the time the demand ends at (`now + 1/level`), which later calls share.
    fn key(&self, level: f64, now: f64) -> f64 {
        match self.drift {
            Drift::Still => level,
            Drift::Draining => -(now + 1.0 / level),
        }
    }

    /// Append the demands the last water-filling froze to the freeze order, with their keys:
    /// all demands (`whole`) or those of a refill (`at` maps them to positions).
    fn take_order(&mut self, whole: bool, now: f64) {
        let mut reached = self.reached.last().copied().unwrap_or(f64::NEG_INFINITY);
        let still = self.drift == Drift::Still;
        for (&(j, level), &res) in self.fill.frozen().iter().zip(self.fill.frozen_at()) {
            let i = if whole { j } else { self.at[j as usize] };
            let key = self.key(level, now);
            self.keys[i as usize] = key;
            if still {
                self.bottleneck[i as usize] = res;
                self.level[i as usize] = level;
            }
            self.order.push(i);
            reached = reached.max(key);
            self.reached.push(reached);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Uplinks with capacities `caps`, downlinks with them reversed.
    fn fabric(caps: &[f64]) -> Fabric {
        Fabric {
            up_bytes_per_s: caps.to_vec(),
            down_bytes_per_s: caps.iter().rev().copied().collect(),
        }
    }

    /// A refill's `rates` are a fresh fill's of `ds` at `now`, and the demands it did not
    /// list as `changed` kept their rates `before`.
    fn matches_fresh(
        fabric: &Fabric,
        ds: &[Demand],
        rates: &[f64],
        before: &[f64],
        changed: &[u32],
        now: f64,
    ) -> Result<(), TestCaseError> {
        let mut fresh = vec![0.0; ds.len()];
        Refill::default().fill(fabric, ds, &mut fresh, now, Drift::Still);
        for (i, (a, b)) in rates.iter().zip(&fresh).enumerate() {
            prop_assert!(
                (a - b).abs() <= 1e-9,
                "demand {}: {} vs {} ({:?})",
                i,
                a,
                b,
                ds
            );
            if !changed.contains(&(i as u32)) {
                prop_assert_eq!(*a, before[i], "demand {} changed unlisted", i);
            }
        }
        Ok(())
    }

    fn demands() -> impl Strategy<Value = (Vec<f64>, Vec<Demand>, Vec<(usize, f64)>)> {
        (2u32..6).prop_flat_map(|ports| {
            let demand = (0..ports, 0..ports, 1u32..7).prop_map(|(src, dst, w)| Demand {
                src,
                dst,
                weight: w as f64,
            });
            // Whole capacities too: levels then tie, up to rounding.
            let cap = prop_oneof![0.5f64..2.0, (1u32..3).prop_map(f64::from)];
            let caps = prop::collection::vec(cap, ports as usize);
            (caps, prop::collection::vec(demand, 1..12)).prop_flat_map(|(caps, ds)| {
                let n = ds.len();
                // Lower some weights, some of them to 0 (the demand is gone).
                let lowered = prop::collection::vec((0..n, 0.0f64..1.0), 1..4);
                (Just(caps), Just(ds), lowered)
            })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        #[test]
        fn a_refill_after_lowered_weights_is_a_fresh_fill((caps, mut ds, lowered) in demands()) {
            let fabric = fabric(&caps);
            let mut r = Refill::default();
            let mut rates = vec![0.0; ds.len()];
            r.fill(&fabric, &ds, &mut rates, 0.0, Drift::Still);
            let mut at = Vec::new();
            for &(i, keep) in &lowered {
                // Whole flows: 0 to the present weight minus one.
                ds[i].weight = (ds[i].weight * keep).floor().min(ds[i].weight - 1.0).max(0.0);
                at.push(i as u32);
            }
            let before = rates.clone();
            let changed = r.refill(&fabric, &ds, &at, &mut rates, 0.0).to_vec();
            matches_fresh(&fabric, &ds, &rates, &before, &changed, 0.0)?;
        }

        #[test]
        fn refills_while_bytes_drain_are_fresh_fills((caps, mut ds, steps) in draining()) {
            let fabric = fabric(&caps);
            let mut now = 3.0;
            let mut r = Refill::default();
            let mut rates = vec![0.0; ds.len()];
            r.fill(&fabric, &ds, &mut rates, now, Drift::Draining);
            for (at, lowered) in steps {
                // Drain at these rates; the demands that end on the way are gone.
                let next = (ds.iter().zip(&rates))
                    .filter(|(_, &x)| x > 0.0)
                    .map(|(d, &x)| d.weight / x)
                    .fold(f64::INFINITY, f64::min);
                if !next.is_finite() {
                    break;
                }
                let dt = next * at;
                now += dt;
                let mut gone = Vec::new();
                for (i, (d, &x)) in ds.iter_mut().zip(&rates).enumerate() {
                    d.weight = (d.weight - x * dt).max(0.0);
                    if x > 0.0 && d.weight <= 1e-9 * x * next {
                        d.weight = 0.0;
                        gone.push(i as u32);
                    }
                }
                for &(i, keep) in &lowered {
                    ds[i].weight *= keep;
                    gone.push(i as u32);
                }
                let before = rates.clone();
                let changed = r.refill(&fabric, &ds, &gone, &mut rates, now).to_vec();
                matches_fresh(&fabric, &ds, &rates, &before, &changed, now)?;
            }
        }
    }

    /// Per step: how far towards the next end time the bytes drain (1: right at it), and
    /// weights lowered besides.
    type Steps = Vec<(f64, Vec<(usize, f64)>)>;

    fn draining() -> impl Strategy<Value = (Vec<f64>, Vec<Demand>, Steps)> {
        (2u32..6).prop_flat_map(|ports| {
            let demand = (0..ports, 0..ports, 0.1f64..10.0).prop_map(|(src, dst, weight)| Demand {
                src,
                dst,
                weight,
            });
            let caps = prop::collection::vec(0.5f64..2.0, ports as usize);
            (caps, prop::collection::vec(demand, 1..12)).prop_flat_map(|(caps, ds)| {
                let n = ds.len();
                let at = prop_oneof![0.0f64..1.0, Just(1.0)];
                let lowered = prop::collection::vec((0..n, 0.0f64..1.0), 0..3);
                let steps = prop::collection::vec((at, lowered), 1..5);
                (Just(caps), Just(ds), steps)
            })
        })
    }

    #[test]
    fn when_bytes_drain_the_demands_that_end_leave_the_others_alone() {
        // a (0->0, 1 byte) and b (0->1, 3 bytes) share uplink 0: 1/4 and 3/4 per second, both
        // end at t = 4. c (2->2, 1 byte) is alone: it ends at t = 1.
        let fabric = Fabric::uniform(3, 1.0);
        let d = |src, dst, weight| Demand { src, dst, weight };
        let mut r = Refill::default();
        let mut rates = vec![0.0; 3];
        r.fill(
            &fabric,
            &[d(0, 0, 1.0), d(0, 1, 3.0), d(2, 2, 1.0)],
            &mut rates,
            0.0,
            Drift::Draining,
        );
        assert_eq!(rates, vec![0.25, 0.75, 1.0]);
        // At t = 1, c ends and a, b have drained by a quarter: only c is redone.
        let ds = [d(0, 0, 0.75), d(0, 1, 2.25), d(2, 2, 0.0)];
        let changed = r.refill(&fabric, &ds, &[2], &mut rates, 1.0).to_vec();
        assert_eq!(changed, vec![2]);
        assert_eq!(rates, vec![0.25, 0.75, 0.0]);
    }

    #[test]
    fn demands_below_the_lowered_level_keep_their_rates() {
        // Uplink 0 carries a (0->0, weight 1) and b (0->1, weight 3): level 1/4. c (2->2,
        // weight 1) is alone: level 1.
        let fabric = Fabric::uniform(3, 1.0);
        let d = |src, dst, weight| Demand { src, dst, weight };
        let mut ds = vec![d(0, 0, 1.0), d(0, 1, 3.0), d(2, 2, 1.0)];
        let mut r = Refill::default();
        let mut rates = vec![0.0; 3];
        r.fill(&fabric, &ds, &mut rates, 0.0, Drift::Still);
        assert_eq!(rates, vec![0.25, 0.75, 1.0]);
        // c ends: a and b froze below its level and keep their rates.
        ds[2].weight = 0.0;
        let changed = r.refill(&fabric, &ds, &[2], &mut rates, 0.0).to_vec();
        assert_eq!(changed, vec![2]);
        assert_eq!(rates, vec![0.25, 0.75, 0.0]);
        // b loses two of its three flows: a and b refill to 1/2 each.
        ds[1].weight = 1.0;
        let mut changed = r.refill(&fabric, &ds, &[1], &mut rates, 0.0).to_vec();
        changed.sort();
        assert_eq!(changed, vec![0, 1]);
        assert_eq!(rates, vec![0.5, 0.5, 0.0]);
    }
}

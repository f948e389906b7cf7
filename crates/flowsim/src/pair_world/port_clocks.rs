//! Virtual clocks per bottleneck resource, for the pair world under an equal share (`fair`).
//!
//! Max-min gives every pair that froze at one resource (its bottleneck: an uplink or a
//! downlink) the same per-flow rate, the resource's level. So the bytes each flow of such a pair
//! gets are the integral of that level, the resource's virtual clock, as fair-queuing
//! simulators keep virtual time. A pair keeps an offset into its bottleneck's clock (bytes
//! served = clock - offset) and one predicted end in virtual time (its head flow's) in the
//! clock's heap. A level change is then O(1) for the resource, where a prediction per pair was
//! redone, and only the pairs whose bottleneck moves change heaps.
//!
//! Pairs that keep their rates in a refill keep their clock's level: a refill redoes every
//! pair frozen at a resource or none of them (they froze together), and if rounding ever
//! splits them, the refilled ones get a new clock for the resource and the old one runs on.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A pair's predicted end in its clock's virtual time; earliest first. Stale once the pair's
/// stamp moved on.
#[derive(PartialEq)]
pub(crate) struct VirtualDue {
    pub(crate) at: f64,
    pub(crate) pair: u32,
    pub(crate) stamp: u32,
}

impl Eq for VirtualDue {}

impl Ord for VirtualDue {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .at
            .total_cmp(&self.at)
            .then(other.pair.cmp(&self.pair))
    }
}

impl PartialOrd for VirtualDue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One resource's virtual clock: `v` at time `t`, rising at `level` bytes per second.
pub(crate) struct Clock {
    pub(crate) level: f64,
    v: f64,
    t: f64,
    pub(crate) due: BinaryHeap<VirtualDue>,
    /// Pairs on this clock.
    pub(crate) members: u32,
    /// Of them, those the decision under way rates afresh, and whether that was all of them
    /// when the decision began (pairs leave during it).
    tally: u32,
    all_tallied: bool,
    /// The decision that last set `level` (a clock's level is set once per decision).
    epoch: u64,
}

impl Clock {
    /// Virtual time at `now`.
    pub(crate) fn v_at(&self, now: f64) -> f64 {
        self.v + self.level * (now - self.t)
    }

    /// When virtual time `v` comes (never at level 0).
    pub(crate) fn time_of(&self, v: f64) -> f64 {
        if self.level > 0.0 {
            self.t + (v - self.v) / self.level
        } else {
            f64::INFINITY
        }
    }
}

pub(crate) const NO_CLOCK: u32 = u32::MAX;

/// The clocks, per resource the one its newly frozen pairs join, and per pair (by its
/// position, in dense arrays: a refill reads thousands of pairs) its clock, offset and rate.
#[derive(Default)]
pub(crate) struct Clocks {
    pub(crate) list: Vec<Clock>,
    current: Vec<u32>,
    /// Per pair: its clock (`NO_CLOCK`: none, and then the pair's `served` holds), and the
    /// offset that makes `served = clock - offset`.
    pub(crate) on: Vec<u32>,
    pub(crate) offset: Vec<f64>,
    /// Clocks whose `tally` the decision under way raised.
    tallied: Vec<u32>,
    epoch: u64,
}

impl Clocks {
    pub(crate) fn new(resources: usize) -> Clocks {
        Clocks {
            current: vec![NO_CLOCK; resources],
            ..Default::default()
        }
    }

    /// Drop every clock, for `pairs` pairs (a whole decision follows; every pair
    /// left its clock).
    pub(crate) fn clear(&mut self, pairs: usize) {
        self.list.clear();
        self.current.fill(NO_CLOCK);
        self.tallied.clear();
        self.on.clear();
        self.on.resize(pairs, NO_CLOCK);
        self.offset.clear();
        self.offset.resize(pairs, 0.0);
    }

    /// A decision begins: pairs it rates afresh are counted by [`Clocks::tally`].
    pub(crate) fn begin(&mut self) {
        self.epoch += 1;
    }

    /// A pair on clock `c` is rated afresh by this decision.
    pub(crate) fn tally(&mut self, c: u32) {
        let clock = &mut self.list[c as usize];
        if clock.tally == 0 {
            self.tallied.push(c);
        }
        clock.tally += 1;
    }

    /// Every pair the decision rates afresh was tallied: note which clocks it re-rates
    /// whole, before pairs start to leave them.
    pub(crate) fn tallied(&mut self) {
        for &c in &self.tallied {
            let clock = &mut self.list[c as usize];
            clock.all_tallied = clock.tally == clock.members;
        }
    }

    /// The clock a pair frozen at `resource` with `level` joins at `now`: the resource's
    /// clock at its new level when every pair on it is rated afresh (or it has none), else a
    /// new clock for the resource (the pairs that keep their rates keep the old one).
    pub(crate) fn target(&mut self, resource: u32, level: f64, now: f64) -> u32 {
        let c = self.current[resource as usize];
        if c != NO_CLOCK {
            let clock = &mut self.list[c as usize];
            if clock.epoch == self.epoch {
                if clock.level == level {
                    return c;
                }
            } else if (clock.tally == 0 && clock.members == 0) || clock.all_tallied {
                clock.v = clock.v_at(now);
                clock.t = now;
                clock.level = level;
                clock.epoch = self.epoch;
                return c;
            }
        }
        // A split: the pair world's answers by levels re-level only a resource's current
        // clock, which is right only if every pair frozen there is on it. The policy's answers
        // re-rate all of a resource's pairs or none, so this does not happen.
        debug_assert!(
            c == NO_CLOCK || self.list[c as usize].members == 0,
            "resource {resource}: pairs kept on its clock while others join at a new level"
        );
        let c = self.list.len() as u32;
        self.list.push(Clock {
            level,
            v: 0.0,
            t: now,
            due: BinaryHeap::new(),
            members: 0,
            tally: 0,
            all_tallied: false,
            epoch: self.epoch,
        });
        self.current[resource as usize] = c;
        c
    }

    /// Every pair frozen at `resource` keeps it as its bottleneck, at `level` from `now` on
    /// (they all share the resource's current clock since the last whole answer).
    pub(crate) fn relevel(&mut self, resource: u32, level: f64, now: f64) {
        let c = self.current[resource as usize];
        if c != NO_CLOCK {
            let clock = &mut self.list[c as usize];
            clock.v = clock.v_at(now);
            clock.t = now;
            clock.level = level;
        }
    }

    /// The decision is done: reset the tallies.
    pub(crate) fn end(&mut self) {
        for &c in &self.tallied {
            let clock = &mut self.list[c as usize];
            clock.tally = 0;
            clock.all_tallied = false;
        }
        self.tallied.clear();
    }
}

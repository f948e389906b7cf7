//! Max-min levels re-solved per resource when only weights went down and every demand keeps
//! its bottleneck.
//!
//! Why it is exact: max-min gives each demand a bottleneck resource (where it froze); all
//! demands frozen at one resource share its level, and given who is frozen where the levels
//! solve a triangular system in freeze order: a resource's level is what the demands frozen
//! before it elsewhere leave of its capacity, over the weights frozen at it. After weights
//! go down, the same assignment is the max-min answer if it still passes the optimality
//! test: every resource with demands frozen at it is full (true by construction), every other
//! resource within capacity, and no demand's bottleneck level above its other resource's
//! level (a demand gets the most of any demand through its bottleneck). Then the answer is the
//! new levels alone, without a rate per demand; otherwise the caller fills again.
//!
//! The system is solved only from the first resource whose inputs changed (the lowered
//! demands' two resources), in the last fill's freeze order, over the demands through each
//! resource (kept by resource from that fill; positions and ports of demands stay).

use coflowkit_model::Fabric;

use super::budget::Budget;
use super::waterfill::{Demand, WaterFill};

/// Relative slack for the optimality test: levels equal up to rounding count as equal (the
/// refill's cut uses the same).
const TOLERANCE: f64 = 1e-9;

const NONE: u32 = u32::MAX;

#[derive(Debug, Default, Clone)]
pub struct Levels {
    /// Whether the state below describes the last answer (a whole fill, then level updates).
    ready: bool,
    ports: usize,
    /// Per resource (`port` for an uplink, `ports + port` for a downlink): capacity, level
    /// (infinite when no demand is frozen at it), and position in `order` (or `NONE`).
    cap: Vec<f64>,
    level: Vec<f64>,
    pos: Vec<u32>,
    /// Resources some demand froze at, in freeze order.
    order: Vec<u32>,
    /// Per demand: the resource it froze at (`NONE`: no rate).
    at: Vec<u32>,
    /// The demands through each resource (compressed: `adj[start[r]..start[r + 1]]`).
    start: Vec<u32>,
    adj: Vec<u32>,
    /// Scratch: new levels, resources to check for capacity, the levels that changed.
    fresh: Vec<f64>,
    check: Vec<u32>,
    marked: Vec<bool>,
    /// Per resource without frozen demands: an upper bound on its load (the sum the
    /// optimality test takes, exactly and as summed in floating point) in the present
    /// answer, or infinite. Weights only go down, so the load grows by at most what the
    /// levels that rose add (`rise`, per resource, at the new weights); while the bound
    /// stays under capacity the test's own sum would too, and is not taken: the same
    /// verdict. Reset whenever the assignment changes.
    bound: Vec<f64>,
    rise: Vec<f64>,
    risen: Vec<u32>,
    /// Tests: take every sum, as before the bounds, to compare verdicts.
    #[cfg(test)]
    pub(crate) sum_always: bool,
    /// Resources whose inputs moved (to re-solve), and those whose level moved.
    dirty: Vec<bool>,
    dirtied: Vec<u32>,
    moved_levels: Vec<u32>,
    changed: Vec<(u32, f64)>,
    /// For [`Levels::refill`]: per demand its level when refilled; per resource whether it
    /// is refilled; the demands refilled, those with weight, their rates; what is left.
    demand_level: Vec<f64>,
    refilled: Vec<bool>,
    moved: Vec<u32>,
    sub: Vec<Demand>,
    sub_at: Vec<u32>,
    sub_rates: Vec<f64>,
    budget: Budget,
    touched: Vec<u32>,
    new_order: Vec<u32>,
}

impl Levels {
    /// Take a whole fill's answer: each demand's bottleneck (`at`, `NONE` without a rate) and
    /// level, and the resources in the order they froze (`frozen_at` along the freeze order).
    pub fn build(
        &mut self,
        fabric: &Fabric,
        demands: &[Demand],
        at: &[u32],
        level: &[f64],
        frozen_at: &[u32],
    ) {
        let ports = fabric.ports();
        let n = 2 * ports;
        self.ports = ports;
        self.cap.clear();
        self.cap.extend_from_slice(&fabric.up_bytes_per_s);
        self.cap.extend_from_slice(&fabric.down_bytes_per_s);
        self.level.clear();
        self.level.resize(n, f64::INFINITY);
        self.pos.clear();
        self.pos.resize(n, NONE);
        self.order.clear();
        for &r in frozen_at {
            if self.pos[r as usize] == NONE {
                self.pos[r as usize] = self.order.len() as u32;
                self.order.push(r);
            }
        }
        self.at.clear();
        self.at.extend_from_slice(at);
        for (i, &r) in at.iter().enumerate() {
            if r != NONE {
                self.level[r as usize] = level[i];
            }
        }
        self.start.clear();
        self.start.resize(n + 1, 0);
        for d in demands {
            self.start[d.src as usize + 1] += 1;
            self.start[ports + d.dst as usize + 1] += 1;
        }
        for r in 0..n {
            self.start[r + 1] += self.start[r];
        }
        self.adj.clear();
        self.adj.resize(self.start[n] as usize, 0);
        let mut fill: Vec<u32> = self.start[..n].to_vec();
        for (i, d) in demands.iter().enumerate() {
            for r in [d.src as usize, ports + d.dst as usize] {
                self.adj[fill[r] as usize] = i as u32;
                fill[r] += 1;
            }
        }
        self.marked.clear();
        self.marked.resize(n, false);
        self.bound.clear();
        self.bound.resize(n, f64::INFINITY);
        self.rise.clear();
        self.rise.resize(n, 0.0);
        self.dirty.clear();
        self.dirty.resize(n, false);
        self.refilled.clear();
        self.refilled.resize(n, false);
        self.demand_level.clear();
        self.demand_level.extend_from_slice(level);
        self.ready = true;
    }

    /// The levels the last [`Levels::lower`] moved.
    pub fn changed(&self) -> &[(u32, f64)] {
        &self.changed
    }

    /// Forget the state (the last answer was not a whole fill).
    pub fn invalidate(&mut self) {
        self.ready = false;
    }

    /// The new levels after the weights of `lowered` went down (to `demands`' weights), as
    /// (resource, level) for each level that moved, if every demand keeps its bottleneck;
    /// `None` (state unchanged) if not, or if there is no whole fill to start from.
    pub fn lower(&mut self, demands: &[Demand], lowered: &[u32]) -> Option<&[(u32, f64)]> {
        if !self.ready {
            return None;
        }
        let ports = self.ports;
        let mut first = self.order.len();
        for &i in lowered {
            let r = self.at[i as usize];
            if r == NONE {
                return None;
            }
            let d = demands[i as usize];
            for q in [d.src as usize, ports + d.dst as usize] {
                first = first.min(self.pos[q] as usize);
                if !self.dirty[q] {
                    self.dirty[q] = true;
                    self.dirtied.push(q as u32);
                }
            }
        }
        // Solve in freeze order from `first`: the levels a resource reads come earlier. Only
        // resources whose inputs moved (a lowered weight, or the level of a demand frozen
        // elsewhere) are solved again.
        // `fresh[n]` stands for `NONE`: a level of 0 makes a term 0 without a branch (adding
        // 0 to a sum of non-negative terms leaves it as it is, bit for bit).
        let n = self.level.len();
        self.fresh.clear();
        self.fresh.extend_from_slice(&self.level);
        self.fresh.push(0.0);
        self.moved_levels.clear();
        let mut negative = false;
        for k in first..self.order.len() {
            let r = self.order[k] as usize;
            if !self.dirty[r] {
                continue;
            }
            let (mut weight, mut used) = (0.0, 0.0);
            self.fresh[r] = 0.0; // the demands frozen here add to `weight`, not to `used`
            for &i in &self.adj[self.start[r] as usize..self.start[r + 1] as usize] {
                let (w, b) = (demands[i as usize].weight, self.at[i as usize] as usize);
                weight += if b == r { w } else { 0.0 };
                used += w * self.fresh[b.min(n)];
            }
            self.fresh[r] = if weight > 0.0 {
                let level = (self.cap[r] - used) / weight;
                if level.is_nan() || level < 0.0 {
                    negative = true;
                    break;
                }
                level
            } else {
                f64::INFINITY // no demand frozen here any more: only capacity to check
            };
            if self.fresh[r] == self.level[r] {
                continue;
            }
            self.moved_levels.push(r as u32);
            for &i in &self.adj[self.start[r] as usize..self.start[r + 1] as usize] {
                if self.at[i as usize] as usize != r {
                    continue;
                }
                let d = demands[i as usize];
                for q in [d.src as usize, ports + d.dst as usize] {
                    if !self.dirty[q] {
                        self.dirty[q] = true;
                        self.dirtied.push(q as u32);
                    }
                }
            }
        }
        for &q in &self.dirtied {
            self.dirty[q as usize] = false;
        }
        self.dirtied.clear();
        if negative {
            return None;
        }
        // The optimality test over the demands through the resources whose level moved. A
        // resource without frozen demands is summed again only if its bound (see `bound`)
        // plus what its terms rose by may be over capacity.
        self.check.clear();
        let mut ok = true;
        'test: for k in 0..self.moved_levels.len() {
            let r = self.moved_levels[k] as usize;
            let rise = self.fresh[r] - self.level[r];
            for &i in &self.adj[self.start[r] as usize..self.start[r + 1] as usize] {
                let d = demands[i as usize];
                let b = self.at[i as usize];
                let (up, down) = (d.src as usize, ports + d.dst as usize);
                if b as usize == r && (rise > 0.0 || rise.is_nan()) {
                    let other = if r == up { down } else { up };
                    if self.rise[other] == 0.0 {
                        self.risen.push(other as u32);
                    }
                    // Infinite or NaN (a weight-0 demand at a level gone infinite): sum it.
                    let add = d.weight * rise;
                    self.rise[other] += if add >= 0.0 { add } else { f64::INFINITY };
                }
                if d.weight <= 0.0 || b == NONE {
                    continue;
                }
                let other = if b as usize == up { down } else { up };
                let (lb, lo) = (self.fresh[b as usize], self.fresh[other]);
                if lo.is_infinite() {
                    if !self.marked[other] {
                        self.marked[other] = true;
                        self.check.push(other as u32);
                    }
                } else if lb > lo * (1.0 + TOLERANCE) {
                    ok = false;
                    break 'test;
                }
            }
        }
        for &q in &self.check {
            let q = q as usize;
            self.marked[q] = false;
            if !ok {
                continue;
            }
            let terms = (self.start[q + 1] - self.start[q]) as f64;
            let slack = 1.0 + (1e-12f64).max((terms + 4.0) * f64::EPSILON);
            let limit = self.cap[q] * (1.0 + TOLERANCE);
            let bound = (self.bound[q] + self.rise[q]) * slack;
            self.rise[q] = 0.0;
            #[cfg(test)]
            let bound = if self.sum_always {
                f64::INFINITY
            } else {
                bound
            };
            if bound * slack <= limit {
                self.bound[q] = bound;
                continue;
            }
            let level = std::mem::replace(&mut self.fresh[q], 0.0);
            let load: f64 = (self.adj[self.start[q] as usize..self.start[q + 1] as usize].iter())
                .map(|&i| {
                    demands[i as usize].weight * self.fresh[(self.at[i as usize] as usize).min(n)]
                })
                .sum();
            self.fresh[q] = level;
            ok = load <= limit;
            self.bound[q] = load * slack;
        }
        // A resource whose terms rose without a look has no bound any more.
        for &q in &self.risen {
            let q = q as usize;
            if self.rise[q] != 0.0 {
                self.bound[q] = f64::INFINITY;
                self.rise[q] = 0.0;
            }
        }
        self.risen.clear();
        if !ok {
            self.bound.fill(f64::INFINITY);
            return None;
        }
        self.changed.clear();
        for &r in &self.moved_levels {
            let r = r as usize;
            self.level[r] = self.fresh[r];
            if self.fresh[r].is_finite() {
                self.changed.push((r as u32, self.fresh[r]));
            }
        }
        Some(&self.changed)
    }

    /// When [`Levels::lower`] said no: the refill of the demands frozen at levels at or above
    /// the lowest lowered one's, on what the others leave (exact by [`super::Refill`]'s
    /// argument, on the present levels: a valid max-min answer, so in ascending levels a
    /// progressive filling). Writes the rates of the demands it moved into `rates` and
    /// returns their positions (each one's bottleneck and level then in
    /// [`Levels::bottlenecks`]); `None` (state to be rebuilt by a whole fill) when a lowered
    /// demand had no rate or a refilled demand would freeze at a resource kept.
    pub fn refill(
        &mut self,
        fill: &mut WaterFill,
        demands: &[Demand],
        lowered: &[u32],
        rates: &mut [f64],
    ) -> Option<&[u32]> {
        if !self.ready {
            return None;
        }
        let ports = self.ports;
        let mut cut = f64::INFINITY;
        for &i in lowered {
            let r = self.at[i as usize];
            if r == NONE {
                return None;
            }
            cut = cut.min(self.level[r as usize]);
        }
        let cut = cut * (1.0 - TOLERANCE);
        self.moved.clear();
        self.sub.clear();
        self.sub_at.clear();
        self.touched.clear();
        for &r in &self.order {
            let r = r as usize;
            if self.level[r] < cut {
                continue;
            }
            self.refilled[r] = true;
            for &i in &self.adj[self.start[r] as usize..self.start[r + 1] as usize] {
                if self.at[i as usize] as usize != r {
                    continue;
                }
                self.moved.push(i);
                let d = demands[i as usize];
                if d.weight > 0.0 {
                    self.sub.push(d);
                    self.sub_at.push(i);
                    for q in [d.src as usize, ports + d.dst as usize] {
                        if !self.marked[q] {
                            self.marked[q] = true;
                            self.touched.push(q as u32);
                        }
                    }
                }
            }
        }
        // What the demands kept leave of each resource the refilled ones use.
        self.budget.up.clear();
        self.budget.up.extend_from_slice(&self.cap[..ports]);
        self.budget.down.clear();
        self.budget.down.extend_from_slice(&self.cap[ports..]);
        // The kept demands' levels, 0 at refilled resources and for `NONE` (`[n]`): a
        // term of 0 adds nothing, bit for bit, and takes no branch.
        let n = self.level.len();
        self.fresh.clear();
        self.fresh.extend(
            (self.level.iter().zip(&self.refilled)).map(|(&l, &re)| if re { 0.0 } else { l }),
        );
        self.fresh.push(0.0);
        for &q in &self.touched {
            let q = q as usize;
            self.marked[q] = false;
            let kept: f64 = (self.adj[self.start[q] as usize..self.start[q + 1] as usize].iter())
                .map(|&i| {
                    demands[i as usize].weight * self.fresh[(self.at[i as usize] as usize).min(n)]
                })
                .sum();
            let left = (self.cap[q] - kept).max(0.0);
            if q < ports {
                self.budget.up[q] = left;
            } else {
                self.budget.down[q - ports] = left;
            }
        }
        self.sub_rates.clear();
        self.sub_rates.resize(self.sub.len(), 0.0);
        fill.fill_rates(&self.sub, &self.budget, &mut self.sub_rates);
        let clash = (fill.frozen_at().iter())
            .any(|&r| self.level[r as usize].is_finite() && !self.refilled[r as usize]);
        if clash {
            self.refilled.fill(false);
            self.ready = false;
            return None;
        }
        // The new answer: refilled resources lose their levels, then take the fill's.
        for &i in &self.moved {
            rates[i as usize] = 0.0;
            self.at[i as usize] = NONE;
            self.demand_level[i as usize] = 0.0;
        }
        for (&j, &rate) in self.sub_at.iter().zip(&self.sub_rates) {
            rates[j as usize] = rate;
        }
        self.new_order.clear();
        for &r in &self.order {
            if self.refilled[r as usize] {
                self.level[r as usize] = f64::INFINITY;
                self.pos[r as usize] = NONE;
            } else {
                self.new_order.push(r);
            }
        }
        for (&(j, level), &r) in fill.frozen().iter().zip(fill.frozen_at()) {
            let i = self.sub_at[j as usize] as usize;
            self.at[i] = r;
            self.demand_level[i] = level;
            if self.pos[r as usize] == NONE {
                self.pos[r as usize] = self.new_order.len() as u32;
                self.new_order.push(r);
            }
            self.level[r as usize] = level;
        }
        for &r in &self.order {
            self.refilled[r as usize] = false;
        }
        std::mem::swap(&mut self.order, &mut self.new_order);
        self.bound.fill(f64::INFINITY); // the assignment moved
        for (k, &r) in self.order.iter().enumerate() {
            self.pos[r as usize] = k as u32;
        }
        Some(&self.moved)
    }

    /// The demands the last [`Levels::refill`] moved.
    pub fn moved(&self) -> &[u32] {
        &self.moved
    }

    /// Per demand: the resource it froze at (`NONE` without a rate) and, for those a refill
    /// moved, its level.
    pub fn bottlenecks(&self) -> (&[u32], &[f64]) {
        (&self.at, &self.demand_level)
    }

    /// Demand `i`'s rate in the present answer: its weight at its bottleneck's level.
    #[cfg(test)]
    pub(crate) fn rate(&self, demands: &[Demand], i: usize) -> f64 {
        match self.at[i] {
            _ if demands[i].weight == 0.0 => 0.0,
            NONE => 0.0,
            r => demands[i].weight * self.level[r as usize],
        }
    }
}

#[cfg(test)]
#[path = "levels_tests.rs"]
mod tests;

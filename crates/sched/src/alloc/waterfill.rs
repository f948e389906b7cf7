//! Weighted max-min fairness over coupled uplinks and downlinks by progressive filling: every
//! unfrozen flow rises at a speed proportional to its weight until one of its two ports fills,
//! then it freezes. With unit weights this is TCP-like per-flow fairness; BASHuffler's bandwidth
//! estimate, Aalo's in-coflow sharing and WSS all use this one implementation.
//!
//! Cost: O(F + R * I) for F flows, R ports touched and I <= R freezing rounds.

use super::budget::Budget;

/// A resource's weight sum is kept by subtracting the weights that freeze; when that leaves
/// less than this fraction of it, the subtraction has lost digits (WSS weighs by bytes left,
/// which span orders of magnitude), and the sum is taken again over the demands still rising.
/// Whole weights (fair, Aalo) subtract exactly: for them the two sums are the same.
const RESUM_BELOW: f64 = 1e-3;

/// One flow to fill: its ports and its weight (> 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Demand {
    pub src: u32,
    pub dst: u32,
    pub weight: f64,
}

/// Scratch space, reused across calls so that a decision allocates nothing. Everything is
/// indexed by the resources (uplinks and downlinks) the demands touch, so filling one small
/// coflow costs what it touches, not the fabric's size.
#[derive(Debug, Default, Clone)]
pub struct WaterFill {
    /// Resource (`port` for an uplink, `ports + port` for a downlink) -> local index, or MAX.
    local: Vec<u32>,
    touched: Vec<u32>,
    cap: Vec<f64>,
    weight_sum: Vec<f64>,
    unfrozen: Vec<u32>,
    used: Vec<f64>,
    start: Vec<u32>,
    fill_at: Vec<u32>,
    adj: Vec<u32>,
    ends: Vec<[u32; 2]>,
    live: Vec<u32>,
    frozen: Vec<bool>,
    /// The demands given a rate by the last fill, in the order they froze, with their levels.
    order: Vec<(u32, f64)>,
    /// Beside `order`: the resource each froze at (its bottleneck).
    order_at: Vec<u32>,
}

impl WaterFill {
    /// The demands the last [`WaterFill::fill`] gave a rate, in the order they froze (so by
    /// ascending level, up to rounding: rate over weight before any rounding fix), with their
    /// levels.
    pub fn frozen(&self) -> &[(u32, f64)] {
        &self.order
    }

    /// The weights of the unfrozen demands through resource `l`, summed afresh.
    fn resum(&self, l: usize, demands: &[Demand]) -> f64 {
        (self.start[l]..self.start[l + 1])
            .map(|idx| self.adj[idx as usize] as usize)
            .filter(|&i| !self.frozen[i])
            .map(|i| demands[i].weight)
            .sum()
    }

    fn slot(&mut self, r: usize, cap: f64) -> u32 {
        if self.local[r] == u32::MAX {
            self.local[r] = self.touched.len() as u32;
            self.touched.push(r as u32);
            self.cap.push(cap);
            self.weight_sum.push(0.0);
            self.unfrozen.push(0);
            self.used.push(0.0);
        }
        self.local[r]
    }

    /// Beside [`WaterFill::frozen`]: the resource each froze at (`port` for an uplink,
    /// `ports + port` for a downlink), its bottleneck, whose level it shares.
    pub fn frozen_at(&self) -> &[u32] {
        &self.order_at
    }

    /// Max-min fair rates for `demands` within `budget`; writes `rates[i]` for `demands[i]` and
    /// takes the rates from `budget`. Flows whose port is already full get 0.
    pub fn fill(&mut self, demands: &[Demand], budget: &mut Budget, rates: &mut [f64]) {
        self.fill_rates(demands, budget, rates);
        for (i, d) in demands.iter().enumerate() {
            if rates[i] > 0.0 {
                budget.take(d.src, d.dst, rates[i]);
            }
        }
    }

    /// [`WaterFill::fill`]'s rates, leaving `budget` as it was.
    pub fn fill_rates(&mut self, demands: &[Demand], budget: &Budget, rates: &mut [f64]) {
        let ports = budget.up.len();
        if self.local.len() != 2 * ports {
            self.local = vec![u32::MAX; 2 * ports];
        }
        self.touched.clear();
        self.cap.clear();
        self.weight_sum.clear();
        self.unfrozen.clear();
        self.used.clear();
        self.ends.clear();
        self.frozen.clear();
        self.frozen.resize(demands.len(), true);
        self.order.clear();
        self.order_at.clear();

        for (i, d) in demands.iter().enumerate() {
            rates[i] = 0.0;
            let mut ends = [u32::MAX; 2];
            if d.weight > 0.0 && budget.has_room(d.src, d.dst) {
                self.frozen[i] = false;
                let up = self.slot(d.src as usize, budget.up[d.src as usize]);
                let down = self.slot(ports + d.dst as usize, budget.down[d.dst as usize]);
                ends = [up, down];
                for l in ends {
                    self.weight_sum[l as usize] += d.weight;
                    self.unfrozen[l as usize] += 1;
                }
            }
            self.ends.push(ends);
        }
        // Compressed adjacency: the flows through each touched resource.
        let n = self.touched.len();
        self.start.clear();
        self.start.push(0);
        for l in 0..n {
            let s = self.start[l] + self.unfrozen[l];
            self.start.push(s);
        }
        self.fill_at.clear();
        self.fill_at.extend_from_slice(&self.start[..n]);
        self.adj.clear();
        self.adj.resize(self.start[n] as usize, 0);
        for (i, ends) in self.ends.iter().enumerate() {
            if !self.frozen[i] {
                for &l in ends {
                    self.adj[self.fill_at[l as usize] as usize] = i as u32;
                    self.fill_at[l as usize] += 1;
                }
            }
        }
        self.live.clear();
        self.live.extend(0..n as u32);

        loop {
            // The resource that fills first at the current speeds.
            let mut best = None;
            let mut best_level = f64::INFINITY;
            let mut k = 0;
            while k < self.live.len() {
                let l = self.live[k] as usize;
                if self.unfrozen[l] == 0 {
                    self.live.swap_remove(k);
                    continue;
                }
                let level = (self.cap[l] - self.used[l]).max(0.0) / self.weight_sum[l];
                if level < best_level {
                    best_level = level;
                    best = Some(l);
                }
                k += 1;
            }
            let Some(l) = best else { break };
            let at = self.touched[l];
            for idx in self.start[l]..self.start[l + 1] {
                let i = self.adj[idx as usize] as usize;
                if self.frozen[i] {
                    continue;
                }
                self.frozen[i] = true;
                self.order.push((i as u32, best_level));
                self.order_at.push(at);
                let w = demands[i].weight;
                let rate = w * best_level;
                rates[i] = rate;
                for q in self.ends[i] {
                    let q = q as usize;
                    self.used[q] += rate;
                    self.unfrozen[q] -= 1;
                    self.weight_sum[q] = if self.unfrozen[q] == 0 {
                        0.0
                    } else {
                        let left = self.weight_sum[q] - w;
                        if left > self.weight_sum[q] * RESUM_BELOW {
                            left
                        } else {
                            self.resum(q, demands)
                        }
                    };
                }
            }
        }

        // Rates summed in freeze order can leave a port a hair over capacity (rounding): scale
        // such a port's flows down to fit (which never overloads another port).
        self.used.iter_mut().for_each(|u| *u = 0.0);
        for (i, ends) in self.ends.iter().enumerate() {
            if rates[i] > 0.0 {
                for &l in ends {
                    self.used[l as usize] += rates[i];
                }
            }
        }
        // Uplinks first, then downlinks: a flow over at both ends is scaled in that order.
        let over = |l: usize, used: &[f64], cap: &[f64]| used[l] > cap[l] && used[l] > 0.0;
        for downlinks in [false, true] {
            for l in 0..n {
                if (self.touched[l] as usize >= ports) != downlinks
                    || !over(l, &self.used, &self.cap)
                {
                    continue;
                }
                for idx in self.start[l]..self.start[l + 1] {
                    let i = self.adj[idx as usize] as usize;
                    rates[i] *= self.cap[l] / self.used[l];
                }
            }
        }
        for &r in &self.touched {
            self.local[r as usize] = u32::MAX;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::Fabric;

    fn run(caps: &[f64], flows: &[(u32, u32)]) -> Vec<f64> {
        let fabric = Fabric {
            up_bytes_per_s: caps.to_vec(),
            down_bytes_per_s: caps.to_vec(),
        };
        let mut b = Budget::full(&fabric);
        let demands: Vec<Demand> = flows
            .iter()
            .map(|&(src, dst)| Demand {
                src,
                dst,
                weight: 1.0,
            })
            .collect();
        let mut rates = vec![0.0; flows.len()];
        WaterFill::default().fill(&demands, &mut b, &mut rates);
        rates
    }

    fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-9, "{a:?} != {b:?}");
        }
    }

    // BASHuffler Tables 2-5 (spec D1): A=0, B=1, C=2.
    const A: u32 = 0;
    const B: u32 = 1;
    const C: u32 = 2;
    const M4: [(u32, u32); 4] = [(A, C), (B, C), (B, C), (C, A)];
    const M10: [(u32, u32); 6] = [(B, A), (C, A), (A, B), (C, B), (A, C), (B, C)];

    #[test]
    fn bashuffler_tables_homogeneous() {
        let caps = [6.0, 6.0, 6.0];
        close(&run(&caps, &[(A, C), (B, C)]), &[3.0, 3.0]);
        close(&run(&caps, &[(A, C), (B, C), (A, B)]), &[3.0, 3.0, 3.0]);
        close(&run(&caps, &[(A, C), (B, C), (C, B)]), &[3.0, 3.0, 6.0]);
        close(&run(&caps, &M4), &[2.0, 2.0, 2.0, 6.0]);
        let mut m5 = M4.to_vec();
        m5.push((A, B));
        close(&run(&caps, &m5), &[2.0, 2.0, 2.0, 6.0, 4.0]);
        let mut m6 = M4.to_vec();
        m6.push((C, B));
        close(&run(&caps, &m6), &[2.0, 2.0, 2.0, 3.0, 3.0]);
    }

    #[test]
    fn bashuffler_tables_heterogeneous() {
        let caps = [6.0, 6.0, 12.0];
        close(&run(&caps, &[(A, C), (B, C)]), &[6.0, 6.0]);
        close(&run(&caps, &[(A, C), (B, C), (A, B)]), &[3.0, 6.0, 3.0]);
        close(&run(&caps, &[(A, C), (B, C), (C, B)]), &[6.0, 6.0, 6.0]);
        close(&run(&caps, &M10), &[3.0; 6]);
        let mut m11 = M10.to_vec();
        m11.push((A, B));
        close(&run(&caps, &m11), &[3.0, 3.0, 2.0, 2.0, 2.0, 3.0, 2.0]);
        let mut m12 = M10.to_vec();
        m12.push((C, B));
        close(&run(&caps, &m12), &[3.0, 3.0, 2.0, 2.0, 4.0, 3.0, 2.0]);
    }

    #[test]
    fn weights_nine_orders_apart_keep_their_digits() {
        // Uplink 0 carries a (0->1, weight 1e9, held to 1e-6 by downlink 1) and b (0->2,
        // weight 1e-3). Once a freezes, b alone rises: it gets the rest of uplink 0. Subtracting
        // a's weight from the port's sum would leave rounding noise (ulp(1e9) ~ 1e-7) as b's.
        let fabric = Fabric {
            up_bytes_per_s: vec![1.0, 1.0, 1.0],
            down_bytes_per_s: vec![1.0, 1e-6, 1.0],
        };
        let d = [
            Demand {
                src: 0,
                dst: 1,
                weight: 1e9,
            },
            Demand {
                src: 0,
                dst: 2,
                weight: 1e-3,
            },
        ];
        let mut rates = [0.0; 2];
        WaterFill::default().fill(&d, &mut Budget::full(&fabric), &mut rates);
        close(&rates, &[1e-6, 1.0 - 1e-6]);
        assert!((rates[0] - 1e-6).abs() < 1e-18, "{rates:?}");
    }

    #[test]
    fn weights_split_a_link_proportionally() {
        let fabric = Fabric::uniform(3, 1.0);
        let mut b = Budget::full(&fabric);
        let d = [
            Demand {
                src: 0,
                dst: 1,
                weight: 1.0,
            },
            Demand {
                src: 0,
                dst: 2,
                weight: 2.0,
            },
        ];
        let mut rates = [0.0; 2];
        WaterFill::default().fill(&d, &mut b, &mut rates);
        close(&rates, &[1.0 / 3.0, 2.0 / 3.0]);
        assert!(b.up[0] < 1e-12);
    }
}

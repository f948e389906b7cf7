//! Redistribution between decisions. When flows finish, the bandwidth they held goes back to
//! the unfinished flows on the same ports in the priority order of the last decision, greedily
//! as that decision's backfill would hand it out. A flow that gets a freed port but finds its
//! other port held by lower-priority flows takes it from them (lowest priority first), and the
//! ports those flows free are topped up in turn (without further yielding, which bounds the
//! work): priority is kept, not only work.
//!
//! Why: a full decision per flow completion costs O(active flows) and the FB trace has 700 k
//! flows; a top-up costs what the freed ports touch. Without the preemption a coflow served
//! whole-port (Sincronia's greedy rates) keeps a lower-priority flow in the way of a higher one
//! until it ends, which triples Sincronia's average CCT on the FB trace. It is work conserving:
//! afterwards every freed port is full or each of its waiting flows is blocked at its other end
//! by flows of at least its priority. Rates inside a coflow are not re-planned (no new MADD);
//! `SimOptions::refresh_s` adds periodic full decisions for that.

use std::collections::BTreeSet;

use super::budget::Budget;
use crate::state::{CoflowState, FlowState, Rates};

/// The ports whose bandwidth came back, and what changed when it was handed out.
#[derive(Debug, Default, Clone)]
pub struct Freed {
    /// Capacity minus the current rates, per uplink and downlink (the world keeps it).
    pub spare: Budget,
    pub up: Vec<u32>,
    pub down: Vec<u32>,
    /// Rate changes: (coflow index, flow index, bytes per second added; negative if taken).
    pub changed: Vec<(u32, u32, f64)>,
}

impl Freed {
    pub fn clear_ports(&mut self) {
        self.up.clear();
        self.down.clear();
        self.changed.clear();
    }
}

/// The flows of the last decision indexed by port, in priority order.
#[derive(Debug, Default, Clone)]
pub struct TopUp {
    /// `lists[0]` by uplink, `lists[1]` by downlink: (coflow, flow, port at the other end).
    lists: [Vec<Vec<(u32, u32, u32)>>; 2],
    /// Entries before these positions are finished flows, skipped for good.
    heads: [Vec<usize>; 2],
    /// Flows with a rate, per port, by priority key (rank, flow, coflow).
    holders: [Vec<BTreeSet<(u32, u32, u32)>>; 2],
    /// Priority rank of each coflow of the snapshot (`u32::MAX`: not ranked).
    rank: Vec<u32>,
    work: Vec<(u32, usize, bool)>,
    /// `seen[q] == stamp`: the current scan already offered bandwidth to the best flow
    /// towards `q`, so later flows towards `q` cannot get any.
    seen: Vec<u32>,
    stamp: u32,
}

const UP: usize = 0;
const DOWN: usize = 1;

fn spare_of(spare: &mut Budget, side: usize) -> &mut Vec<f64> {
    if side == UP {
        &mut spare.up
    } else {
        &mut spare.down
    }
}

fn port(f: &FlowState, side: usize) -> usize {
    if side == UP {
        f.src as usize
    } else {
        f.dst as usize
    }
}

impl TopUp {
    /// Index the flows of the coflows in `order` (highest priority first; flows in their
    /// coflow's order) and those of them `rates` serves. Coflows not listed never get
    /// redistributed bandwidth nor yield any.
    pub fn index(
        &mut self,
        ports: usize,
        coflows: &[CoflowState],
        rates: &Rates,
        order: impl IntoIterator<Item = usize>,
    ) {
        for side in [UP, DOWN] {
            self.lists[side].resize_with(ports, Vec::new);
            self.lists[side].iter_mut().for_each(Vec::clear);
            self.holders[side].resize_with(ports, BTreeSet::new);
            self.holders[side].iter_mut().for_each(BTreeSet::clear);
            self.heads[side].clear();
            self.heads[side].resize(ports, 0);
        }
        self.rank.clear();
        self.rank.resize(coflows.len(), u32::MAX);
        self.seen.clear();
        self.seen.resize(ports, 0);
        self.stamp = 0;
        for (r, ci) in order.into_iter().enumerate() {
            self.rank[ci] = r as u32;
            for (fi, f) in coflows[ci].flows.iter().enumerate() {
                self.lists[UP][f.src as usize].push((ci as u32, fi as u32, f.dst));
                self.lists[DOWN][f.dst as usize].push((ci as u32, fi as u32, f.src));
                if rates.per_coflow[ci][fi] > 0.0 {
                    let h = (r as u32, fi as u32, ci as u32);
                    self.holders[UP][f.src as usize].insert(h);
                    self.holders[DOWN][f.dst as usize].insert(h);
                }
            }
        }
    }

    /// Hand the spare bandwidth of the freed ports to waiting flows (see the module docs).
    pub fn apply(&mut self, coflows: &[CoflowState], rates: &mut Rates, freed: &mut Freed) {
        let Freed {
            spare,
            up,
            down,
            changed,
        } = freed;
        let floor = spare.floor;
        let mut work = std::mem::take(&mut self.work);
        work.clear();
        work.extend(down.iter().map(|&p| (p, DOWN, true)));
        work.extend(up.iter().map(|&p| (p, UP, true)));
        // A coflow's flows often end together: scan each freed port once.
        work.sort_unstable_by_key(|&(p, side, _)| (side, p));
        work.dedup();
        while let Some((p, side, preempt)) = work.pop() {
            let p = p as usize;
            let other = 1 - side;
            let mut skipping = true;
            let mut dead = 0;
            if p >= self.lists[side].len() {
                continue; // never indexed: nothing ranked waits here
            }
            let mut k = self.heads[side][p];
            self.stamp = self.stamp.wrapping_add(1);
            if self.stamp == 0 {
                self.seen.fill(0);
                self.stamp = 1;
            }
            let mut offered = 0;
            while k < self.lists[side][p].len() && offered < self.seen.len() {
                let here = spare_of(spare, side)[p];
                if here <= floor {
                    break;
                }
                let (ci, fi, q) = self.lists[side][p][k];
                k += 1;
                if self.seen[q as usize] == self.stamp {
                    continue;
                }
                let f = &coflows[ci as usize].flows[fi as usize];
                if f.remaining_bytes <= 0.0 {
                    if skipping {
                        self.heads[side][p] = k;
                    } else {
                        dead += 1;
                    }
                    continue;
                }
                skipping = false;
                self.seen[q as usize] = self.stamp;
                offered += 1;
                let q = q as usize;
                let key = (self.rank[ci as usize], fi, ci);
                // Lower-priority flows at the other end yield, the lowest first. The ports
                // they free are topped up in turn, without yielding again (bounded work).
                while preempt && spare_of(spare, other)[q] < here {
                    let Some(&g) = self.holders[other][q].last() else {
                        break;
                    };
                    if g <= key {
                        break;
                    }
                    let gf = &coflows[g.2 as usize].flows[g.1 as usize];
                    let rate = &mut rates.per_coflow[g.2 as usize][g.1 as usize];
                    let x = port(gf, side);
                    let need = here - spare_of(spare, other)[q];
                    if gf.remaining_bytes <= 0.0 || *rate <= need {
                        self.holders[other][q].remove(&g);
                        self.holders[side][x].remove(&g);
                    }
                    if gf.remaining_bytes <= 0.0 || *rate <= 0.0 {
                        continue;
                    }
                    let take = rate.min(need);
                    *rate -= take;
                    changed.push((g.2, g.1, -take));
                    spare_of(spare, other)[q] += take;
                    spare_of(spare, side)[x] += take;
                    if x != p {
                        work.push((x as u32, side, false));
                    }
                }
                let add = here.min(spare_of(spare, other)[q]);
                if add > floor {
                    let rate = &mut rates.per_coflow[ci as usize][fi as usize];
                    if *rate <= 0.0 {
                        self.holders[UP][f.src as usize].insert(key);
                        self.holders[DOWN][f.dst as usize].insert(key);
                    }
                    *rate += add;
                    spare.take(f.src, f.dst, add);
                    changed.push((ci, fi, add));
                }
            }
            // Finished flows amid the list cost every later scan: drop them once they are
            // a good share of it (amortized O(1) per finished flow).
            let list = &mut self.lists[side][p];
            if dead > 8 && dead * 8 > list.len() {
                let head = &mut self.heads[side][p];
                list.drain(..*head);
                *head = 0;
                list.retain(|&(ci, fi, _)| {
                    coflows[ci as usize].flows[fi as usize].remaining_bytes > 0.0
                });
            }
        }
        self.work = work;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::FlowState;
    use coflowkit_model::Fabric;

    fn coflow(flows: &[(u32, u32, f64)]) -> CoflowState {
        CoflowState {
            id: 1,
            arrival_s: 0.0,
            deadline_s: None,
            weight: 1.0,
            total_flows: flows.len(),
            sent_bytes: 0.0,
            max_flow_sent_bytes: 0.0,
            dag: None,
            flows: flows
                .iter()
                .map(|&(src, dst, rem)| FlowState {
                    src,
                    dst,
                    sent_bytes: 0.0,
                    remaining_bytes: rem,
                })
                .collect(),
        }
    }

    #[test]
    fn freed_uplink_goes_to_the_first_flow_with_room_in_priority_order() {
        // Coflow 1 (priority) has a finished flow 0->1 and a flow 0->2 blocked at downlink 2;
        // coflow 0 has 0->3 with room. Port 0's uplink is freed.
        let fabric = Fabric::uniform(4, 10.0);
        let coflows = vec![coflow(&[(0, 3, 5.0)]), coflow(&[(0, 1, 0.0), (0, 2, 5.0)])];
        let mut rates = Rates {
            per_coflow: vec![vec![0.0], vec![0.0, 10.0]],
        };
        let mut freed = Freed {
            spare: Budget::full(&fabric),
            ..Default::default()
        };
        freed.spare.take(0, 2, 10.0);
        let mut t = TopUp::default();
        t.index(4, &coflows, &rates, [1, 0]);
        freed.up.push(0);
        freed.down.push(1);
        t.apply(&coflows, &mut rates, &mut freed);
        assert_eq!(rates.per_coflow[0], vec![0.0]);
        assert_eq!(freed.changed, vec![]);

        // Now uplink 0 has spare 0 (0->2 holds it all). Finish 0->2: its 10 go to 0->3.
        let coflows = vec![coflow(&[(0, 3, 5.0)]), coflow(&[(0, 1, 0.0), (0, 2, 0.0)])];
        rates.per_coflow[1][1] = 0.0;
        freed.spare = Budget::full(&fabric);
        freed.clear_ports();
        freed.up.push(0);
        freed.down.push(2);
        t.apply(&coflows, &mut rates, &mut freed);
        assert_eq!(rates.per_coflow[0], vec![10.0]);
        assert_eq!(freed.changed, vec![(0, 0, 10.0)]);
        assert!(freed.spare.up[0] <= freed.spare.floor);
    }

    #[test]
    fn a_higher_priority_flow_takes_its_other_port_back_from_a_lower_one() {
        // A (priority) = {0->1 finished, 2->1 waiting: downlink 1 was busy}; B = {2->3} holds
        // uplink 2 whole (greedy rates). Downlink 1 frees up: A's 2->1 takes uplink 2 from B.
        let fabric = Fabric::uniform(4, 10.0);
        let coflows = vec![coflow(&[(0, 1, 0.0), (2, 1, 5.0)]), coflow(&[(2, 3, 5.0)])];
        let mut rates = Rates {
            per_coflow: vec![vec![10.0, 0.0], vec![10.0]],
        };
        let mut t = TopUp::default();
        t.index(4, &coflows, &rates, [0, 1]);
        rates.per_coflow[0][0] = 0.0; // 0->1 ends: the world zeroes it and frees its ports
        let mut freed = Freed {
            spare: Budget::full(&fabric),
            ..Default::default()
        };
        freed.spare.take(2, 3, 10.0);
        freed.up.push(0);
        freed.down.push(1);
        t.apply(&coflows, &mut rates, &mut freed);
        assert_eq!(rates.per_coflow, vec![vec![0.0, 10.0], vec![0.0]]);
        assert_eq!(freed.changed, vec![(1, 0, -10.0), (0, 1, 10.0)]);
        assert!(freed.spare.down[3] >= 10.0, "B's downlink is free again");
    }
}

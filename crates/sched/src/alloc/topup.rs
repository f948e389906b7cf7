//! Redistribution between decisions. When flows finish, the bandwidth they held goes back to
//! the unfinished flows on the same ports, in the priority order of the last decision and
//! greedily, exactly as that decision's backfill would have handed it out; nothing else moves.
//!
//! Why: a full decision per flow completion costs O(active flows) and the FB trace has 700 k
//! flows. A top-up costs O(flows on the freed ports). It is work conserving: afterwards every
//! freed port is full or each of its waiting flows is blocked at its other end, and no other
//! port changed. It never takes bandwidth from anyone, so it can differ from a recomputation,
//! which may also move bandwidth between coflows that were not involved.

use super::budget::Budget;
use crate::state::{CoflowState, Rates};

/// The ports whose bandwidth came back, and what changed when it was handed out.
#[derive(Debug, Default, Clone)]
pub struct Freed {
    /// Capacity minus the current rates, per uplink and downlink (the world keeps it).
    pub spare: Budget,
    pub up: Vec<u32>,
    pub down: Vec<u32>,
    /// Flows that got more bandwidth: (coflow index, flow index, added bytes per second).
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
    by_up: Vec<Vec<(u32, u32)>>,
    by_down: Vec<Vec<(u32, u32)>>,
    /// Entries before these positions are finished flows, skipped for good.
    head_up: Vec<usize>,
    head_down: Vec<usize>,
}

impl TopUp {
    /// Index the flows of the coflows in `order` (highest priority first; flows in their
    /// coflow's order). Coflows not listed never get redistributed bandwidth.
    pub fn index(
        &mut self,
        ports: usize,
        coflows: &[CoflowState],
        order: impl IntoIterator<Item = usize>,
    ) {
        for lists in [&mut self.by_up, &mut self.by_down] {
            lists.resize_with(ports, Vec::new);
            lists.iter_mut().for_each(Vec::clear);
        }
        self.head_up.clear();
        self.head_up.resize(ports, 0);
        self.head_down.clear();
        self.head_down.resize(ports, 0);
        for ci in order {
            for (fi, f) in coflows[ci].flows.iter().enumerate() {
                let key = (ci as u32, fi as u32);
                self.by_up[f.src as usize].push(key);
                self.by_down[f.dst as usize].push(key);
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
        for (ports, lists, heads, is_up) in [
            (&*up, &self.by_up, &mut self.head_up, true),
            (&*down, &self.by_down, &mut self.head_down, false),
        ] {
            for &p in ports {
                let p = p as usize;
                let Some(list) = lists.get(p) else { continue };
                let mut skipping = true;
                for (k, &(ci, fi)) in list.iter().enumerate().skip(heads[p]) {
                    let here = if is_up { spare.up[p] } else { spare.down[p] };
                    if here <= spare.floor {
                        break;
                    }
                    let f = &coflows[ci as usize].flows[fi as usize];
                    if f.remaining_bytes <= 0.0 {
                        if skipping {
                            heads[p] = k + 1;
                        }
                        continue;
                    }
                    skipping = false;
                    let add = spare.headroom(f.src, f.dst);
                    if add > spare.floor {
                        rates.per_coflow[ci as usize][fi as usize] += add;
                        spare.take(f.src, f.dst, add);
                        changed.push((ci, fi, add));
                    }
                }
            }
        }
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
        t.index(4, &coflows, [1, 0]);
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
}

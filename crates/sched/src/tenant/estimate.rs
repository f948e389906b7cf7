//! Correlation vectors of non-clairvoyant coflows that do not report one (issue 22; thesis
//! §7.6.1: "non-clairvoyant coflows report current rate estimates"). Three defaults:
//!
//! - [`NcVector::Flows`] (the default): one unit of demand per unfinished flow on its uplink
//!   and its downlink, i.e. the thesis' all-ones vector per flow (docs/hug.md, choice 13);
//! - [`NcVector::Ones`]: the all-ones vector on the links the coflow's unfinished flows use
//!   (over the whole fabric it would make every such coflow demand every link and drive P* to
//!   1/M), each side scaled to sum to 1 so that uplinks and downlinks balance (§7.3: a vector
//!   that does not balance is not a vector; with as many uplinks as downlinks it is all-ones);
//! - [`NcVector::Rates`]: the rates the coflow's flows were measured at, per link: each flow's
//!   bytes moved over the last window (at least `window_s`) as its demand on both its ends.
//!
//! The estimator sees only snapshots (`sent_bytes` per flow), which carry no flow identity and
//! may drop finished flows, so it measures per (source, destination) pair of a coflow: the
//! bytes its unfinished flows between them moved, divided by their number. A pair whose flow
//! count changed restarts its window and keeps its last per-flow rate; a window in which the
//! pair moved nothing keeps it open (daemons report progress every few milliseconds, decisions
//! can fall in between). A flow not measured yet, or measured at zero, counts at the coflow's
//! mean measured per-flow rate, so a flow the last allocation starved still asks for a share
//! (a zero would remove its links from the vector for good). A coflow with nothing measured
//! yet falls back to [`NcVector::Flows`].

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::CoflowState;

/// Which vector a non-clairvoyant coflow without a report gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NcVector {
    /// One unit per unfinished flow on each of its ends.
    #[default]
    Flows,
    /// The same on every link an unfinished flow of the coflow uses (each side summing to 1).
    Ones,
    /// The flows' measured rates (fallback: `Flows` until something is measured).
    Rates,
}

/// The shortest window a rate is measured over, seconds.
pub const RATE_WINDOW_S: f64 = 0.1;

#[derive(Debug, Clone, Copy)]
struct Pair {
    /// Unfinished flows at the window's start.
    flows: usize,
    /// Their sent bytes then, and when.
    sent: f64,
    at_s: f64,
    /// The last measured rate per flow, bytes/s.
    rate: Option<f64>,
}

/// Per coflow id, per (src, dst): the window being measured.
#[derive(Debug, Clone, Default)]
pub struct RateEstimator {
    window_s: f64,
    pairs: HashMap<u64, HashMap<(u32, u32), Pair>>,
}

impl RateEstimator {
    pub fn new(window_s: f64) -> Self {
        RateEstimator {
            window_s: window_s.max(0.0),
            pairs: HashMap::new(),
        }
    }

    /// Take the snapshot's progress at `now_s`; coflows and pairs absent from it are forgotten.
    pub fn observe(&mut self, now_s: f64, coflows: &[CoflowState]) {
        let mut next = HashMap::with_capacity(coflows.len());
        for co in coflows {
            let mut old = self.pairs.remove(&co.id).unwrap_or_default();
            let mut now: HashMap<(u32, u32), (usize, f64)> = HashMap::new();
            for fl in co.flows.iter().filter(|f| f.remaining_bytes > 0.0) {
                let e = now.entry((fl.src, fl.dst)).or_default();
                e.0 += 1;
                e.1 += fl.sent_bytes;
            }
            let pairs = (now.into_iter())
                .map(|(k, (flows, sent))| {
                    let fresh = Pair {
                        flows,
                        sent,
                        at_s: now_s,
                        rate: None,
                    };
                    let p = match old.remove(&k) {
                        None => fresh,
                        Some(p) if p.flows != flows || sent < p.sent => Pair {
                            rate: p.rate,
                            ..fresh
                        },
                        Some(p) if now_s - p.at_s >= self.window_s && sent > p.sent => Pair {
                            rate: Some((sent - p.sent) / (now_s - p.at_s) / flows as f64),
                            ..fresh
                        },
                        Some(p) => p,
                    };
                    (k, p)
                })
                .collect();
            next.insert(co.id, pairs);
        }
        self.pairs = next;
    }

    /// Coflow `co`'s demand per unfinished flow (in `co.flows` order, finished flows 0), bytes
    /// per second, or `None` when none of its pairs has been measured.
    pub fn per_flow(&self, co: &CoflowState) -> Option<Vec<f64>> {
        let pairs = self.pairs.get(&co.id)?;
        let measured: Vec<f64> = (pairs.values())
            .filter_map(|p| p.rate)
            .filter(|&r| r > 0.0)
            .collect();
        if measured.is_empty() {
            return None;
        }
        let mean = measured.iter().sum::<f64>() / measured.len() as f64;
        let out = (co.flows.iter())
            .map(|fl| {
                if fl.remaining_bytes <= 0.0 {
                    return 0.0;
                }
                match pairs.get(&(fl.src, fl.dst)).and_then(|p| p.rate) {
                    Some(r) if r > 0.0 => r,
                    _ => mean,
                }
            })
            .collect();
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FlowState;

    fn coflow(flows: &[(u32, u32, f64, f64)]) -> CoflowState {
        CoflowState {
            id: 7,
            arrival_s: 0.0,
            deadline_s: None,
            weight: 1.0,
            total_flows: flows.len(),
            sent_bytes: 0.0,
            max_flow_sent_bytes: 0.0,
            flows: (flows.iter())
                .map(|&(src, dst, sent_bytes, remaining_bytes)| FlowState {
                    src,
                    dst,
                    sent_bytes,
                    remaining_bytes,
                })
                .collect(),
            dag: None,
        }
    }

    const INF: f64 = f64::INFINITY;

    #[test]
    fn rates_per_pair_over_the_window() {
        let mut e = RateEstimator::new(0.1);
        e.observe(
            0.0,
            &[coflow(&[
                (0, 1, 0.0, INF),
                (0, 1, 0.0, INF),
                (1, 2, 0.0, INF),
            ])],
        );
        assert_eq!(
            e.per_flow(&coflow(&[(0, 1, 0.0, INF)])),
            None,
            "nothing measured"
        );
        // 0.05 s: shorter than the window, no estimate yet.
        let c = coflow(&[(0, 1, 5.0, INF), (0, 1, 5.0, INF), (1, 2, 1.0, INF)]);
        e.observe(0.05, std::slice::from_ref(&c));
        assert_eq!(e.per_flow(&c), None);
        // 0.5 s: pair (0, 1) moved 30 bytes over two flows, (1, 2) 2 bytes.
        let c = coflow(&[(0, 1, 15.0, INF), (0, 1, 15.0, INF), (1, 2, 1.0, INF)]);
        e.observe(0.5, std::slice::from_ref(&c));
        assert_eq!(e.per_flow(&c), Some(vec![30.0, 30.0, 2.0]));
    }

    #[test]
    fn unmeasured_or_idle_flows_count_at_the_mean_and_a_changed_pair_keeps_its_rate() {
        let mut e = RateEstimator::new(0.0);
        e.observe(0.0, &[coflow(&[(0, 1, 0.0, INF), (2, 1, 0.0, INF)])]);
        // (0, 1) at 4 B/s, (2, 1) starved; a new pair (3, 1) not measured: both at the mean 4.
        let c = coflow(&[(0, 1, 4.0, INF), (2, 1, 0.0, INF), (3, 1, 0.0, INF)]);
        e.observe(1.0, std::slice::from_ref(&c));
        assert_eq!(e.per_flow(&c), Some(vec![4.0, 4.0, 4.0]));
        // A decision between progress reports (nothing moved): the estimate stands.
        e.observe(1.001, std::slice::from_ref(&c));
        assert_eq!(e.per_flow(&c), Some(vec![4.0, 4.0, 4.0]));
        // A second flow on (0, 1) starts: the pair's window restarts, its rate is kept; a
        // finished flow counts 0.
        let c = coflow(&[(0, 1, 6.0, INF), (0, 1, 0.0, INF), (2, 1, 1.0, 0.0)]);
        e.observe(1.5, std::slice::from_ref(&c));
        assert_eq!(e.per_flow(&c), Some(vec![4.0, 4.0, 0.0]));
        // Then both move 3 B/s each.
        let c = coflow(&[(0, 1, 9.0, INF), (0, 1, 3.0, INF)]);
        e.observe(2.5, std::slice::from_ref(&c));
        assert_eq!(e.per_flow(&c), Some(vec![3.0, 3.0]));
        // A coflow absent from a snapshot is forgotten.
        e.observe(3.0, &[]);
        assert_eq!(e.per_flow(&c), None);
    }
}

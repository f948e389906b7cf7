//! Flows, coflows and traces: the workload that schedulers order and simulators replay.

use serde::{Deserialize, Serialize};

use crate::fabric::Fabric;

pub type CoflowId = u64;

/// One flow: `bytes` from the uplink of port `src` to the downlink of port `dst`. A flow with
/// `src == dst` (a self-flow, present in the Facebook trace) still crosses the fabric: it uses
/// `src`'s uplink and `dst`'s downlink, as CoflowSim does.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Flow {
    pub src: u32,
    pub dst: u32,
    pub bytes: f64,
}

/// A coflow: flows that finish only when all of them do. All flows start at `arrival_s`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coflow {
    pub id: CoflowId,
    /// Arrival time in seconds from the start of the trace.
    pub arrival_s: f64,
    pub flows: Vec<Flow>,
    /// Deadline relative to arrival, in seconds, if the coflow has one.
    pub deadline_s: Option<f64>,
    /// Weight for weighted policies (Sincronia's ordering, fair sharing between tenants).
    pub weight: f64,
    /// Tenant or application the coflow belongs to, if known.
    pub tenant: Option<u32>,
    /// Coflows this one depends on (DAG edges, finishes-before).
    pub parents: Vec<CoflowId>,
    /// Seconds of computation between its last parent's end and its start (its producing
    /// stage's compute), for a job-level replay with barriers (`Dependencies::StartsAfter`:
    /// the coflow is released `compute_s` after its last parent ends). 0 for a coflow without
    /// parents, whose arrival already says when it starts.
    #[serde(default)]
    pub compute_s: f64,
}

impl Coflow {
    pub fn new(id: CoflowId, arrival_s: f64, flows: Vec<Flow>) -> Self {
        Coflow {
            id,
            arrival_s,
            flows,
            deadline_s: None,
            weight: 1.0,
            tenant: None,
            parents: Vec::new(),
            compute_s: 0.0,
        }
    }

    /// Total bytes over all flows (the coflow's *size*).
    pub fn bytes(&self) -> f64 {
        self.flows.iter().map(|f| f.bytes).sum()
    }

    /// Largest flow in bytes (the coflow's *length*).
    pub fn length_bytes(&self) -> f64 {
        self.flows.iter().map(|f| f.bytes).fold(0.0, f64::max)
    }

    /// Number of flows (the coflow's *width*).
    pub fn width(&self) -> usize {
        self.flows.len()
    }

    /// Bytes leaving and entering each port of a `ports`-port fabric.
    pub fn port_loads(&self, ports: usize) -> (Vec<f64>, Vec<f64>) {
        let mut out = vec![0.0; ports];
        let mut inn = vec![0.0; ports];
        for f in &self.flows {
            out[f.src as usize] += f.bytes;
            inn[f.dst as usize] += f.bytes;
        }
        (out, inn)
    }

    /// Γ on an empty fabric: the coflow's completion time alone (Eq 4.1 with Rem = capacity).
    pub fn isolated_cct_s(&self, fabric: &Fabric) -> f64 {
        let (out, inn) = self.port_loads(fabric.ports());
        fabric.isolated_time_s(&out, &inn)
    }
}

/// A workload: a fabric size and coflows sorted by arrival.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub ports: u32,
    pub coflows: Vec<Coflow>,
}

impl Trace {
    /// Renumbers the ports the coflows use to `0..used`, keeping their order, so that per-port
    /// (and per-port-pair) tables scale with the ports a trace uses rather than those it
    /// declares. Returns each new port's number in the trace, or `None` when nothing changed
    /// (every declared port is used). A trace without flows keeps one port.
    pub fn compact_ports(&mut self) -> Option<Vec<u32>> {
        let mut used: Vec<u32> = (self.coflows.iter())
            .flat_map(|c| c.flows.iter().flat_map(|f| [f.src, f.dst]))
            .collect();
        used.sort_unstable();
        used.dedup();
        if used.len() == self.ports as usize {
            return None;
        }
        let new = |p: u32| used.binary_search(&p).expect("a used port") as u32;
        for c in &mut self.coflows {
            for f in &mut c.flows {
                (f.src, f.dst) = (new(f.src), new(f.dst));
            }
        }
        self.ports = used.len().max(1) as u32;
        Some(used)
    }

    pub fn flows(&self) -> usize {
        self.coflows.iter().map(|c| c.flows.len()).sum()
    }

    pub fn bytes(&self) -> f64 {
        self.coflows.iter().map(|c| c.bytes()).sum()
    }
}

#[cfg(test)]
mod compact_tests {
    use super::*;

    #[test]
    fn compaction_keeps_the_used_ports_in_order_and_nothing_else() {
        let flow = |src, dst| Flow {
            src,
            dst,
            bytes: 1.0,
        };
        let mut t = Trace {
            ports: 30_000,
            coflows: vec![
                Coflow::new(1, 0.0, vec![flow(29_999, 7), flow(7, 500)]),
                Coflow::new(2, 1.0, vec![flow(500, 29_999)]),
            ],
        };
        assert_eq!(t.compact_ports(), Some(vec![7, 500, 29_999]));
        assert_eq!(t.ports, 3);
        let pairs: Vec<_> = (t.coflows.iter())
            .flat_map(|c| c.flows.iter().map(|f| (f.src, f.dst)))
            .collect();
        assert_eq!(pairs, vec![(2, 0), (0, 1), (1, 2)]);
        assert_eq!(t.compact_ports(), None, "already compact");
        let mut empty = Trace {
            ports: 9,
            coflows: vec![],
        };
        assert_eq!(empty.compact_ports(), Some(vec![]));
        assert_eq!(empty.ports, 1);
    }
}

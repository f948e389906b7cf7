//! The `Status` reply, bounded: whatever the coordinator holds (100,000 flows used to make the
//! reply pass gRPC's 4 MiB limit and fail), it lists daemons, then coflows by id with their
//! flows, while the encoded reply stays under [`STATUS_MAX_BYTES`], and counts what it left out.

use prost::encoding::encoded_len_varint;
use prost::Message;

use super::state::{CoflowRec, Daemon, FlowRec, State};
use crate::auth::PROTOCOL_VERSION;
use crate::proto::{status_reply, StatusReply};

/// Bound of an encoded `Status` reply: under the 4 MiB message limit (`rpc::MAX_RPC_BYTES`)
/// with room for the reply's own fields.
pub const STATUS_MAX_BYTES: usize = 3 << 20;

/// Bytes `m` takes as one element of a repeated message field (tag, length, body).
fn field_len(m: &impl Message) -> usize {
    let n = m.encoded_len();
    1 + encoded_len_varint(n as u64) + n
}

/// One encoding of a status listing (the gRPC reply, the metrics endpoint's JSON): its entries
/// as made from the records, and the bytes each takes in that encoding.
pub trait Encoding {
    type Daemon;
    type Coflow;
    type Flow;
    fn daemon(&self, s: &State, port: usize, d: &Daemon) -> Self::Daemon;
    /// Its entry without flows, ready to count up to `u32::MAX` flows left out.
    fn coflow(&self, s: &State, c: &CoflowRec, flows: &[&FlowRec]) -> Self::Coflow;
    fn flow(&self, s: &State, f: &FlowRec) -> Self::Flow;
    /// Bytes as an element of its list, separator included.
    fn daemon_len(&self, d: &Self::Daemon) -> usize;
    /// Bytes of the entry made by [`Encoding::coflow`], with room for its length prefix to
    /// grow as flows are added.
    fn coflow_len(&self, c: &Self::Coflow) -> usize;
    fn flow_len(&self, f: &Self::Flow) -> usize;
}

/// What fits a budget: daemons, then coflows by id with their flows (and how many of each
/// coflow's flows were left out), and counts of what did not fit.
pub struct Listing<E: Encoding> {
    pub daemons: Vec<E::Daemon>,
    pub coflows: Vec<(E::Coflow, Vec<E::Flow>, u32)>,
    pub daemons_omitted: u32,
    pub coflows_omitted: u64,
    /// Flows left out, of listed and omitted coflows.
    pub flows_omitted: u64,
}

/// List what the state holds while the entries take at most `budget` bytes in `enc`: a daemon
/// that does not fit is skipped, the first coflow or flow that does not fit ends the listing
/// (so what is listed is a prefix in id order), and everything left out is counted.
pub fn listing<E: Encoding>(s: &State, enc: &E, budget: usize) -> Listing<E> {
    let mut out = Listing {
        daemons: Vec::new(),
        coflows: Vec::new(),
        daemons_omitted: 0,
        coflows_omitted: 0,
        flows_omitted: 0,
    };
    let mut used = 0;
    for (i, d) in s.daemons().iter().enumerate().filter(|(_, d)| !d.gone) {
        let d = enc.daemon(s, i, d);
        let n = enc.daemon_len(&d);
        if used + n > budget {
            out.daemons_omitted += 1;
            continue;
        }
        used += n;
        out.daemons.push(d);
    }
    let mut full = false;
    for c in s.coflows() {
        let flows: Vec<_> = c.flows.iter().filter_map(|&k| s.flow(k)).collect();
        if full {
            out.coflows_omitted += 1;
            out.flows_omitted += flows.len() as u64;
            continue;
        }
        let rc = enc.coflow(s, c, &flows);
        let head = enc.coflow_len(&rc);
        if used + head > budget {
            full = true;
            out.coflows_omitted += 1;
            out.flows_omitted += flows.len() as u64;
            continue;
        }
        used += head;
        let (mut listed, mut omitted) = (Vec::new(), 0u32);
        for f in flows {
            if full {
                omitted = omitted.saturating_add(1);
                continue;
            }
            let rf = enc.flow(s, f);
            let n = enc.flow_len(&rf);
            if used + n > budget {
                full = true;
                omitted = omitted.saturating_add(1);
                continue;
            }
            used += n;
            listed.push(rf);
        }
        out.flows_omitted += omitted as u64;
        out.coflows.push((rc, listed, omitted));
    }
    out
}

/// The gRPC reply's entries.
struct Proto<'a> {
    now: f64,
    addr: &'a dyn Fn(usize) -> String,
}

impl Encoding for Proto<'_> {
    type Daemon = status_reply::Daemon;
    type Coflow = status_reply::Coflow;
    type Flow = status_reply::Flow;
    fn daemon(&self, _: &State, port: usize, d: &Daemon) -> Self::Daemon {
        status_reply::Daemon {
            addr: d.addr.clone(),
            port: port as u32,
            nic_bytes_per_s: d.nic_bytes_per_s,
            connected: d.connected,
            objects: d.objects,
        }
    }
    fn coflow(&self, s: &State, c: &CoflowRec, flows: &[&FlowRec]) -> Self::Coflow {
        let dag = s.dag_pos(c.id);
        status_reply::Coflow {
            id: c.id,
            dag_external: dag.map_or(0, |d| d.external),
            dag_internal: dag.map_or(0, |d| d.internal),
            parents: c.parents.clone(),
            name: c.name.clone(),
            ready: c.ready(),
            age_s: self.now - c.arrival_s,
            sent_bytes: sent_bytes(flows),
            flows_omitted: u32::MAX,
            flows: Vec::new(),
        }
    }
    fn flow(&self, _: &State, f: &FlowRec) -> Self::Flow {
        status_reply::Flow {
            src: (self.addr)(f.src),
            dst: f.dst.map(self.addr).unwrap_or_default(),
            data_id: f.data_id.clone(),
            size_bytes: f.size_bytes as u64,
            sent_bytes: f.sent_bytes as u64,
            bytes_per_s: f.rate,
        }
    }
    fn daemon_len(&self, d: &Self::Daemon) -> usize {
        field_len(d)
    }
    fn coflow_len(&self, c: &Self::Coflow) -> usize {
        // The entry grows with its flows: its length prefix may take 3 bytes more.
        field_len(c) + 3
    }
    fn flow_len(&self, f: &Self::Flow) -> usize {
        field_len(f)
    }
}

/// A coflow's bytes sent, saturating: a daemon may report absurd byte counts (u64::MAX).
pub fn sent_bytes(flows: &[&FlowRec]) -> u64 {
    (flows.iter()).fold(0u64, |a, f| a.saturating_add(f.sent_bytes as u64))
}

/// The reply at `now` (seconds since start), at most `budget` bytes encoded.
pub fn reply(
    s: &State,
    now: f64,
    scheduler: &str,
    last_decision_s: f64,
    budget: usize,
) -> StatusReply {
    let mut out = StatusReply {
        protocol_version: PROTOCOL_VERSION,
        scheduler: scheduler.to_string(),
        rounds: s.rounds(),
        uptime_s: now,
        last_decision_s,
        ..Default::default()
    };
    // Room for the counters of what is left out, filled in at the end.
    let head = out.encoded_len() + 3 * 11;
    let addr = |port: usize| s.daemons()[port].addr.clone();
    let enc = Proto { now, addr: &addr };
    let l = listing(s, &enc, budget.saturating_sub(head));
    out.daemons = l.daemons;
    out.coflows = (l.coflows.into_iter())
        .map(|(mut c, flows, omitted)| {
            c.flows = flows;
            c.flows_omitted = omitted;
            c
        })
        .collect();
    out.daemons_omitted = l.daemons_omitted;
    out.coflows_omitted = l.coflows_omitted;
    out.flows_omitted = l.flows_omitted;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::FlowInfo;

    fn state(coflows: u64, flows_each: u64) -> State {
        let mut s = State::new(1);
        let a = s.register_daemon(0.0, "a:1", 100.0, &[], &[]);
        s.register_daemon(0.0, "b:1", 100.0, &[], &[]);
        for c in 0..coflows {
            let id = s
                .register_coflow(0.0, format!("c{c}"), 0, None, 1.0, vec![])
                .unwrap();
            for f in 0..flows_each {
                let info = FlowInfo {
                    flow: c * flows_each + f,
                    coflow: id,
                    data_id: format!("object-{f}"),
                    dst: "b:1".into(),
                    size_bytes: 1000,
                    sent_bytes: 10,
                    size_pending: false,
                };
                s.start_flow(0.0, a, &info);
            }
        }
        s
    }

    /// A small state is listed whole; a large one is cut at the budget, every flow and coflow
    /// either listed or counted, and the encoded reply stays within the bound.
    #[test]
    fn the_reply_lists_what_fits_and_counts_the_rest() {
        let small = reply(&state(3, 4), 1.0, "fair", 0.0, STATUS_MAX_BYTES);
        assert_eq!(small.coflows.len(), 3);
        assert!(small.coflows.iter().all(|c| c.flows.len() == 4));
        assert_eq!(
            (
                small.coflows_omitted,
                small.flows_omitted,
                small.daemons_omitted
            ),
            (0, 0, 0)
        );
        for budget in [200, 1000, 5000, 12_000] {
            let r = reply(&state(20, 30), 1.0, "fair", 0.0, budget);
            assert!(r.encoded_len() <= budget, "{} > {budget}", r.encoded_len());
            let listed: u64 = r.coflows.iter().map(|c| c.flows.len() as u64).sum();
            assert_eq!(listed + r.flows_omitted, 600, "budget {budget}");
            assert_eq!(r.coflows.len() as u64 + r.coflows_omitted, 20);
            let per: u64 = r.coflows.iter().map(|c| c.flows_omitted as u64).sum();
            assert!(per <= r.flows_omitted);
            assert!(
                r.coflows.iter().all(|c| c.sent_bytes == 300),
                "all flows count"
            );
            assert!(r.flows_omitted > 0, "budget {budget} cuts 600 flows");
        }
    }

    /// 200,000 flows (the reported failure was at about 100,000): under 3 MiB, most listed.
    #[test]
    fn two_hundred_thousand_flows_fit_the_bound() {
        let s = state(200, 1000);
        let r = reply(&s, 1.0, "fair", 0.0, STATUS_MAX_BYTES);
        assert!(r.encoded_len() <= STATUS_MAX_BYTES);
        assert!(r.encoded_len() > STATUS_MAX_BYTES - 1000, "fills its bound");
        let listed: u64 = r.coflows.iter().map(|c| c.flows.len() as u64).sum();
        assert_eq!(listed + r.flows_omitted, 200_000);
        assert!(listed > 30_000, "{listed}");
    }
}

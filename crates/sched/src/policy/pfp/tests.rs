//! pfp against the streaming greedy it had before its per-port orders ([`Reference`]): a
//! small world drives both through the same decisions and hand-ons on random workloads, and
//! every rate and every change they report must be the same, bit for bit.

use coflowkit_model::Fabric;
use proptest::prelude::*;

use super::reference::Reference;
use super::Pfp;
use crate::alloc::{Budget, Freed};
use crate::machinery::Machinery;
use crate::{CoflowState, FlowCompletion, FlowState, Rates, Scheduler, Snapshot};

/// Both policies, each with its rates and its hand-on scratch.
struct Twins {
    new: Pfp,
    old: Reference,
    rates: [Rates; 2],
    freed: [Freed; 2],
}

fn bits(r: &Rates) -> Vec<Vec<u64>> {
    (r.per_coflow.iter())
        .map(|c| c.iter().map(|x| x.to_bits()).collect())
        .collect()
}

fn changed_bits(f: &Freed) -> Vec<(u32, u32, u64)> {
    f.changed
        .iter()
        .map(|&(c, i, a)| (c, i, a.to_bits()))
        .collect()
}

impl Twins {
    fn decide(&mut self, snap: &Snapshot) -> Result<(), TestCaseError> {
        for r in &mut self.rates {
            r.reset(snap.coflows);
        }
        self.new.allocate(snap, &mut self.rates[0]);
        self.old.allocate(snap, &mut self.rates[1]);
        prop_assert_eq!(bits(&self.rates[0]), bits(&self.rates[1]), "decision");
        for f in &mut self.freed {
            f.spare = Budget::full(snap.fabric);
            f.clear_ports();
        }
        Ok(())
    }

    fn hand_on(&mut self, snap: &Snapshot) -> Result<(), TestCaseError> {
        for f in &mut self.freed {
            f.changed.clear();
        }
        let [r0, r1] = &mut self.rates;
        let [f0, f1] = &mut self.freed;
        prop_assert!(self.new.redistribute(snap, r0, f0));
        prop_assert!(self.old.redistribute(snap, r1, f1));
        prop_assert_eq!(bits(r0), bits(r1), "hand-on at {}", snap.now_s);
        prop_assert_eq!(changed_bits(f0), changed_bits(f1));
        Ok(())
    }
}

/// Replay `coflows` (sorted by arrival) on `fabric` as the simulator does: a decision at every
/// arrival and coflow end, a hand-on at every other flow end; bytes as of the last decision,
/// a flow whose rate a hand-on changed rewritten as if it had moved at its new rate since.
fn replay(fabric: &Fabric, mut pending: Vec<CoflowState>) -> Result<usize, TestCaseError> {
    pending.reverse();
    let mut t = Twins {
        new: Pfp::new(FlowCompletion::Redistribute),
        old: Reference::new(FlowCompletion::Redistribute),
        rates: Default::default(),
        freed: Default::default(),
    };
    let mut active: Vec<CoflowState> = Vec::new();
    let (mut now, mut synced) = (0.0f64, 0.0f64);
    let mut hand_ons = 0;
    for _ in 0..10_000 {
        // A decision at `now`: bytes up to date, finished flows and coflows gone, arrivals in.
        for (c, r) in active.iter_mut().zip(&t.rates[0].per_coflow) {
            for (f, &rate) in c.flows.iter_mut().zip(r) {
                let step = (rate * (now - synced)).min(f.remaining_bytes);
                f.remaining_bytes -= step;
                f.sent_bytes += step;
            }
            c.flows.retain(|f| f.remaining_bytes > 1e-9);
        }
        active.retain(|c| !c.flows.is_empty());
        while pending.last().is_some_and(|c| c.arrival_s <= now) {
            active.push(pending.pop().expect("checked"));
        }
        synced = now;
        if active.is_empty() {
            match pending.last() {
                Some(c) => {
                    now = c.arrival_s;
                    continue;
                }
                None => return Ok(hand_ons),
            }
        }
        t.decide(&snap(fabric, now, &active))?;
        // Flow ends until a coflow ends or one arrives.
        loop {
            let mut due = f64::INFINITY;
            for (c, r) in active.iter().zip(&t.rates[0].per_coflow) {
                for (f, &rate) in c.flows.iter().zip(r) {
                    if rate > 0.0 && f.remaining_bytes > 0.0 {
                        due = due.min(synced + f.remaining_bytes / rate);
                    }
                }
            }
            let arrival = pending.last().map_or(f64::INFINITY, |c| c.arrival_s);
            if arrival <= due {
                now = arrival;
                break;
            }
            prop_assert!(due.is_finite(), "stalled at {}", now);
            now = due;
            let mut coflow_done = false;
            for (ci, c) in active.iter_mut().enumerate() {
                for (fi, f) in c.flows.iter_mut().enumerate() {
                    let rate = t.rates[0].per_coflow[ci][fi];
                    let at = synced + f.remaining_bytes / rate;
                    if rate > 0.0 && f.remaining_bytes > 0.0 && at <= due * (1.0 + 1e-12) {
                        f.sent_bytes += f.remaining_bytes;
                        f.remaining_bytes = 0.0;
                        for r in &mut t.rates {
                            r.per_coflow[ci][fi] = 0.0;
                        }
                    }
                }
                coflow_done |= c.flows.iter().all(|f| f.remaining_bytes <= 0.0);
            }
            if coflow_done {
                break;
            }
            t.hand_on(&snap(fabric, now, &active))?;
            hand_ons += 1;
            for &(ci, fi, add) in &t.freed[0].changed {
                let f = &mut active[ci as usize].flows[fi as usize];
                f.remaining_bytes += add * (now - synced);
                f.sent_bytes -= add * (now - synced);
            }
        }
    }
    Ok(hand_ons)
}

fn snap<'a>(fabric: &'a Fabric, now_s: f64, coflows: &'a [CoflowState]) -> Snapshot<'a> {
    Snapshot {
        now_s,
        fabric,
        coflows,
    }
}

fn coflow(
    id: u64,
    arrival_s: f64,
    deadline: Option<f64>,
    flows: &[(u32, u32, f64)],
) -> CoflowState {
    CoflowState {
        id,
        arrival_s,
        deadline_s: deadline.map(|d| arrival_s + d),
        weight: 1.0,
        total_flows: flows.len(),
        sent_bytes: 0.0,
        max_flow_sent_bytes: 0.0,
        dag: None,
        flows: (flows.iter())
            .map(|&(src, dst, remaining_bytes)| FlowState {
                src,
                dst,
                sent_bytes: 0.0,
                remaining_bytes,
            })
            .collect(),
    }
}

/// Coflows sorted by arrival (ties by id), as the snapshot's order is.
fn sorted(mut cs: Vec<CoflowState>) -> Vec<CoflowState> {
    cs.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s).then(a.id.cmp(&b.id)));
    cs
}

type Spec = (f64, Option<f64>, Vec<(u32, u32, f64)>);

/// Busy fabrics: many pairs per uplink, heterogeneous capacities, some deadlines.
fn workload() -> impl Strategy<Value = (Fabric, Vec<CoflowState>)> {
    (2u32..9).prop_flat_map(|ports| {
        let flow = (0..ports, 0..ports, 0.01f64..8.0);
        let spec = (
            0.0f64..6.0,
            prop::option::of(0.5f64..10.0),
            prop::collection::vec(flow, 1..12),
        );
        let caps = prop::collection::vec(0.5f64..2.0, 2 * ports as usize);
        (prop::collection::vec(spec, 1..10), caps).prop_map(move |(cs, caps)| {
            let (up, down) = caps.split_at(ports as usize);
            let fabric = Fabric {
                up_bytes_per_s: up.to_vec(),
                down_bytes_per_s: down.to_vec(),
            };
            let cs = (cs.into_iter().enumerate())
                .map(|(i, (a, d, fs)): (usize, Spec)| coflow(i as u64 + 1, a, d, &fs))
                .collect();
            (fabric, sorted(cs))
        })
    })
}

/// Whole sizes and arrivals on unit ports: ties everywhere, broken by the keys.
fn ties() -> impl Strategy<Value = (Fabric, Vec<CoflowState>)> {
    (2u32..8).prop_flat_map(|ports| {
        let flow = (0..ports, 0..ports, 1u32..6);
        let spec = (0u32..6, prop::collection::vec(flow, 1..10));
        prop::collection::vec(spec, 1..10).prop_map(move |cs| {
            let cs = (cs.into_iter().enumerate())
                .map(|(i, (a, fs))| {
                    let fs: Vec<_> = fs.iter().map(|&(s, d, b)| (s, d, b as f64)).collect();
                    coflow(i as u64 + 1, a as f64, None, &fs)
                })
                .collect();
            (Fabric::uniform(ports as usize, 1.0), sorted(cs))
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn per_port_greedy_is_the_streaming_greedy((fabric, cs) in workload()) {
        replay(&fabric, cs)?;
    }

    #[test]
    fn per_port_greedy_is_the_streaming_greedy_on_ties((fabric, cs) in ties()) {
        replay(&fabric, cs)?;
    }
}

#[test]
fn the_replay_hands_on() {
    // The test above must exercise hand-ons, not only decisions: one coflow of three flows
    // on a shared uplink ends them one at a time.
    let cs = vec![coflow(
        1,
        0.0,
        None,
        &[(0, 1, 1.0), (0, 2, 2.0), (0, 3, 3.0)],
    )];
    let hand_ons = replay(&Fabric::uniform(4, 1.0), cs).expect("same rates");
    assert_eq!(hand_ons, 2);
}

proptest! {
    #[test]
    fn the_grain_rounding_is_round(x in 0.0f64..1e20, bits in any::<u64>()) {
        prop_assert_eq!(super::round(x), x.round() as u64);
        // Any non-negative float, NaN aside: subnormals, huge values, exact halves.
        let y = f64::from_bits(bits >> 1);
        if !y.is_nan() {
            prop_assert_eq!(super::round(y), y.round() as u64, "{}", y);
        }
    }
}

#[test]
fn the_grain_rounding_breaks_ties_up() {
    for x in [
        0.0,
        0.5,
        1.5,
        2.5,
        0.49999999999999994,
        4503599627370495.5,
        1e300,
        f64::INFINITY,
    ] {
        assert_eq!(super::round(x), x.round() as u64, "{x}");
    }
}

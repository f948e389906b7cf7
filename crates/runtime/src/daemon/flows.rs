//! The flows a daemon is sending and the rate each may use. While the coordinator is reachable
//! the rates are the coordinator's (a new flow waits at rate 0 for its first assignment); when it
//! is not, every flow gets an equal share of the NIC (fallback fair sharing).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use coflowkit_testbed::htb::{minor_of, Class};

use crate::proto::{FlowInfo, RateUpdate, TenantCaps};

/// The htb classes of the caps pushed for this uplink.
fn classes(caps: Option<&TenantCaps>) -> Vec<Class> {
    caps.map_or_else(Vec::new, |caps| {
        (caps.coflows.iter())
            .map(|c| Class {
                minor: minor_of(c.coflow),
                guarantee: c.guarantee_bytes_per_s,
                cap: c.cap_bytes_per_s,
                weight: c.weight,
            })
            .collect()
    })
}

pub struct Flow {
    pub info: FlowInfo,
    pub sent: Arc<AtomicU64>,
    rate: watch::Sender<f64>,
    /// Last coordinator rate, if it assigned one.
    assigned: Option<f64>,
}

/// A flow's end, waiting to be reported.
#[derive(Clone, Copy)]
pub struct Ended {
    pub flow: u64,
    pub sent: u64,
    pub failed: bool,
}

struct Inner {
    next: u64,
    flows: HashMap<u64, Flow>,
    coordinated: bool,
    ended: Vec<Ended>,
    round: u64,
    /// hug, drf, psp: the coflows' reservations and caps on this uplink (tenant_pace.rs).
    tenant: Option<TenantCaps>,
}

pub struct Flows {
    nic_bytes_per_s: f64,
    inner: Mutex<Inner>,
    /// With htb: where the caps go as kernel classes (daemon/mod.rs); the kernel then shares
    /// the uplink among the capped coflows and this daemon paces their flows only at the
    /// coordinator's rate (their downlink ceilings under `tenant_local`).
    htb: Option<std::sync::mpsc::Sender<Vec<Class>>>,
}

impl Flows {
    pub fn new(nic_bytes_per_s: f64) -> Flows {
        Flows {
            nic_bytes_per_s,
            inner: Mutex::new(Inner {
                next: 1,
                flows: HashMap::new(),
                coordinated: false,
                ended: Vec::new(),
                round: 0,
                tenant: None,
            }),
            htb: None,
        }
    }

    /// Enforce caps as htb classes sent to `to` rather than by pacing.
    pub fn enforce_with(&mut self, to: std::sync::mpsc::Sender<Vec<Class>>) {
        self.htb = Some(to);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Start a flow; returns its number, its byte counter and its rate.
    pub fn start(&self, mut info: FlowInfo) -> (u64, Arc<AtomicU64>, watch::Receiver<f64>) {
        let mut g = self.lock();
        let id = g.next;
        g.next += 1;
        info.flow = id;
        let (tx, rx) = watch::channel(0.0);
        let sent = Arc::new(AtomicU64::new(0));
        g.flows.insert(
            id,
            Flow {
                info,
                sent: sent.clone(),
                rate: tx,
                assigned: None,
            },
        );
        self.apply(&mut g);
        (id, sent, rx)
    }

    pub fn end(&self, id: u64, failed: bool) {
        let mut g = self.lock();
        if let Some(f) = g.flows.remove(&id) {
            let sent = f.sent.load(Ordering::Relaxed);
            g.ended.push(Ended {
                flow: id,
                sent,
                failed,
            });
        }
        self.apply(&mut g);
    }

    /// The coordinator's table; returns the coflows it says are unregistered.
    pub fn assign(&self, u: &RateUpdate) -> HashSet<u64> {
        let mut g = self.lock();
        if u.round < g.round {
            return HashSet::new();
        }
        g.round = u.round;
        g.coordinated = true;
        if let Some(to) = &self.htb {
            if g.tenant != u.tenant {
                let _ = to.send(classes(u.tenant.as_ref()));
            }
        }
        g.tenant = u.tenant.clone();
        for r in &u.rates {
            if let Some(f) = g.flows.get_mut(&r.flow) {
                f.assigned = Some(r.bytes_per_s.max(0.0));
            }
        }
        self.apply(&mut g);
        u.unregistered.iter().copied().collect()
    }

    /// Lost the coordinator: fair share until it is back.
    pub fn fall_back(&self) {
        let mut g = self.lock();
        if g.coordinated {
            tracing::warn!("coordinator lost: falling back to fair sharing");
        }
        g.coordinated = false;
        g.round = 0;
        self.apply(&mut g);
    }

    fn apply(&self, g: &mut Inner) {
        let share = self.nic_bytes_per_s / g.flows.len().max(1) as f64;
        let coordinated = g.coordinated;
        let paced = match (&g.tenant, coordinated) {
            // The kernel shares the uplink; the coordinator's rates stand.
            (Some(_), true) if self.htb.is_some() => None,
            (Some(caps), true) => {
                let given: Vec<(u64, f64)> = (g.flows.values())
                    .map(|f| (f.info.coflow, f.assigned.unwrap_or(0.0)))
                    .collect();
                Some(super::tenant_pace::pace(&given, caps, self.nic_bytes_per_s))
            }
            _ => None,
        };
        for (i, f) in g.flows.values().enumerate() {
            let r = if let Some(p) = &paced {
                p[i]
            } else if coordinated {
                f.assigned.unwrap_or(0.0)
            } else {
                share
            };
            f.rate.send_if_modified(|old| {
                let changed = *old != r;
                *old = r;
                changed
            });
        }
    }

    /// Every running flow with its bytes sent (for re-registration).
    pub fn running(&self) -> Vec<FlowInfo> {
        self.lock()
            .flows
            .values()
            .map(|f| FlowInfo {
                sent_bytes: f.sent.load(Ordering::Relaxed),
                ..f.info.clone()
            })
            .collect()
    }

    /// Progress of running flows and the ends not yet reported (taken).
    pub fn progress(&self) -> (Vec<(u64, u64)>, Vec<Ended>) {
        let mut g = self.lock();
        let running = g
            .flows
            .iter()
            .map(|(&id, f)| (id, f.sent.load(Ordering::Relaxed)))
            .collect();
        (running, std::mem::take(&mut g.ended))
    }

    /// Put back ends whose report failed.
    pub fn unreport(&self, ended: Vec<Ended>) {
        self.lock().ended.extend(ended);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::FlowRate;

    #[test]
    fn fallback_shares_the_nic_and_coordinator_rates_win() {
        let flows = Flows::new(100.0);
        let (a, _, ra) = flows.start(FlowInfo::default());
        let (b, _, rb) = flows.start(FlowInfo::default());
        assert_eq!(*ra.borrow(), 50.0);
        assert_eq!(*rb.borrow(), 50.0);
        flows.assign(&RateUpdate {
            round: 1,
            rates: vec![FlowRate {
                flow: a,
                bytes_per_s: 80.0,
            }],
            unregistered: vec![],
            tenant: None,
        });
        assert_eq!(*ra.borrow(), 80.0);
        assert_eq!(*rb.borrow(), 0.0, "unassigned flows wait");
        flows.fall_back();
        assert_eq!(*rb.borrow(), 50.0);
        flows.end(a, false);
        assert_eq!(*rb.borrow(), 100.0);
        let (_, ended) = flows.progress();
        assert_eq!(ended.len(), 1);
        assert_eq!(ended[0].flow, a);
        let _ = b;
    }
}

//! HUG, DRF and PS-P as inter-coflow schedulers (issue 22): every active coflow is a tenant
//! whose correlation vector comes from MADD (its remaining bytes per uplink and downlink,
//! `tenant::madd`), the policy in `tenant` gives it a share of every port, and that share is
//! split among its flows in proportion to their remaining bytes; a flow gets the smaller of its
//! two ends' parts. Spare a coflow is allowed on a port it cannot use (its flows are held back
//! by their other end) stays idle: a MADD coflow gains nothing from it.
//!
//! A coflow whose sizes are unknown (non-clairvoyant: `remaining_bytes` infinite) uses the
//! vector it reported on the [`Board`] (the client API's `report_vector`), if any; its share of
//! each link is then split among its flows by max-min within those shares (its flows' sizes are
//! unknown, the vector says nothing per flow). Without a report its vector is the default
//! `NcVector` chooses (`tenant::estimate`): one unit per unfinished flow on each of its ends
//! (the default; docs/hug.md, choice 13; split among its flows like equal sizes), all-ones on
//! the links it uses, or its flows' measured rates (both split by max-min, as a report).

use std::collections::HashMap;

use crate::alloc::{Budget, Demand, WaterFill};
use crate::machinery::Machinery;
use crate::tenant::board::{Board, LinkShare, Reported, Shares};
use crate::tenant::estimate::{NcVector, RateEstimator, RATE_WINDOW_S};
use crate::tenant::{drf, hug, psp, Allocation, HugOptions, Links, Mode, SparseSpec, Tenants};
use crate::{CoflowState, Decision, Rates, Scheduler, Snapshot};

/// Which allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TenantPolicy {
    Hug(HugOptions),
    Drf,
    Psp,
}

#[derive(Debug)]
pub struct TenantShare {
    policy: TenantPolicy,
    /// Reported vectors in, the last shares out (the coordinator's); `None` in the simulator.
    board: Option<Board>,
    fill: WaterFill,
    /// The vector of a non-clairvoyant coflow without a report.
    nc_vector: NcVector,
    rates: RateEstimator,
}

impl TenantShare {
    pub fn new(policy: TenantPolicy) -> Self {
        TenantShare {
            policy,
            board: None,
            fill: WaterFill::default(),
            nc_vector: NcVector::default(),
            rates: RateEstimator::new(RATE_WINDOW_S),
        }
    }

    /// What a non-clairvoyant coflow without a reported vector counts as.
    pub fn with_nc_vector(mut self, v: NcVector) -> Self {
        self.nc_vector = v;
        self
    }

    /// Read reported vectors from `board` and write every decision's shares to it.
    pub fn with_board(policy: TenantPolicy, board: Board) -> Self {
        TenantShare {
            board: Some(board),
            ..TenantShare::new(policy)
        }
    }
}

/// The tenants of a snapshot: the coflows with bytes left (`members`, indices into the
/// snapshot), their specs, and which of them have a vector that says nothing per flow (a
/// report, all-ones or measured rates), whose link shares are split among their flows by
/// max-min.
struct Built {
    members: Vec<usize>,
    specs: Vec<SparseSpec>,
    maxmin: Vec<bool>,
}

fn tenants_of(
    coflows: &[CoflowState],
    ports: usize,
    reports: &HashMap<u64, Reported>,
    nc: NcVector,
    rates: &RateEstimator,
) -> Built {
    let mut b = Built {
        members: Vec::new(),
        specs: Vec::new(),
        maxmin: Vec::new(),
    };
    let mut bytes = vec![0.0; 2 * ports];
    for (c, co) in coflows.iter().enumerate() {
        let live = || co.flows.iter().filter(|fl| fl.remaining_bytes > 0.0);
        if live().next().is_none() {
            continue;
        }
        let unknown = live().any(|fl| !fl.remaining_bytes.is_finite());
        let report = (reports.get(&co.id))
            .filter(|r| unknown && r.iter().all(|&(l, _)| (l as usize) < 2 * ports));
        // Per flow (in `co.flows` order): its demand on both its ends, and whether the vector
        // says nothing per flow.
        let (per_flow, maxmin): (Vec<f64>, bool) = match (report, unknown, nc) {
            (Some(_), _, _) => (Vec::new(), true),
            (None, true, NcVector::Ones) => (unit_demands(co), true),
            (None, true, NcVector::Rates) => match rates.per_flow(co) {
                Some(r) => (r, true),
                None => (unit_demands(co), false),
            },
            _ => (unit_demands(co), false),
        };
        let entries = match report {
            Some(r) => r.clone(),
            None => {
                let mut touched = Vec::new();
                for (fl, &d) in co.flows.iter().zip(&per_flow) {
                    if fl.remaining_bytes <= 0.0 {
                        continue;
                    }
                    for l in [fl.src as usize, ports + fl.dst as usize] {
                        if bytes[l] == 0.0 {
                            touched.push(l as u32);
                        }
                        bytes[l] += d.max(f64::MIN_POSITIVE);
                    }
                }
                touched.sort_unstable();
                let ones = unknown && report.is_none() && nc == NcVector::Ones;
                // All-ones: the same on every link however many flows use it, each side
                // scaled to sum to 1 so that uplinks and downlinks balance.
                let n_up = touched.partition_point(|&l| (l as usize) < ports);
                let side = |l: u32| {
                    let n = if (l as usize) < ports {
                        n_up
                    } else {
                        touched.len() - n_up
                    };
                    1.0 / n as f64
                };
                touched
                    .iter()
                    .map(|&l| {
                        let v = std::mem::take(&mut bytes[l as usize]);
                        (l, if ones { side(l) } else { v })
                    })
                    .collect()
            }
        };
        b.specs.push(SparseSpec {
            name: co.id.to_string(),
            entries,
            weight: if co.weight > 0.0 { co.weight } else { 1.0 },
            bounded: false,
        });
        b.members.push(c);
        b.maxmin.push(maxmin);
    }
    b
}

/// Every flow's remaining bytes, or one unit when they are unknown (finished flows 0).
fn unit_demands(co: &CoflowState) -> Vec<f64> {
    (co.flows.iter())
        .map(|fl| {
            if fl.remaining_bytes > 0.0 {
                demand(fl.remaining_bytes)
            } else {
                0.0
            }
        })
        .collect()
}

impl Scheduler for TenantShare {
    fn name(&self) -> &str {
        match self.policy {
            TenantPolicy::Hug(_) => "hug",
            TenantPolicy::Drf => "drf",
            TenantPolicy::Psp => "psp",
        }
    }

    /// Vectors from MADD read the flows' remaining bytes.
    fn clairvoyant(&self) -> bool {
        true
    }

    fn allocate(&mut self, snap: &Snapshot, rates: &mut Rates) -> Decision {
        let f = snap.fabric;
        let ports = f.ports();
        // Links need positive capacities; a dead port gets nothing either way.
        let caps: Vec<f64> = (f.up_bytes_per_s.iter().chain(&f.down_bytes_per_s))
            .map(|&c| c.max(f64::MIN_POSITIVE))
            .collect();
        let Ok(links) = Links::fabric(ports, caps.clone()) else {
            return Decision::none();
        };
        let reports = self.board.as_ref().map(Board::reports).unwrap_or_default();
        if self.nc_vector == NcVector::Rates {
            self.rates.observe(snap.now_s, snap.coflows);
        }
        let (nc, est) = (self.nc_vector, &self.rates);
        let mut built = tenants_of(snap.coflows, ports, &reports, nc, est);
        if built.specs.is_empty() {
            self.publish(Shares::default());
            return Decision::none();
        }
        // Reports are checked when made, but against the fabric of then: if one no longer
        // fits, every coflow falls back to its own default rather than nobody being served.
        let t = match Tenants::from_sparse(links.clone(), &built.specs) {
            Ok(t) => t,
            Err(_) if built.maxmin.iter().any(|&r| r) => {
                built = tenants_of(snap.coflows, ports, &HashMap::new(), nc, est);
                match Tenants::from_sparse(links, &built.specs) {
                    Ok(t) => t,
                    Err(_) => return Decision::none(),
                }
            }
            Err(_) => return Decision::none(),
        };
        let a = match self.policy {
            TenantPolicy::Hug(o) => hug(&t, o),
            TenantPolicy::Drf => drf(&t),
            TenantPolicy::Psp => psp(&t),
        };
        for (k, &c) in built.members.iter().enumerate() {
            let co = &snap.coflows[c];
            let out = &mut rates.per_coflow[c];
            let shares = t.tenants[k].links.iter().zip(&a.consumption[k]);
            if built.maxmin[k] {
                // Its bytes/s on each link, shared by max-min among its flows.
                let mut budget = Budget {
                    up: vec![0.0; ports],
                    down: vec![0.0; ports],
                    floor: caps.iter().fold(0.0f64, |m, &c| m.max(c))
                        * crate::alloc::budget::FULL_FRACTION,
                    ..Budget::default()
                };
                for (&l, share) in shares {
                    let l = l as usize;
                    let side = if l < ports {
                        &mut budget.up[l]
                    } else {
                        &mut budget.down[l - ports]
                    };
                    *side = share * caps[l];
                }
                let live: Vec<usize> = (0..co.flows.len())
                    .filter(|&i| co.flows[i].remaining_bytes > 0.0)
                    .collect();
                let demands: Vec<Demand> = (live.iter())
                    .map(|&i| Demand {
                        src: co.flows[i].src,
                        dst: co.flows[i].dst,
                        weight: 1.0,
                    })
                    .collect();
                let mut got = vec![0.0; live.len()];
                self.fill.fill_rates(&demands, &budget, &mut got);
                for (&i, r) in live.iter().zip(got) {
                    out[i] = r;
                }
                continue;
            }
            // Bytes per second this coflow may move per byte it has left on each link.
            let mut per_byte = vec![0.0; 2 * ports];
            for ((&l, share), &(_, b)) in shares.zip(&built.specs[k].entries) {
                per_byte[l as usize] = share * caps[l as usize] / b;
            }
            for (r, fl) in out.iter_mut().zip(&co.flows) {
                if fl.remaining_bytes > 0.0 {
                    let up = per_byte[fl.src as usize];
                    let down = per_byte[ports + fl.dst as usize];
                    *r = demand(fl.remaining_bytes) * up.min(down);
                }
            }
        }
        if self.board.is_some() {
            let s = shares(self.policy, snap.coflows, &built.members, &t, &a, &caps);
            self.publish(s);
        }
        Decision::none()
    }
}

impl TenantShare {
    fn publish(&self, s: Shares) {
        if let Some(b) = &self.board {
            b.set_shares(s);
        }
    }
}

/// Every member's guarantee, cap and consumption per link in bytes/s (what the coordinator
/// pushes to the daemons).
fn shares(
    policy: TenantPolicy,
    coflows: &[CoflowState],
    members: &[usize],
    t: &Tenants,
    a: &Allocation,
    caps: &[f64],
) -> Shares {
    let mut out = Shares {
        p_star: a.p_star,
        coflows: HashMap::new(),
    };
    for (k, &c) in members.iter().enumerate() {
        // HUG's cap is the tenant's share of its own bottleneck (where d = 1), the largest of
        // its guarantees (docs/hug.md, choice 1).
        let top = a.guarantee[k].iter().fold(0.0f64, |m, &g| m.max(g));
        let links = t.tenants[k].links.iter().enumerate().map(|(j, &l)| {
            let (g, use_) = (a.guarantee[k][j], a.consumption[k][j]);
            let cap = match policy {
                TenantPolicy::Hug(o) if o.mode == Mode::NonCooperative => top,
                TenantPolicy::Hug(_) => 1.0,
                TenantPolicy::Drf => g,
                TenantPolicy::Psp => use_,
            };
            let cap_l = caps[l as usize];
            LinkShare {
                link: l,
                guarantee_bytes_per_s: g * cap_l,
                cap_bytes_per_s: cap.max(use_) * cap_l,
                consumption_bytes_per_s: use_ * cap_l,
                weight: t.tenants[k].weight,
            }
        });
        out.coflows.insert(coflows[c].id, links.collect());
    }
    out
}

impl Machinery for TenantShare {}

/// A flow's demand: its remaining bytes, or one unit when they are unknown.
fn demand(remaining_bytes: f64) -> f64 {
    if remaining_bytes.is_finite() {
        remaining_bytes
    } else {
        1.0
    }
}

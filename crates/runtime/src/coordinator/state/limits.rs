//! How much one coordinator records, so that no client (a hostile one included) can make every
//! decision round slow: a round's cost grows with the coflows and flows recorded (20,000 coflows
//! of one flow each made rounds of 0.9 s in a debug build). Requests past a limit are refused
//! whole with `RESOURCE_EXHAUSTED` naming it, and counted in `/metrics`.

use std::collections::HashMap;

use super::State;
use crate::proto::{FlowInfo, StoredObject};

/// The bounds; see docs/reliability.md ("Coordinator limits").
#[derive(Debug, Clone, PartialEq)]
pub struct RegistryLimits {
    /// Coflows registered at once, those rebuilt from daemons' reports included.
    pub max_coflows: usize,
    /// Flows one coflow may have (gets started), across all daemons.
    pub max_flows_per_coflow: usize,
    /// Flows one daemon may send that are recorded at once (until their coflow unregisters).
    pub max_flows_per_daemon: usize,
    /// Put objects one coflow may have recorded, across all daemons (adversarial pass 33, B7).
    pub max_objects_per_coflow: usize,
    /// Put objects one daemon may have recorded at once (until their coflows unregister).
    pub max_objects_per_daemon: usize,
}

impl Default for RegistryLimits {
    fn default() -> Self {
        // Far above the largest workloads replayed here (the Facebook trace: 526 coflows,
        // at most 150 x 150 flows per coflow, about 5,000 flows per machine).
        RegistryLimits {
            max_coflows: 8192,
            max_flows_per_coflow: 65_536,
            max_flows_per_daemon: 65_536,
            // A daemon's re-registration lists its objects in one 4 MiB message: about
            // 130,000 objects with short data ids fit (see `daemon::store`).
            max_objects_per_coflow: 65_536,
            max_objects_per_daemon: 65_536,
        }
    }
}

/// Which limit a refused request would have passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Coflows,
    FlowsPerCoflow,
    FlowsPerDaemon,
    ObjectsPerCoflow,
    ObjectsPerDaemon,
}

impl Limit {
    pub const ALL: [Limit; 5] = [
        Limit::Coflows,
        Limit::FlowsPerCoflow,
        Limit::FlowsPerDaemon,
        Limit::ObjectsPerCoflow,
        Limit::ObjectsPerDaemon,
    ];

    /// Its label in `/metrics`.
    pub fn name(self) -> &'static str {
        match self {
            Limit::Coflows => "coflows",
            Limit::FlowsPerCoflow => "flows_per_coflow",
            Limit::FlowsPerDaemon => "flows_per_daemon",
            Limit::ObjectsPerCoflow => "objects_per_coflow",
            Limit::ObjectsPerDaemon => "objects_per_daemon",
        }
    }
}

/// A refusal: the limit and a message naming it.
#[derive(Debug, Clone, PartialEq)]
pub struct Full {
    pub limit: Limit,
    pub why: String,
}

impl State {
    pub fn limits(&self) -> &RegistryLimits {
        &self.limits
    }

    /// Whether one more coflow may be registered.
    pub fn room_for_coflow(&self) -> Result<(), Full> {
        let max = self.limits.max_coflows;
        if self.rec.coflows.len() >= max {
            return Err(Full {
                limit: Limit::Coflows,
                why: format!(
                    "this coordinator holds at most {max} coflows at once (--max-coflows); \
                     unregister finished ones"
                ),
            });
        }
        Ok(())
    }

    /// Whether daemon `port` may record the flow `f` (a new coflow counted if `f` names an
    /// unknown one).
    pub fn room_for_flow(&self, port: usize, f: &FlowInfo) -> Result<(), Full> {
        if self.rec.flows.contains_key(&(port, f.flow)) {
            return Ok(()); // a restart of a recorded flow replaces it
        }
        self.room_for_report(port, &[], std::slice::from_ref(f), false)
    }

    /// Whether daemon `port` may record the object `o` (a new coflow counted if `o` names an
    /// unknown one); one it recorded already is replaced.
    pub fn room_for_object(&self, port: usize, o: &StoredObject) -> Result<(), Full> {
        let key = (o.coflow, o.data_id.clone());
        if self
            .rec
            .objects
            .get(&key)
            .is_some_and(|&(src, _)| src == port)
        {
            return Ok(());
        }
        self.room_for_report(port, std::slice::from_ref(o), &[], false)
    }

    /// Whether daemon `port` (`usize::MAX`: a new one) may report `objects` and `flows`;
    /// `replace`: they replace what it reported before (a registration).
    pub fn room_for_report(
        &self,
        port: usize,
        objects: &[StoredObject],
        flows: &[FlowInfo],
        replace: bool,
    ) -> Result<(), Full> {
        let l = &self.limits;
        let rec = &self.rec;
        let known = |c: u64| rec.coflows.contains_key(&c) || rec.unregistered.contains(&c);
        let mut new_coflows: Vec<u64> = (objects.iter().map(|o| o.coflow))
            .chain(flows.iter().map(|f| f.coflow))
            .filter(|&c| !known(c))
            .collect();
        new_coflows.sort_unstable();
        new_coflows.dedup();
        if rec.coflows.len() + new_coflows.len() > l.max_coflows {
            return Err(Full {
                limit: Limit::Coflows,
                why: format!(
                    "the report names {} coflows the coordinator does not know; it holds {} of \
                     at most {} (--max-coflows)",
                    new_coflows.len(),
                    rec.coflows.len(),
                    l.max_coflows
                ),
            });
        }
        let before = match rec.daemons.get(port) {
            Some(d) if !replace => d.flows,
            _ => 0,
        };
        if before + flows.len() > l.max_flows_per_daemon {
            return Err(Full {
                limit: Limit::FlowsPerDaemon,
                why: format!(
                    "daemon would send {} recorded flows, more than {} (--max-flows-per-daemon); \
                     unregister finished coflows",
                    before + flows.len(),
                    l.max_flows_per_daemon
                ),
            });
        }
        self.room_for_objects(port, objects, replace)?;
        let mut per: HashMap<u64, usize> = HashMap::new();
        for f in flows {
            *per.entry(f.coflow).or_default() += 1;
        }
        for (c, n) in per {
            let had = rec.coflows.get(&c).map_or(0, |c| {
                if replace {
                    c.flows.iter().filter(|k| k.0 != port).count()
                } else {
                    c.flows.len()
                }
            });
            if had + n > l.max_flows_per_coflow {
                return Err(Full {
                    limit: Limit::FlowsPerCoflow,
                    why: format!(
                        "coflow {c} would have {} flows, more than {} (--max-flows-per-coflow)",
                        had + n,
                        l.max_flows_per_coflow
                    ),
                });
            }
        }
        Ok(())
    }

    /// The object limits of [`State::room_for_report`].
    fn room_for_objects(
        &self,
        port: usize,
        objects: &[StoredObject],
        replace: bool,
    ) -> Result<(), Full> {
        if objects.is_empty() {
            return Ok(());
        }
        let l = &self.limits;
        let rec = &self.rec;
        let before = match rec.daemons.get(port) {
            Some(d) if !replace => d.objects as usize,
            _ => 0,
        };
        if before + objects.len() > l.max_objects_per_daemon {
            return Err(Full {
                limit: Limit::ObjectsPerDaemon,
                why: format!(
                    "daemon would hold {} recorded objects, more than {} \
                     (--max-objects-per-daemon); unregister finished coflows",
                    before + objects.len(),
                    l.max_objects_per_daemon
                ),
            });
        }
        let mut per: HashMap<u64, usize> = HashMap::new();
        for o in objects {
            *per.entry(o.coflow).or_default() += 1;
        }
        // A registration replaces the daemon's own objects: they do not count twice.
        let mine: HashMap<u64, usize> = if replace && port < rec.daemons.len() {
            let mut m = HashMap::new();
            for ((c, _), (src, _)) in &rec.objects {
                if *src == port && per.contains_key(c) {
                    *m.entry(*c).or_default() += 1;
                }
            }
            m
        } else {
            HashMap::new()
        };
        for (c, n) in per {
            let had = rec.objects_of(c) - mine.get(&c).copied().unwrap_or(0);
            if had + n > l.max_objects_per_coflow {
                return Err(Full {
                    limit: Limit::ObjectsPerCoflow,
                    why: format!(
                        "coflow {c} would have {} objects, more than {} \
                         (--max-objects-per-coflow)",
                        had + n,
                        l.max_objects_per_coflow
                    ),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(flow: u64, coflow: u64) -> FlowInfo {
        FlowInfo {
            flow,
            coflow,
            size_bytes: 10,
            ..Default::default()
        }
    }

    /// A re-registration replaces the daemon's flows (they do not count twice); flows counted
    /// per daemon go down as their coflow is unregistered.
    #[test]
    fn a_re_registration_replaces_and_unregistering_frees() {
        let limits = RegistryLimits {
            max_coflows: 2,
            max_flows_per_coflow: 3,
            max_flows_per_daemon: 3,
            ..Default::default()
        };
        let mut s = State::with_limits(1, limits);
        let flows = [flow(1, 7), flow(2, 7), flow(3, 8)];
        assert!(s.room_for_report(usize::MAX, &[], &flows, true).is_ok());
        let a = s.register_daemon(0.0, "a:1", 1.0, &[], &flows);
        assert_eq!(s.daemons()[a].flows, 3);
        assert!(s.room_for_report(a, &[], &flows, true).is_ok(), "replaces");
        let more = s.room_for_flow(a, &flow(4, 7)).unwrap_err();
        assert_eq!(more.limit, Limit::FlowsPerDaemon);
        assert!(s.room_for_flow(a, &flow(3, 8)).is_ok(), "already recorded");
        let third = s.room_for_flow(a, &flow(9, 99)).unwrap_err();
        assert_eq!(third.limit, Limit::Coflows);
        assert_eq!(s.room_for_coflow().unwrap_err().limit, Limit::Coflows);
        s.unregister(7);
        assert_eq!(s.daemons()[a].flows, 1);
        assert!(s.room_for_coflow().is_ok());
        // An unregistered coflow named again is not recreated: it does not count.
        assert!(s.room_for_report(a, &[], &[flow(5, 7)], false).is_ok());
        let b = s.register_daemon(0.0, "b:1", 1.0, &[], &[flow(1, 8), flow(2, 8)]);
        let full = s.room_for_flow(b, &flow(3, 8)).unwrap_err();
        assert_eq!(full.limit, Limit::FlowsPerCoflow);
        assert!(
            full.why.contains("coflow 8 would have 4 flows"),
            "{}",
            full.why
        );
    }

    fn object(coflow: u64, id: &str) -> StoredObject {
        StoredObject {
            coflow,
            data_id: id.into(),
            size_bytes: 1,
            ..Default::default()
        }
    }

    /// Adversarial pass 33, B7: objects reported by daemons are bounded per coflow and per
    /// daemon as flows are; a re-report or a re-registration replaces, unregistering frees.
    #[test]
    fn objects_are_bounded_per_coflow_and_per_daemon() {
        let limits = RegistryLimits {
            max_objects_per_coflow: 3,
            max_objects_per_daemon: 4,
            ..Default::default()
        };
        let mut s = State::with_limits(1, limits);
        let a = s.register_daemon(0.0, "a:1", 1e6, &[], &[]);
        let b = s.register_daemon(0.0, "b:1", 1e6, &[], &[]);
        for id in ["x", "y", "z"] {
            let o = object(7, id);
            assert!(s.room_for_object(a, &o).is_ok());
            s.put_done(0.0, a, &o);
        }
        assert!(s.room_for_object(a, &object(7, "z")).is_ok(), "replaces");
        let full = s.room_for_object(b, &object(7, "w")).unwrap_err();
        assert_eq!(full.limit, Limit::ObjectsPerCoflow);
        assert!(
            full.why.contains("--max-objects-per-coflow"),
            "{}",
            full.why
        );
        s.put_done(0.0, a, &object(8, "x"));
        let full = s.room_for_object(a, &object(9, "x")).unwrap_err();
        assert_eq!(full.limit, Limit::ObjectsPerDaemon);
        assert!(
            full.why.contains("--max-objects-per-daemon"),
            "{}",
            full.why
        );
        // A re-registration with the same objects replaces them.
        let same: Vec<_> = ["x", "y", "z"].iter().map(|i| object(7, i)).collect();
        assert!(s.room_for_report(a, &same, &[], true).is_ok());
        s.unregister(7);
        assert!(s.room_for_object(a, &object(9, "x")).is_ok());
        assert!(s.room_for_object(b, &object(8, "w")).is_ok());
    }
}

//! The coordinator's records: daemons (the fabric's ports), coflows, their flows and where
//! each put object lives, as the daemons and clients report them. Every handler takes the
//! time (`now`, seconds since the coordinator started) it is told; nothing here reads a clock.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use coflowkit_model::Fabric;
use coflowkit_sched::{DagError, DagIds};

use crate::proto::{FlowInfo, StoredObject};

/// How many unregistered coflow ids every rate update repeats (so a daemon that missed an update
/// still drops their data; the list is idempotent).
const UNREGISTERED_MEMORY: usize = 256;

pub struct Daemon {
    pub addr: String,
    pub nic_bytes_per_s: f64,
    pub connected: bool,
    /// Bumped on every (re-)subscription so a stale stream's end does not disconnect a new one.
    pub session: u64,
    pub objects: u32,
    /// Flows it sends that the coordinator records (until their coflow is unregistered).
    pub flows: usize,
    /// Forgotten after staying disconnected (see [`Records::forget_disconnected`]): its port
    /// is free for the next new daemon, and no flow or object refers to it.
    pub gone: bool,
    /// When a forgetting sweep first saw it disconnected (`None` while connected).
    pub(super) unseen_since_s: Option<f64>,
}

pub struct CoflowRec {
    pub id: u64,
    pub name: String,
    pub arrival_s: f64,
    pub deadline_s: Option<f64>,
    pub weight: f64,
    pub num_flows: u32,
    pub parents: Vec<u64>,
    /// Flows in the order their gets started.
    pub flows: CoflowFlows,
    /// Became READY (all hinted gets started) at some point.
    pub ready_seen: bool,
    /// Registered non-clairvoyant under a clairvoyant multi-tenant policy (hug, drf, psp): its
    /// flows' sizes stay hidden and its reported vector (if any) stands for them.
    pub sizes_hidden: bool,
}

impl CoflowRec {
    /// All hinted gets started: the scheduler considers it.
    pub fn ready(&self) -> bool {
        self.flows.len() >= self.num_flows as usize
    }
}

/// A coflow's flows in the order their gets started, and how many have not ended: a flow's
/// removal and a coflow's "all ended" check cost O(log n) and O(1), not a scan of the coflow
/// (a scan per event made 100,000 flows of one coflow quadratic).
#[derive(Default)]
pub struct CoflowFlows {
    by_start: BTreeMap<u64, FlowKey>,
    next: u64,
    running: usize,
}

impl CoflowFlows {
    pub fn iter(&self) -> impl Iterator<Item = &FlowKey> + '_ {
        self.by_start.values()
    }

    pub fn len(&self) -> usize {
        self.by_start.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_start.is_empty()
    }

    /// Flows not ended.
    pub fn running(&self) -> usize {
        self.running
    }

    /// A new flow, last in order (or at `seq`, the place it had); returns its place.
    fn add(&mut self, key: FlowKey, seq: Option<u64>, done: bool) -> u64 {
        let seq = seq.unwrap_or_else(|| {
            self.next += 1;
            self.next
        });
        self.by_start.insert(seq, key);
        self.running += usize::from(!done);
        seq
    }

    fn remove(&mut self, seq: u64, done: bool) {
        if self.by_start.remove(&seq).is_some() {
            self.running -= usize::from(!done);
        }
    }

    fn ended(&mut self) {
        self.running = self.running.saturating_sub(1);
    }
}

impl<'a> IntoIterator for &'a CoflowFlows {
    type Item = &'a FlowKey;
    type IntoIter = std::collections::btree_map::Values<'a, u64, FlowKey>;
    fn into_iter(self) -> Self::IntoIter {
        self.by_start.values()
    }
}

/// A flow is named by its source daemon and that daemon's flow number (survives restarts).
pub type FlowKey = (usize, u64);

pub struct FlowRec {
    pub coflow: u64,
    pub data_id: String,
    pub src: usize,
    /// Receiving daemon, or `None` for a receiver outside the daemon set.
    pub dst: Option<usize>,
    pub size_bytes: f64,
    /// The get started while the put still streamed in: `size_bytes` is not known until the
    /// put's completion is reported. Clairvoyant policies do not see the flow until then.
    pub size_pending: bool,
    pub sent_bytes: f64,
    pub done: bool,
    /// The rate of the last decision (or hand-on).
    pub rate: f64,
    /// Its place in the last decision's snapshot (coflow, flow), while it runs.
    pub(super) slot: Option<(u32, u32)>,
    /// Its place in its coflow's [`CoflowFlows`] (`None`: its coflow is not registered).
    pub(super) seq: Option<u64>,
}

/// What changed since the last round: the events the decision clock is told about.
#[derive(Default, Clone, Copy)]
pub(super) struct Dirty {
    /// Arrival, new flow, coflow completion, daemon change: every policy reschedules.
    pub(super) major: bool,
    /// A single flow finished.
    pub(super) flow_done: bool,
}

pub(super) struct Records {
    pub(super) daemons: Vec<Daemon>,
    pub(super) by_addr: HashMap<String, usize>,
    /// Ports of forgotten daemons, reused by new ones (so the fabric is as large as the most
    /// daemons ever registered at once, not as all that ever were).
    free_ports: Vec<usize>,
    pub(super) coflows: BTreeMap<u64, CoflowRec>,
    pub(super) flows: HashMap<FlowKey, FlowRec>,
    pub(super) objects: HashMap<(u64, String), (usize, u64)>,
    /// How many of `objects` each coflow has (for the per-coflow object limit).
    objects_per_coflow: HashMap<u64, usize>,
    /// Flows whose get started before their put completed, by the object they wait for (port,
    /// coflow, data id): a put's completion finds them without a scan of every flow.
    pub(super) waiting: HashMap<(usize, u64, String), BTreeSet<u64>>,
    pub(super) unregistered: VecDeque<u64>,
    next_coflow: u64,
    pub(super) dirty: Dirty,
    /// Every coflow's `external.internal` id (Pseudocode 5) and the tally of each DAG's bytes
    /// of coflows no longer active. A DAG is forgotten once all its coflows are unregistered
    /// (so it follows the coflows held, adversarial pass 33 B6); a child registered later
    /// naming a parent of a forgotten DAG starts a new DAG (see `register_coflow`).
    pub(super) dags: DagIds,
    /// The first coflow id this coordinator hands out (ids below it, or at `next_coflow` and
    /// above, were never issued here).
    first_coflow: u64,
    /// The inter-transfer controller's share of every NIC left to the shuffles (coflows'
    /// flows) beside the broadcasts: the scheduler sees each daemon's NIC times it. 1 without
    /// an ITC or a running broadcast.
    pub(super) link_share: f64,
}

impl Records {
    pub(super) fn new(first_coflow_id: u64) -> Records {
        Records {
            daemons: Vec::new(),
            by_addr: HashMap::new(),
            free_ports: Vec::new(),
            coflows: BTreeMap::new(),
            flows: HashMap::new(),
            objects: HashMap::new(),
            objects_per_coflow: HashMap::new(),
            waiting: HashMap::new(),
            unregistered: VecDeque::new(),
            next_coflow: first_coflow_id,
            first_coflow: first_coflow_id,
            dirty: Dirty::default(),
            dags: DagIds::new(),
            link_share: 1.0,
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn register_coflow(
        &mut self,
        now: f64,
        name: String,
        num_flows: u32,
        deadline_rel_s: Option<f64>,
        weight: f64,
        parents: Vec<u64>,
    ) -> Result<u64, DagError> {
        let id = self.next_coflow;
        // A parent this coordinator issued whose whole DAG is unregistered and forgotten: the
        // child starts a new DAG (internal 0, nothing inherited), as a coflow rebuilt from a
        // daemon's report after a restart does. A parent never issued here stays an error.
        let issued = self.first_coflow..self.next_coflow;
        let forgotten = |p: &u64| {
            issued.contains(p) && self.dags.pos(*p).is_none() && !self.coflows.contains_key(p)
        };
        let live: Vec<u64> = parents.iter().copied().filter(|p| !forgotten(p)).collect();
        self.dags.assign(id, now, &live)?;
        self.next_coflow += 1;
        self.coflows.insert(
            id,
            CoflowRec {
                id,
                name,
                arrival_s: now,
                deadline_s: deadline_rel_s.map(|d| now + d),
                weight,
                num_flows,
                parents,
                flows: CoflowFlows::default(),
                ready_seen: false,
                sizes_hidden: false,
            },
        );
        self.dirty.major = true;
        Ok(id)
    }

    /// A coflow the coordinator has not seen (it restarted): rebuilt from a daemon's report.
    fn ensure_coflow(&mut self, now: f64, id: u64) {
        if !self.coflows.contains_key(&id) && !self.unregistered.contains(&id) {
            // Its DAG was lost with the old coordinator: it starts a new one (children may
            // still name it).
            let _ = self.dags.assign(id, now, &[]);
            self.coflows.insert(
                id,
                CoflowRec {
                    id,
                    name: String::new(),
                    arrival_s: now,
                    deadline_s: None,
                    weight: 1.0,
                    num_flows: 0,
                    parents: Vec::new(),
                    flows: CoflowFlows::default(),
                    ready_seen: false,
                    sizes_hidden: false,
                },
            );
            self.dirty.major = true;
        }
    }

    pub(super) fn unregister(&mut self, id: u64) {
        if let Some(c) = self.coflows.remove(&id) {
            let mut sent = 0.0;
            for k in c.flows.iter() {
                if let Some(f) = self.flows.remove(k) {
                    unwait(&mut self.waiting, *k, &f);
                    sent += f.sent_bytes;
                    self.daemons[f.src].flows -= 1;
                }
            }
            self.dags.ended(id, sent);
        }
        self.dags.forget(id);
        let before = self.objects.len();
        self.objects.retain(|(c, _), _| *c != id);
        self.objects_per_coflow.remove(&id);
        if before != self.objects.len() {
            for d in &mut self.daemons {
                d.objects = 0;
            }
            for (src, _) in self.objects.values() {
                self.daemons[*src].objects += 1;
            }
        }
        if !self.unregistered.contains(&id) {
            self.unregistered.push_back(id);
            if self.unregistered.len() > UNREGISTERED_MEMORY {
                self.unregistered.pop_front();
            }
        }
        self.dirty.major = true;
    }

    /// A daemon (re-)registers with its soft state; returns its port. Flows it no longer lists
    /// are forgotten, the ones it lists replace what was known.
    pub(super) fn register_daemon(
        &mut self,
        now: f64,
        addr: &str,
        nic_bytes_per_s: f64,
        objects: &[StoredObject],
        flows: &[FlowInfo],
    ) -> usize {
        let port = match self.by_addr.get(addr) {
            Some(&p) => {
                self.daemons[p].nic_bytes_per_s = nic_bytes_per_s;
                p
            }
            None => {
                let mut d = Daemon {
                    addr: addr.to_string(),
                    nic_bytes_per_s,
                    connected: false,
                    session: 0,
                    objects: 0,
                    flows: 0,
                    gone: false,
                    unseen_since_s: None,
                };
                let port = match self.free_ports.pop() {
                    Some(p) => {
                        // Sessions keep counting up, so an old stream's end never matches.
                        d.session = self.daemons[p].session;
                        self.daemons[p] = d;
                        p
                    }
                    None => {
                        self.daemons.push(d);
                        self.daemons.len() - 1
                    }
                };
                self.by_addr.insert(addr.to_string(), port);
                port
            }
        };
        self.drop_objects_of(port);
        for o in objects {
            self.put_done(now, port, o);
        }
        let stale: Vec<FlowKey> = self.flows.keys().filter(|k| k.0 == port).copied().collect();
        for k in stale {
            self.drop_flow(k);
        }
        for f in flows {
            self.start_flow_inner(now, port, f);
        }
        self.dirty.major = true;
        port
    }

    /// A put started streaming in (`pending`), completed, or was abandoned.
    pub(super) fn put_done(&mut self, now: f64, port: usize, o: &StoredObject) {
        if self.unregistered.contains(&o.coflow) {
            return;
        }
        let key = (o.coflow, o.data_id.clone());
        if o.abandoned {
            if self.objects.get(&key).is_some_and(|&(src, _)| src == port) {
                self.objects.remove(&key);
                self.daemons[port].objects = self.daemons[port].objects.saturating_sub(1);
                uncount(&mut self.objects_per_coflow, o.coflow);
            }
            return;
        }
        if !o.pending {
            // Gets that started while it streamed in now know their size.
            let mut learned = false;
            let waiting = self.waiting.remove(&(port, o.coflow, o.data_id.clone()));
            for n in waiting.into_iter().flatten() {
                if let Some(f) = self.flows.get_mut(&(port, n)) {
                    if f.size_pending && f.coflow == o.coflow && f.data_id == o.data_id {
                        f.size_pending = false;
                        f.size_bytes = o.size_bytes as f64;
                        learned = true;
                    }
                }
            }
            self.dirty.major |= learned;
        }
        self.ensure_coflow(now, o.coflow);
        match (self.objects).insert((o.coflow, o.data_id.clone()), (port, o.size_bytes)) {
            None => {
                self.daemons[port].objects += 1;
                *self.objects_per_coflow.entry(o.coflow).or_default() += 1;
            }
            // Moved from another daemon.
            Some((src, _)) if src != port => {
                self.daemons[src].objects = self.daemons[src].objects.saturating_sub(1);
                self.daemons[port].objects += 1;
            }
            Some(_) => {}
        }
    }

    pub(super) fn start_flow(&mut self, now: f64, port: usize, f: &FlowInfo) {
        self.start_flow_inner(now, port, f);
        // A coflow with a flow-count hint arrives, for the scheduler, when it becomes READY
        // (Varys considers flows only after their gets); data staged earlier does not age it.
        if let Some(c) = self.coflows.get_mut(&f.coflow) {
            if c.num_flows > 0 && c.flows.len() == c.num_flows as usize && !c.ready_seen {
                c.ready_seen = true;
                if let Some(d) = c.deadline_s.as_mut() {
                    *d += now - c.arrival_s;
                }
                c.arrival_s = now;
            }
        }
    }

    fn start_flow_inner(&mut self, now: f64, port: usize, f: &FlowInfo) {
        if self.unregistered.contains(&f.coflow) {
            return;
        }
        self.ensure_coflow(now, f.coflow);
        let key = (port, f.flow);
        let dst = self.by_addr.get(&f.dst).copied();
        // The put's completion may have been reported before this start (two RPCs): a
        // non-empty size on record is final.
        let (mut size, mut size_pending) = (f.size_bytes as f64, f.size_pending);
        if size_pending {
            if let Some(&(src, known)) = self.objects.get(&(f.coflow, f.data_id.clone())) {
                if src == port && known > 0 {
                    (size, size_pending) = (known as f64, false);
                }
            }
        }
        // A flow started again keeps its place in its coflow; one that moved coflows leaves
        // the old one.
        let old = self.flows.remove(&key);
        let mut seq = None;
        if let Some(o) = &old {
            unwait(&mut self.waiting, key, o);
            if let (Some(s), Some(c)) = (o.seq, self.coflows.get_mut(&o.coflow)) {
                c.flows.remove(s, o.done);
                seq = (o.coflow == f.coflow).then_some(s);
            }
        }
        let seq = (self.coflows.get_mut(&f.coflow)).map(|c| c.flows.add(key, seq, false));
        if size_pending {
            let object = (port, f.coflow, f.data_id.clone());
            self.waiting.entry(object).or_default().insert(f.flow);
        }
        self.flows.insert(
            key,
            FlowRec {
                coflow: f.coflow,
                data_id: f.data_id.clone(),
                src: port,
                dst,
                size_bytes: size,
                size_pending,
                sent_bytes: f.sent_bytes as f64,
                done: false,
                rate: 0.0,
                slot: None,
                seq,
            },
        );
        if old.is_none() {
            self.daemons[port].flows += 1;
        }
        self.dirty.major = true;
    }

    fn drop_flow(&mut self, key: FlowKey) {
        if let Some(f) = self.flows.remove(&key) {
            unwait(&mut self.waiting, key, &f);
            self.daemons[f.src].flows -= 1;
            if let (Some(s), Some(c)) = (f.seq, self.coflows.get_mut(&f.coflow)) {
                c.flows.remove(s, f.done);
            }
        }
    }

    /// A progress report: bytes sent so far, and whether the flow ended (or failed). Returns
    /// the place in the last decision of a flow that ended now (its bandwidth is free).
    pub(super) fn progress(
        &mut self,
        port: usize,
        flow: u64,
        sent: u64,
        done: bool,
        failed: bool,
    ) -> Option<(u32, u32)> {
        let key = (port, flow);
        if failed {
            self.drop_flow(key);
            self.dirty.major = true;
            return None;
        }
        let f = self.flows.get_mut(&key)?;
        f.sent_bytes = f.sent_bytes.max(sent as f64);
        if !done || f.done {
            return None;
        }
        f.done = true;
        f.sent_bytes = f.size_bytes.max(f.sent_bytes);
        f.rate = 0.0;
        let (coflow, slot, listed) = (f.coflow, f.slot.take(), f.seq.is_some());
        if listed {
            if let Some(c) = self.coflows.get_mut(&coflow) {
                c.flows.ended();
            }
        }
        self.dirty.flow_done = true;
        if self.coflow_finished(coflow) {
            self.dirty.major = true;
        }
        slot
    }

    /// Ready (all hinted gets started) and every started flow done.
    fn coflow_finished(&self, id: u64) -> bool {
        (self.coflows.get(&id))
            .is_some_and(|c| c.flows.len() >= c.num_flows as usize && c.flows.running() == 0)
    }

    /// Daemons registered now (forgotten ones not counted).
    pub(super) fn live_daemons(&self) -> usize {
        self.by_addr.len()
    }

    /// Forget the daemons that have stayed disconnected for `after_s` (as seen by the sweeps
    /// at `now`): their flows end as failed, their objects are no longer located, flows towards
    /// them count as going outside, and their ports are free. A forgotten daemon that comes
    /// back registers anew with its soft state. Returns the addresses forgotten.
    pub(super) fn forget_disconnected(&mut self, now: f64, after_s: f64) -> Vec<String> {
        let mut forgotten = Vec::new();
        for port in 0..self.daemons.len() {
            let d = &mut self.daemons[port];
            if d.gone || d.connected {
                continue;
            }
            let since = *d.unseen_since_s.get_or_insert(now);
            if now - since < after_s {
                continue;
            }
            d.gone = true;
            d.objects = 0;
            d.unseen_since_s = None;
            let addr = std::mem::take(&mut d.addr);
            self.by_addr.remove(&addr);
            self.free_ports.push(port);
            self.drop_objects_of(port);
            let from: Vec<FlowKey> = self.flows.keys().filter(|k| k.0 == port).copied().collect();
            for k in from {
                self.drop_flow(k);
            }
            for f in self.flows.values_mut() {
                if f.dst == Some(port) {
                    f.dst = None;
                }
            }
            self.dirty.major = true;
            forgotten.push(addr);
        }
        forgotten
    }

    pub(super) fn set_connected(&mut self, port: usize, connected: bool) {
        if connected {
            self.daemons[port].unseen_since_s = None;
        }
        if self.daemons[port].connected != connected {
            self.daemons[port].connected = connected;
            self.dirty.major = true;
        }
    }

    /// The fabric the scheduler sees: one port per daemon (its NIC each way) and, last, an
    /// "outside" port for receivers that are not daemon hosts, as fast as all NICs together.
    pub(super) fn fabric(&self) -> Fabric {
        let nic = |d: &Daemon| d.nic_bytes_per_s * self.link_share;
        let mut up: Vec<f64> = self.daemons.iter().map(nic).collect();
        let live: f64 = (self.daemons.iter()).filter(|d| !d.gone).map(nic).sum();
        up.push(live.max(1.0));
        Fabric {
            down_bytes_per_s: up.clone(),
            up_bytes_per_s: up,
        }
    }
}

/// Flow `key` (record `f`) no longer waits for its put's completion.
/// One object of `coflow` fewer.
fn uncount(per: &mut HashMap<u64, usize>, coflow: u64) {
    if let Some(n) = per.get_mut(&coflow) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            per.remove(&coflow);
        }
    }
}

impl Records {
    /// Forget every object daemon `port` reported.
    fn drop_objects_of(&mut self, port: usize) {
        let per = &mut self.objects_per_coflow;
        self.objects.retain(|(c, _), (src, _)| {
            let keep = *src != port;
            if !keep {
                uncount(per, *c);
            }
            keep
        });
        self.daemons[port].objects = 0;
    }

    /// How many objects coflow `coflow` has recorded.
    pub(super) fn objects_of(&self, coflow: u64) -> usize {
        self.objects_per_coflow.get(&coflow).copied().unwrap_or(0)
    }
}

fn unwait(waiting: &mut HashMap<(usize, u64, String), BTreeSet<u64>>, key: FlowKey, f: &FlowRec) {
    if !f.size_pending {
        return;
    }
    let object = (key.0, f.coflow, f.data_id.clone());
    if let Some(w) = waiting.get_mut(&object) {
        w.remove(&key.1);
        if w.is_empty() {
            waiting.remove(&object);
        }
    }
}

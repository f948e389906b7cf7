//! What the coordinator knows: daemons (the fabric's ports), coflows, their flows and where each
//! put object lives; and the scheduling round that turns it into a `Snapshot`, calls the shared
//! scheduler, and produces one full rate table per daemon. No sockets here.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Instant;

use coflowkit_model::Fabric;
use coflowkit_sched::{
    CoflowState, DagError, DagIds, DecisionClock, Event, FlowState, Handed, Rates, Scheduler,
    Snapshot, Step,
};

use crate::proto::{FlowInfo, FlowRate, RateUpdate, StoredObject};

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
    pub flows: Vec<FlowKey>,
    /// Became READY (all hinted gets started) at some point.
    pub ready_seen: bool,
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
    pub rate: f64,
    /// Its place in the last decision's snapshot (coflow, flow), while it runs.
    slot: Option<(u32, u32)>,
}

/// What the brain's step produced: new rate tables for the daemons, and the wake-up the
/// policy asked for.
pub struct Round {
    pub wake_at_s: Option<f64>,
    pub updates: Vec<RateUpdate>,
    /// A full decision (else a hand-on of freed bandwidth).
    pub full: bool,
}

/// What changed since the last round; decides whether a round is due now.
#[derive(Default, Clone, Copy)]
pub struct Dirty {
    /// Arrival, new flow, coflow completion, daemon change: every policy reschedules.
    pub major: bool,
    /// A single flow finished.
    pub flow_done: bool,
}

pub struct State {
    pub start: Instant,
    pub daemons: Vec<Daemon>,
    pub by_addr: HashMap<String, usize>,
    pub coflows: BTreeMap<u64, CoflowRec>,
    pub flows: HashMap<FlowKey, FlowRec>,
    pub objects: HashMap<(u64, String), (usize, u64)>,
    pub unregistered: VecDeque<u64>,
    next_coflow: u64,
    pub dirty: Dirty,
    pub rounds: u64,
    /// Hand-ons of freed bandwidth without a full round.
    pub hand_ons: u64,
    pub last_decision_s: f64,
    /// When to decide, and the hand-on of freed bandwidth between decisions.
    clock: DecisionClock,
    /// The last decision: what the scheduler saw (finished flows' bytes left set to 0 as
    /// their ends are reported), the fabric, each flow's key and the current rates.
    active: Vec<CoflowState>,
    keys: Vec<Vec<FlowKey>>,
    fabric: Fabric,
    rates: Rates,
    /// Every coflow's `external.internal` id (Pseudocode 5) and each DAG's bytes of
    /// unregistered coflows. Grows with the coflows registered (a child may name a parent long
    /// unregistered).
    pub dags: DagIds,
}

/// Coflow ids are unique across coordinator restarts: the start time in milliseconds (since the
/// Unix epoch) in the high bits, a counter in the low 20.
fn first_coflow_id() -> u64 {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    (ms << 20) + 1
}

impl Default for State {
    fn default() -> Self {
        State::new()
    }
}

impl State {
    pub fn new() -> State {
        State {
            start: Instant::now(),
            daemons: Vec::new(),
            by_addr: HashMap::new(),
            coflows: BTreeMap::new(),
            flows: HashMap::new(),
            objects: HashMap::new(),
            unregistered: VecDeque::new(),
            next_coflow: first_coflow_id(),
            dirty: Dirty::default(),
            rounds: 0,
            hand_ons: 0,
            last_decision_s: 0.0,
            clock: DecisionClock::default(),
            active: Vec::new(),
            keys: Vec::new(),
            fabric: Fabric::uniform(0, 0.0),
            rates: Rates::default(),
            dags: DagIds::new(),
        }
    }

    pub fn now_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    #[allow(clippy::too_many_arguments)]
    pub fn register_coflow(
        &mut self,
        name: String,
        num_flows: u32,
        deadline_rel_s: Option<f64>,
        weight: f64,
        parents: Vec<u64>,
    ) -> Result<u64, DagError> {
        let id = self.next_coflow;
        let now = self.now_s();
        self.dags.assign(id, now, &parents)?;
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
                flows: Vec::new(),
                ready_seen: false,
            },
        );
        self.dirty.major = true;
        Ok(id)
    }

    /// A coflow the coordinator has not seen (it restarted): rebuilt from a daemon's report.
    fn ensure_coflow(&mut self, id: u64) {
        if !self.coflows.contains_key(&id) && !self.unregistered.contains(&id) {
            let now = self.now_s();
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
                    flows: Vec::new(),
                    ready_seen: false,
                },
            );
            self.dirty.major = true;
        }
    }

    pub fn unregister(&mut self, id: u64) {
        if let Some(c) = self.coflows.remove(&id) {
            let mut sent = 0.0;
            for k in c.flows {
                sent += self.flows.remove(&k).map_or(0.0, |f| f.sent_bytes);
            }
            if let Some(d) = self.dags.pos(id) {
                self.dags.add_finished(d.external, sent);
            }
        }
        let before = self.objects.len();
        self.objects.retain(|(c, _), _| *c != id);
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
    pub fn register_daemon(
        &mut self,
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
                self.daemons.push(Daemon {
                    addr: addr.to_string(),
                    nic_bytes_per_s,
                    connected: false,
                    session: 0,
                    objects: 0,
                });
                self.by_addr
                    .insert(addr.to_string(), self.daemons.len() - 1);
                self.daemons.len() - 1
            }
        };
        self.objects.retain(|_, (src, _)| *src != port);
        self.daemons[port].objects = 0;
        for o in objects {
            self.put_done(port, o);
        }
        let stale: Vec<FlowKey> = self.flows.keys().filter(|k| k.0 == port).copied().collect();
        for k in stale {
            self.drop_flow(k);
        }
        for f in flows {
            self.start_flow_inner(port, f);
        }
        self.dirty.major = true;
        port
    }

    /// A put started streaming in (`pending`), completed, or was abandoned.
    pub fn put_done(&mut self, port: usize, o: &StoredObject) {
        if self.unregistered.contains(&o.coflow) {
            return;
        }
        let key = (o.coflow, o.data_id.clone());
        if o.abandoned {
            if self.objects.get(&key).is_some_and(|&(src, _)| src == port) {
                self.objects.remove(&key);
                self.daemons[port].objects = self.daemons[port].objects.saturating_sub(1);
            }
            return;
        }
        if !o.pending {
            // Gets that started while it streamed in now know their size.
            let mut learned = false;
            for f in self.flows.values_mut() {
                if f.size_pending && f.src == port && f.coflow == o.coflow && f.data_id == o.data_id
                {
                    f.size_pending = false;
                    f.size_bytes = o.size_bytes as f64;
                    learned = true;
                }
            }
            self.dirty.major |= learned;
        }
        self.ensure_coflow(o.coflow);
        if self
            .objects
            .insert((o.coflow, o.data_id.clone()), (port, o.size_bytes))
            .is_none()
        {
            self.daemons[port].objects += 1;
        }
    }

    pub fn start_flow(&mut self, port: usize, f: &FlowInfo) {
        self.start_flow_inner(port, f);
        // A coflow with a flow-count hint arrives, for the scheduler, when it becomes READY
        // (Varys considers flows only after their gets); data staged earlier does not age it.
        let now = self.now_s();
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

    fn start_flow_inner(&mut self, port: usize, f: &FlowInfo) {
        if self.unregistered.contains(&f.coflow) {
            return;
        }
        self.ensure_coflow(f.coflow);
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
        let old = self.flows.insert(
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
            },
        );
        if old.is_none() {
            if let Some(c) = self.coflows.get_mut(&f.coflow) {
                c.flows.push(key);
            }
        }
        self.dirty.major = true;
    }

    fn drop_flow(&mut self, key: FlowKey) {
        if let Some(f) = self.flows.remove(&key) {
            if let Some(c) = self.coflows.get_mut(&f.coflow) {
                c.flows.retain(|k| *k != key);
            }
        }
    }

    /// A progress report: bytes sent so far, and whether the flow ended (or failed).
    pub fn progress(&mut self, port: usize, flow: u64, sent: u64, done: bool, failed: bool) {
        let key = (port, flow);
        if failed {
            self.drop_flow(key);
            self.dirty.major = true;
            return;
        }
        let Some(f) = self.flows.get_mut(&key) else {
            return;
        };
        f.sent_bytes = f.sent_bytes.max(sent as f64);
        if done && !f.done {
            f.done = true;
            f.sent_bytes = f.size_bytes.max(f.sent_bytes);
            f.rate = 0.0;
            // Its bandwidth goes back to the ports for a hand-on.
            if let Some((ci, fi)) = f.slot.take() {
                let (ci, fi) = (ci as usize, fi as usize);
                let rate = std::mem::replace(&mut self.rates.per_coflow[ci][fi], 0.0);
                let fs = &mut self.active[ci].flows[fi];
                fs.remaining_bytes = 0.0;
                if rate > 0.0 {
                    self.clock.flow_ended(fs.src, fs.dst, rate);
                }
            }
            let coflow = f.coflow;
            self.dirty.flow_done = true;
            if self.coflow_finished(coflow) {
                self.dirty.major = true;
            }
        }
    }

    /// Ready (all hinted gets started) and every started flow done.
    fn coflow_finished(&self, id: u64) -> bool {
        self.coflows.get(&id).is_some_and(|c| {
            c.flows.len() >= c.num_flows as usize
                && c.flows
                    .iter()
                    .all(|k| !matches!(self.flows.get(k), Some(f) if !f.done))
        })
    }

    pub fn set_connected(&mut self, port: usize, connected: bool) {
        if self.daemons[port].connected != connected {
            self.daemons[port].connected = connected;
            self.dirty.major = true;
        }
    }

    /// The fabric the scheduler sees: one port per daemon (its NIC each way) and, last, an
    /// "outside" port for receivers that are not daemon hosts, as fast as all NICs together.
    pub fn fabric(&self) -> Fabric {
        let mut up: Vec<f64> = self.daemons.iter().map(|d| d.nic_bytes_per_s).collect();
        up.push(up.iter().sum::<f64>().max(1.0));
        Fabric {
            down_bytes_per_s: up.clone(),
            up_bytes_per_s: up,
        }
    }

    /// The coflow's state for the scheduler, if it is READY and has unfinished flows (its
    /// `dag` is filled in by the caller).
    fn snapshot_coflow(
        &self,
        c: &CoflowRec,
        clairvoyant: bool,
        outside: u32,
        active: &mut Vec<CoflowState>,
        keys: &mut Vec<Vec<FlowKey>>,
    ) {
        if c.flows.len() < c.num_flows as usize {
            return; // not READY: the scheduler considers it once all hinted gets started
        }
        let mut sent = 0.0;
        let mut max_sent: f64 = 0.0;
        let mut flows = Vec::new();
        let mut fk = Vec::new();
        for k in &c.flows {
            let Some(f) = self.flows.get(k) else { continue };
            sent += f.sent_bytes;
            max_sent = max_sent.max(f.sent_bytes);
            if f.done || !self.daemons[f.src].connected || (clairvoyant && f.size_pending) {
                continue;
            }
            // A flow whose reported bytes caught up with its size is finishing; it keeps a
            // crumb so clairvoyant policies still give it a rate until its end is reported.
            let remaining = if clairvoyant {
                (f.size_bytes - f.sent_bytes).max(1.0)
            } else {
                f64::INFINITY
            };
            flows.push(FlowState {
                src: f.src as u32,
                dst: f.dst.map_or(outside, |d| d as u32),
                sent_bytes: f.sent_bytes,
                remaining_bytes: remaining,
            });
            fk.push(*k);
        }
        if flows.is_empty() {
            return;
        }
        active.push(CoflowState {
            id: c.id,
            arrival_s: c.arrival_s,
            deadline_s: c.deadline_s,
            weight: c.weight,
            total_flows: (c.num_flows as usize).max(c.flows.len()),
            sent_bytes: sent,
            max_flow_sent_bytes: max_sent,
            flows,
            dag: None,
        });
        keys.push(fk);
    }

    /// One scheduling round at `now_s`: snapshot, allocate, record rates. Returns the wake-up
    /// the scheduler asked for and the rate table per daemon (every unfinished flow it serves).
    pub fn decide(
        &mut self,
        sched: &mut dyn Scheduler,
        now_s: f64,
    ) -> (Option<f64>, Vec<RateUpdate>) {
        let started = Instant::now();
        let fabric = self.fabric();
        let outside = (fabric.ports() - 1) as u32;
        let clairvoyant = sched.clairvoyant();
        let mut order: Vec<&CoflowRec> = self.coflows.values().collect();
        order.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s).then(a.id.cmp(&b.id)));
        let mut active = Vec::new();
        let mut keys: Vec<Vec<FlowKey>> = Vec::new();
        // Bytes of registered coflows the snapshot leaves out (not READY, or all flows done),
        // per DAG: with the unregistered ones', the service the DAG's active coflows inherit.
        let mut inactive_sent: HashMap<u64, f64> = HashMap::new();
        for c in order {
            let before = active.len();
            self.snapshot_coflow(c, clairvoyant, outside, &mut active, &mut keys);
            if active.len() == before {
                if let Some(d) = self.dags.pos(c.id) {
                    let sent: f64 = c
                        .flows
                        .iter()
                        .filter_map(|k| self.flows.get(k))
                        .map(|f| f.sent_bytes)
                        .sum();
                    *inactive_sent.entry(d.external).or_default() += sent;
                }
            }
        }
        for c in &mut active {
            c.dag = self.dags.pos(c.id).map(|mut d| {
                d.finished_bytes += inactive_sent.get(&d.external).copied().unwrap_or(0.0);
                d
            });
        }
        for f in self.flows.values_mut() {
            f.rate = 0.0;
            f.slot = None;
        }

        let mut rates = std::mem::take(&mut self.rates);
        let snap = Snapshot {
            now_s,
            fabric: &fabric,
            coflows: &active,
        };
        self.clock.decide(sched, &snap, &mut rates);
        let ports = fabric.ports();
        let (mut up, mut down) = (vec![0.0; ports], vec![0.0; ports]);
        for (ci, (ks, rs)) in keys.iter().zip(&mut rates.per_coflow).enumerate() {
            for (fi, (k, r)) in ks.iter().zip(rs.iter_mut()).enumerate() {
                if !(r.is_finite() && *r > 0.0) {
                    *r = 0.0;
                }
                let fs = &active[ci].flows[fi];
                up[fs.src as usize] += *r;
                down[fs.dst as usize] += *r;
                if let Some(f) = self.flows.get_mut(k) {
                    f.rate = *r;
                    f.slot = Some((ci as u32, fi as u32));
                }
            }
        }
        self.clock.loads(&fabric, &up, &down);
        (self.rates, self.active, self.keys, self.fabric) = (rates, active, keys, fabric);
        self.rounds += 1;
        let updates = self.rate_tables();
        self.dirty = Dirty::default();
        self.last_decision_s = started.elapsed().as_secs_f64();
        (self.clock.wake_at_s(), updates)
    }

    /// Every daemon's full rate table (every unfinished flow it sends).
    fn rate_tables(&self) -> Vec<RateUpdate> {
        let mut updates: Vec<RateUpdate> = (0..self.daemons.len())
            .map(|_| RateUpdate {
                round: self.rounds,
                rates: Vec::new(),
                unregistered: self.unregistered.iter().copied().collect(),
            })
            .collect();
        for (k, f) in &self.flows {
            if !f.done {
                updates[f.src].rates.push(FlowRate {
                    flow: k.1,
                    bytes_per_s: f.rate,
                });
            }
        }
        updates
    }

    /// Hand the bandwidth of flows that ended since the last decision on (the clock's
    /// [`Step::HandOn`]) at `now_s`: the rate tables, or `None` when the policy asks for a
    /// full decision instead.
    pub fn hand_on(&mut self, sched: &mut dyn Scheduler, now_s: f64) -> Option<Vec<RateUpdate>> {
        let snap = Snapshot {
            now_s,
            fabric: &self.fabric,
            coflows: &self.active,
        };
        match self.clock.hand_on(sched, &snap, &mut self.rates) {
            Handed::Decide => return None,
            Handed::Nothing => {}
            Handed::Changed(changed) => {
                for &(ci, fi, _) in changed {
                    let (ci, fi) = (ci as usize, fi as usize);
                    if let Some(f) = self.flows.get_mut(&self.keys[ci][fi]) {
                        f.rate = self.rates.per_coflow[ci][fi];
                    }
                }
            }
        }
        self.dirty.flow_done = false;
        self.hand_ons += 1;
        Some(self.rate_tables())
    }

    /// What the brain does when woken at `now_s` (`timed_out`: by the wake-up it asked for or
    /// the safety-net tick), as the decision clock says: a full round, a hand-on of freed
    /// bandwidth, or nothing (`None`).
    pub fn step(
        &mut self,
        sched: &mut dyn Scheduler,
        now_s: f64,
        timed_out: bool,
    ) -> Option<Round> {
        let event = if self.dirty.major {
            Event::Arrival
        } else if timed_out {
            Event::WakeUp
        } else if self.dirty.flow_done {
            Event::FlowEnd
        } else {
            return None;
        };
        let step = self.clock.on(now_s, event);
        if step == Step::HandOn {
            if let Some(updates) = self.hand_on(sched, now_s) {
                return Some(Round {
                    wake_at_s: self.clock.wake_at_s(),
                    updates,
                    full: false,
                });
            }
        }
        if step == Step::Wait {
            return None;
        }
        let (wake_at_s, updates) = self.decide(sched, now_s);
        Some(Round {
            wake_at_s,
            updates,
            full: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_sched::{build, SchedOptions, SchedulerKind};

    fn flow(flow: u64, coflow: u64, dst: &str, size: u64) -> FlowInfo {
        FlowInfo {
            flow,
            coflow,
            data_id: format!("d{flow}"),
            dst: dst.into(),
            size_bytes: size,
            sent_bytes: 0,
            size_pending: false,
        }
    }

    /// Two daemons at 100 B/s; a small and a large coflow from A to B. Varys (SEBF) gives the
    /// whole link to the small one; fair shares it; the rates are what the shared scheduler says.
    #[test]
    fn rounds_call_the_shared_scheduler() {
        let mut s = State::new();
        let a = s.register_daemon("a:1", 100.0, &[], &[]);
        let b = s.register_daemon("b:1", 100.0, &[], &[]);
        s.set_connected(a, true);
        s.set_connected(b, true);
        let big = s
            .register_coflow("big".into(), 1, None, 1.0, vec![])
            .unwrap();
        let small = s
            .register_coflow("small".into(), 1, None, 1.0, vec![])
            .unwrap();
        s.start_flow(a, &flow(1, big, "b:1", 10_000));
        s.start_flow(a, &flow(2, small, "b:1", 100));
        let mut varys = build(SchedulerKind::Varys, &SchedOptions::default());
        let (_, ups) = s.decide(varys.as_mut(), 0.0);
        let rate =
            |u: &RateUpdate, f: u64| u.rates.iter().find(|r| r.flow == f).unwrap().bytes_per_s;
        assert!((rate(&ups[a], 2) - 100.0).abs() < 1e-9);
        assert_eq!(rate(&ups[a], 1), 0.0);
        assert!(ups[b].rates.is_empty());
        let mut fair = build(SchedulerKind::Fair, &SchedOptions::default());
        let (_, ups) = s.decide(fair.as_mut(), 0.0);
        assert!((rate(&ups[a], 1) - 50.0).abs() < 1e-9);
        assert!((rate(&ups[a], 2) - 50.0).abs() < 1e-9);
        // The small coflow finishes: the big one gets everything, the finished flow is gone.
        s.progress(a, 2, 100, true, false);
        assert!(s.dirty.major && s.dirty.flow_done);
        let (_, ups) = s.decide(varys.as_mut(), 1.0);
        assert_eq!(ups[a].rates.len(), 1);
        assert!((rate(&ups[a], 1) - 100.0).abs() < 1e-9);
    }

    /// The decision clock of the simulator runs here too: under SEBF a flow's end hands its
    /// bandwidth to the flow waiting on its port without a full round; fair (max-min)
    /// decides in full; a coflow's end always does.
    #[test]
    fn a_flow_end_hands_bandwidth_on_without_a_round() {
        let mut s = State::new();
        let a = s.register_daemon("a:1", 100.0, &[], &[]);
        let b = s.register_daemon("b:1", 100.0, &[], &[]);
        let c = s.register_daemon("c:1", 100.0, &[], &[]);
        for p in [a, b, c] {
            s.set_connected(p, true);
        }
        // X = {a->b: 100, a->c: 1000}, Y = {a->c: 5000}: X first (smaller); X's a->b holds
        // a's uplink, a->c waits behind it as Y's does.
        let x = s.register_coflow("x".into(), 0, None, 1.0, vec![]).unwrap();
        let y = s.register_coflow("y".into(), 0, None, 1.0, vec![]).unwrap();
        s.start_flow(a, &flow(1, x, "b:1", 100));
        s.start_flow(a, &flow(2, x, "c:1", 1000));
        s.start_flow(a, &flow(3, y, "c:1", 5000));
        let mut sebf = build(SchedulerKind::Sebf, &SchedOptions::default());
        let round = s.step(sebf.as_mut(), 0.0, false).expect("arrivals decide");
        assert!(round.full);
        let rate =
            |u: &RateUpdate, f: u64| u.rates.iter().find(|r| r.flow == f).unwrap().bytes_per_s;
        let total: f64 = [1, 2, 3].iter().map(|&f| rate(&round.updates[a], f)).sum();
        assert!((total - 100.0).abs() < 1e-9, "a's uplink is full: {total}");
        let before = rate(&round.updates[a], 2);
        assert!(before < 100.0);
        assert!(
            s.step(sebf.as_mut(), 0.5, false).is_none(),
            "nothing happened"
        );
        s.progress(a, 1, 100, true, false);
        let round = s.step(sebf.as_mut(), 1.0, false).expect("a flow ended");
        assert!(!round.full, "a hand-on, not a round");
        assert_eq!((s.rounds, s.hand_ons), (1, 1));
        assert!((rate(&round.updates[a], 2) - 100.0).abs() < 1e-9);
        assert_eq!(rate(&round.updates[a], 3), 0.0);
        // X ends: a full round.
        s.progress(a, 2, 1000, true, false);
        let round = s.step(sebf.as_mut(), 2.0, false).expect("a coflow ended");
        assert!(round.full);
        assert!((rate(&round.updates[a], 3) - 100.0).abs() < 1e-9);
        // Max-min decides in full on a flow's end.
        let mut fair = build(SchedulerKind::Fair, &SchedOptions::default());
        let z = s.register_coflow("z".into(), 0, None, 1.0, vec![]).unwrap();
        s.start_flow(b, &flow(4, z, "c:1", 1000));
        s.start_flow(b, &flow(5, z, "a:1", 1000));
        assert!(s.step(fair.as_mut(), 3.0, false).unwrap().full);
        s.progress(b, 4, 1000, true, false);
        assert!(s.step(fair.as_mut(), 4.0, false).unwrap().full);
    }

    #[test]
    fn not_ready_until_hinted_gets_started_and_restart_rebuilds() {
        let mut s = State::new();
        let a = s.register_daemon("a:1", 100.0, &[], &[]);
        s.set_connected(a, true);
        let c = s
            .register_coflow(String::new(), 2, None, 1.0, vec![])
            .unwrap();
        s.start_flow(a, &flow(1, c, "", 50));
        let mut fair = build(SchedulerKind::Fair, &SchedOptions::default());
        let (_, ups) = s.decide(fair.as_mut(), 0.0);
        assert_eq!(ups[a].rates[0].bytes_per_s, 0.0, "not READY yet");
        s.start_flow(a, &flow(2, c, "", 50));
        let (_, ups) = s.decide(fair.as_mut(), 0.0);
        assert!(ups[a].rates.iter().all(|r| r.bytes_per_s > 0.0));

        // A fresh coordinator learns the coflow and its flows from the daemon's re-registration.
        let mut s2 = State::new();
        let objs = [StoredObject {
            coflow: c,
            data_id: "x".into(),
            size_bytes: 5,
            ..Default::default()
        }];
        let a2 = s2.register_daemon("a:1", 100.0, &objs, &[flow(2, c, "", 50)]);
        assert!(s2.coflows.contains_key(&c));
        assert_eq!(s2.objects.get(&(c, "x".into())), Some(&(a2, 5)));
        s2.set_connected(a2, true);
        let (_, ups) = s2.decide(fair.as_mut(), 0.0);
        assert_eq!(ups[a2].rates.len(), 1);
        assert!(ups[a2].rates[0].bytes_per_s > 0.0);
        // Unregister forgets everything about the coflow and tells the daemons.
        s2.unregister(c);
        assert!(s2.objects.is_empty() && s2.flows.is_empty());
        let (_, ups) = s2.decide(fair.as_mut(), 0.0);
        assert_eq!(ups[a2].unregistered, vec![c]);
    }

    /// The coordinator passes registered parents to the shared scheduler: under Aalo a child
    /// joins its parent's DAG (same external id, internal 1), sits in the DAG's queue (the DAG
    /// already sent more than Q1 holds) and waits behind its parent, but goes before a coflow
    /// of a younger DAG that registered before it.
    #[test]
    fn a_child_coflow_shares_its_parents_queue_and_waits_behind_it() {
        use coflowkit_sched::policy::aalo::AaloConfig;
        use coflowkit_sched::policy::dclas::{InterQueue, Queues};
        let mut s = State::new();
        let a = s.register_daemon("a:1", 100.0, &[], &[]);
        let b = s.register_daemon("b:1", 100.0, &[], &[]);
        s.set_connected(a, true);
        s.set_connected(b, true);
        let opts = SchedOptions {
            aalo: AaloConfig {
                queues: Queues {
                    k: 2,
                    e: 10.0,
                    q1_hi_bytes: 1000.0,
                },
                inter_queue: InterQueue::Strict,
                sync_interval_s: 0.0,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut aalo = build(SchedulerKind::Aalo, &opts);
        let rate =
            |u: &RateUpdate, f: u64| u.rates.iter().find(|r| r.flow == f).unwrap().bytes_per_s;

        let p = s.register_coflow("p".into(), 0, None, 1.0, vec![]).unwrap();
        s.start_flow(a, &flow(1, p, "b:1", 10_000));
        s.progress(a, 1, 1500, false, false); // past Q1: the DAG is in Q2
        s.decide(aalo.as_mut(), 0.0);
        let x = s.register_coflow("x".into(), 0, None, 1.0, vec![]).unwrap();
        let ch = s
            .register_coflow("ch".into(), 0, None, 1.0, vec![p])
            .unwrap();
        let (pd, xd, cd) = (
            s.dags.pos(p).unwrap(),
            s.dags.pos(x).unwrap(),
            s.dags.pos(ch).unwrap(),
        );
        assert_eq!((cd.external, cd.internal), (pd.external, 1));
        assert_ne!(xd.external, pd.external);
        s.start_flow(a, &flow(2, x, "b:1", 10_000));
        s.start_flow(a, &flow(3, ch, "b:1", 10_000));
        // X is new (Q1) and goes first; the child is in its DAG's Q2 at once.
        let (_, ups) = s.decide(aalo.as_mut(), 1.0);
        assert_eq!(
            [rate(&ups[a], 1), rate(&ups[a], 2), rate(&ups[a], 3)],
            [0.0, 100.0, 0.0]
        );
        // X leaves Q1: Q2 is FIFO by DAG, parent before child, the child before X.
        s.progress(a, 2, 1500, false, false);
        let (_, ups) = s.decide(aalo.as_mut(), 2.0);
        assert_eq!(
            [rate(&ups[a], 1), rate(&ups[a], 2), rate(&ups[a], 3)],
            [100.0, 0.0, 0.0]
        );
        s.progress(a, 1, 10_000, true, false);
        let (_, ups) = s.decide(aalo.as_mut(), 3.0);
        assert_eq!([rate(&ups[a], 2), rate(&ups[a], 3)], [0.0, 100.0]);
        // The parent's bytes stay with the DAG after it is unregistered.
        s.unregister(p);
        assert_eq!(s.dags.pos(ch).unwrap().finished_bytes, 10_000.0);
        let g = s
            .register_coflow("g".into(), 0, None, 1.0, vec![ch, x])
            .unwrap();
        assert_eq!(s.dags.pos(g).unwrap().internal, 2);
        assert_eq!(
            s.dags.pos(g).unwrap().external,
            pd.external,
            "the older DAG"
        );
        let err = s.register_coflow("h".into(), 0, None, 1.0, vec![12345]);
        assert!(err
            .unwrap_err()
            .to_string()
            .contains("parent 12345 is unknown"));
    }

    /// A get of a put still streaming in has no size yet: a non-clairvoyant policy serves it
    /// from the start, a clairvoyant one holds it until the put's completion gives the size
    /// (also when that report overtakes the flow's start).
    #[test]
    fn streaming_flows_wait_for_their_size_only_under_clairvoyant_policies() {
        let mut s = State::new();
        let a = s.register_daemon("a:1", 100.0, &[], &[]);
        let b = s.register_daemon("b:1", 100.0, &[], &[]);
        s.set_connected(a, true);
        s.set_connected(b, true);
        let c = s
            .register_coflow(String::new(), 0, None, 1.0, vec![])
            .unwrap();
        let object = |pending, size| StoredObject {
            coflow: c,
            data_id: "d1".into(),
            size_bytes: size,
            pending,
            abandoned: false,
        };
        s.put_done(a, &object(true, 0));
        s.start_flow(
            a,
            &FlowInfo {
                size_pending: true,
                ..flow(1, c, "b:1", 0)
            },
        );
        let rate = |u: &RateUpdate| u.rates[0].bytes_per_s;
        let mut fair = build(SchedulerKind::Fair, &SchedOptions::default());
        let mut varys = build(SchedulerKind::Varys, &SchedOptions::default());
        assert_eq!(rate(&s.decide(fair.as_mut(), 0.0).1[a]), 100.0);
        assert_eq!(rate(&s.decide(varys.as_mut(), 0.0).1[a]), 0.0);
        s.put_done(a, &object(false, 5000));
        assert_eq!(s.flows[&(a, 1)].size_bytes, 5000.0);
        assert_eq!(rate(&s.decide(varys.as_mut(), 0.0).1[a]), 100.0);
        // The completion reported before the start: the start takes the size on record.
        s.start_flow(
            a,
            &FlowInfo {
                size_pending: true,
                data_id: "d1".into(),
                ..flow(2, c, "b:1", 0)
            },
        );
        assert!(!s.flows[&(a, 2)].size_pending);
        // An abandoned put is forgotten.
        s.put_done(
            a,
            &StoredObject {
                abandoned: true,
                ..object(false, 0)
            },
        );
        assert!(s.objects.is_empty());
    }
}

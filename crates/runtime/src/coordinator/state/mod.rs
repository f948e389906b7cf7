//! What the coordinator knows and decides, sans-IO: the records (daemons, coflows, flows, put
//! objects), the snapshot the shared scheduler sees, and the decisions (the shared decision
//! clock, rounds and hand-ons). No sockets and no clock reads: every handler that needs the
//! time takes `now` (seconds since the coordinator started), as the simulator's world does.
//!
//! Call order: handlers as reports arrive ([`State::register_daemon`],
//! [`State::register_coflow`], [`State::start_flow`], [`State::progress`], ...), then
//! [`State::step`] when woken (by a report, the wake-up it asked for, or a tick) for the rate
//! tables to push; [`State::decide`] forces a full round.

mod decisions;
mod limits;
mod records;
mod snapshot;

use coflowkit_orchestra::itc;
use coflowkit_sched::{DagError, DagPos};

use crate::proto::{FlowInfo, StoredObject};
use decisions::Brain;
pub use decisions::Round;
pub use limits::{Full, Limit, RegistryLimits};
use records::Records;
pub use records::{CoflowFlows, CoflowRec, Daemon, FlowKey, FlowRec};
use snapshot::Last;

/// A held shuffle's share of a NIC: a sliver rather than zero, so no policy divides by a
/// capacity of 0 (4 KB/s of a 4 MB/s NIC).
pub const MIN_LINK_SHARE: f64 = 1e-3;

pub struct State {
    rec: Records,
    last: Last,
    brain: Brain,
    limits: RegistryLimits,
}

impl State {
    /// An empty coordinator whose coflow ids start at `first_coflow_id` (see
    /// [`first_coflow_id`] for ids unique across restarts).
    pub fn new(first_coflow_id: u64) -> State {
        State::with_limits(first_coflow_id, RegistryLimits::default())
    }

    /// [`State::new`], recording at most what `limits` allow (the handlers check with
    /// `room_for_*` first).
    pub fn with_limits(first_coflow_id: u64, limits: RegistryLimits) -> State {
        State {
            rec: Records::new(first_coflow_id),
            last: Last::default(),
            brain: Brain::default(),
            limits,
        }
    }

    // Handlers. ---------------------------------------------------------------------------

    /// A client registers a coflow at `now`; returns its id.
    #[allow(clippy::too_many_arguments)]
    pub fn register_coflow(
        &mut self,
        now: f64,
        name: String,
        num_flows: u32,
        deadline_rel_s: Option<f64>,
        weight: f64,
        parents: Vec<u64>,
    ) -> Result<u64, DagError> {
        (self.rec).register_coflow(now, name, num_flows, deadline_rel_s, weight, parents)
    }

    /// Keep coflow `id`'s flow sizes from the scheduler (a non-clairvoyant coflow under hug,
    /// drf or psp); false if it is not registered.
    pub fn hide_sizes(&mut self, id: u64) -> bool {
        let c = self.rec.coflows.get_mut(&id);
        c.map(|c| c.sizes_hidden = true).is_some()
    }

    /// Something the policy reads beside the records changed (a reported vector): decide anew.
    pub fn policy_input_changed(&mut self) {
        self.rec.dirty.major = true;
    }

    /// The coflow of daemon `port`'s flow number `flow`.
    pub fn coflow_of(&self, port: usize, flow: u64) -> Option<u64> {
        self.rec.flows.get(&(port, flow)).map(|f| f.coflow)
    }

    /// The coflow of daemon `port`'s flow number `flow` and the port it sends to (the outside
    /// port, one past the daemons, for a receiver outside the daemon set).
    pub fn flow_ends(&self, port: usize, flow: u64) -> Option<(u64, usize)> {
        let f = self.rec.flows.get(&(port, flow))?;
        Some((f.coflow, f.dst.unwrap_or(self.rec.daemons.len())))
    }

    /// The fabric the scheduler sees: one port per daemon ever registered, then the outside.
    pub fn fabric(&self) -> coflowkit_model::Fabric {
        self.rec.fabric()
    }

    /// The shuffles as the inter-transfer controller sees them: every coflow with a flow
    /// running, its class (arrival: when it became READY, as the scheduler sees it; bytes left;
    /// weight; priority 0, which the ITC's own records fill in).
    pub fn running_transfers(&self) -> Vec<(u64, itc::Transfer)> {
        (self.rec.coflows.values())
            .filter(|c| c.flows.running() > 0)
            .map(|c| {
                let left: f64 = (c.flows.iter())
                    .filter_map(|k| self.rec.flows.get(k))
                    .filter(|f| !f.done)
                    .map(|f| (f.size_bytes - f.sent_bytes).max(0.0))
                    .sum();
                let t = itc::Transfer {
                    arrival_s: c.arrival_s,
                    bytes: left,
                    priority: 0,
                    weight: if c.weight > 0.0 { c.weight } else { 1.0 },
                };
                (c.id, t)
            })
            .collect()
    }

    /// The ITC's share of every NIC for the shuffles (clamped to [MIN_LINK_SHARE, 1]); a
    /// change makes the next round a full one.
    pub fn set_link_share(&mut self, share: f64) {
        let share = share.clamp(MIN_LINK_SHARE, 1.0);
        if (share - self.rec.link_share).abs() > 1e-9 {
            self.rec.link_share = share;
            self.rec.dirty.major = true;
        }
    }

    /// See [`State::set_link_share`].
    pub fn link_share(&self) -> f64 {
        self.rec.link_share
    }

    /// The coflow is gone: its flows and objects are forgotten, daemons told.
    pub fn unregister(&mut self, id: u64) {
        self.rec.unregister(id)
    }

    /// A daemon (re-)registers with its soft state at `now`; returns its port. Flows it no
    /// longer lists are forgotten, the ones it lists replace what was known.
    pub fn register_daemon(
        &mut self,
        now: f64,
        addr: &str,
        nic_bytes_per_s: f64,
        objects: &[StoredObject],
        flows: &[FlowInfo],
    ) -> usize {
        (self.rec).register_daemon(now, addr, nic_bytes_per_s, objects, flows)
    }

    /// A put started streaming in (`pending`), completed, or was abandoned.
    pub fn put_done(&mut self, now: f64, port: usize, o: &StoredObject) {
        self.rec.put_done(now, port, o)
    }

    /// A get started at `now`.
    pub fn start_flow(&mut self, now: f64, port: usize, f: &FlowInfo) {
        self.rec.start_flow(now, port, f)
    }

    /// A progress report: bytes sent so far, and whether the flow ended (or failed).
    pub fn progress(&mut self, port: usize, flow: u64, sent: u64, done: bool, failed: bool) {
        if let Some(slot) = self.rec.progress(port, flow, sent, done, failed) {
            self.last.flow_ended(slot, &mut self.brain.clock);
        }
    }

    pub fn set_connected(&mut self, port: usize, connected: bool) {
        self.rec.set_connected(port, connected)
    }

    /// Forget the daemons that have stayed disconnected for `after_s`, as seen by the sweeps
    /// (this one at `now`); returns their addresses. See `Records::forget_disconnected`.
    pub fn forget_disconnected(&mut self, now: f64, after_s: f64) -> Vec<String> {
        self.rec.forget_disconnected(now, after_s)
    }

    /// A daemon subscribes to its rates: connected, in a new session (returned).
    pub fn subscribe(&mut self, port: usize) -> u64 {
        self.rec.daemons[port].session += 1;
        self.rec.set_connected(port, true);
        self.rec.daemons[port].session
    }

    /// A rate subscription of `session` ended: the daemon is disconnected unless it subscribed
    /// again since. Returns whether it was.
    pub fn unsubscribe(&mut self, port: usize, session: u64) -> bool {
        if self.rec.daemons[port].session != session {
            return false;
        }
        self.rec.set_connected(port, false);
        true
    }

    // What it knows (read only). -------------------------------------------------------------

    /// Whether an event waits for [`State::step`].
    pub fn pending(&self) -> bool {
        self.rec.dirty.major || self.rec.dirty.flow_done
    }

    /// No coflow event pending and no flow running: a safety-net tick has nothing to do.
    pub fn idle(&self) -> bool {
        !self.rec.dirty.major && self.rec.flows.values().all(|f| f.done)
    }

    /// Every port's daemon, forgotten ones included (`gone`: their ports wait for reuse).
    pub fn daemons(&self) -> &[Daemon] {
        &self.rec.daemons
    }

    /// How many daemons are registered now (forgotten ones not counted).
    pub fn live_daemons(&self) -> usize {
        self.rec.live_daemons()
    }

    /// The port of the daemon at `addr`, if registered.
    pub fn port_of(&self, addr: &str) -> Option<usize> {
        self.rec.by_addr.get(addr).copied()
    }

    /// Registered coflows by id.
    pub fn coflows(&self) -> impl Iterator<Item = &CoflowRec> {
        self.rec.coflows.values()
    }

    pub fn coflow(&self, id: u64) -> Option<&CoflowRec> {
        self.rec.coflows.get(&id)
    }

    pub fn flows(&self) -> impl Iterator<Item = (&FlowKey, &FlowRec)> {
        self.rec.flows.iter()
    }

    pub fn flow(&self, key: FlowKey) -> Option<&FlowRec> {
        self.rec.flows.get(&key)
    }

    /// Where the object `data_id` of `coflow` lives: (port, size).
    pub fn locate(&self, coflow: u64, data_id: &str) -> Option<(usize, u64)> {
        self.rec
            .objects
            .get(&(coflow, data_id.to_string()))
            .copied()
    }

    pub fn objects(&self) -> usize {
        self.rec.objects.len()
    }

    /// The coflow's place in its DAG (with its DAG's finished bytes).
    pub fn dag_pos(&self, coflow: u64) -> Option<DagPos> {
        self.rec.dags.pos(coflow)
    }

    /// The active coflows' ids in the scheduler's priority order at the last full round,
    /// highest first; empty when the policy keeps no order (fair sharing, pfp, wss, ...).
    pub fn priority_order(&self) -> &[u64] {
        &self.last.order
    }

    /// Full scheduling rounds so far.
    pub fn rounds(&self) -> u64 {
        self.brain.rounds
    }

    /// Hand-ons of freed bandwidth without a full round so far.
    pub fn hand_ons(&self) -> u64 {
        self.brain.hand_ons
    }
}

/// Coflow ids unique across coordinator restarts from the start time in milliseconds since
/// the Unix epoch (read by the caller): those in the high bits, a counter in the low 20.
pub fn first_coflow_id(unix_ms: u64) -> u64 {
    (unix_ms << 20) + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::RateUpdate;
    use coflowkit_sched::{build, SchedOptions, Scheduler, SchedulerKind};

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

    /// Adversarial pass 33, B6: the DAG table follows the coflows held. 10,000 coflows
    /// registered and unregistered leave nothing behind; a child naming a parent of a DAG
    /// forgotten that way starts a new DAG; a parent never issued is still refused.
    #[test]
    fn unregistered_dags_are_forgotten_and_a_late_child_starts_a_new_one() {
        let mut s = State::new(1);
        let mut last = 0;
        for i in 0..10_000 {
            last = s
                .register_coflow(i as f64, "c".into(), 0, None, 1.0, vec![])
                .unwrap();
            s.unregister(last);
        }
        assert_eq!(s.rec.dags.remembered(), (0, 0));
        let p = s
            .register_coflow(1.0, "p".into(), 0, None, 1.0, vec![])
            .unwrap();
        let child = s
            .register_coflow(2.0, "c".into(), 0, None, 1.0, vec![p, last])
            .unwrap();
        assert_eq!(
            s.dag_pos(child).map(|d| d.internal),
            Some(1),
            "joins p's DAG"
        );
        let orphan = s
            .register_coflow(3.0, "o".into(), 0, None, 1.0, vec![last])
            .unwrap();
        let d = s.dag_pos(orphan).unwrap();
        assert_eq!((d.internal, d.finished_bytes), (0, 0.0));
        assert_ne!(Some(d.external), s.dag_pos(p).map(|d| d.external));
        let never = s.register_coflow(4.0, "n".into(), 0, None, 1.0, vec![orphan + 100]);
        assert!(never.is_err(), "a parent never issued is unknown");
    }

    /// The ITC's share for the shuffles scales every NIC the scheduler sees (a held shuffle
    /// keeps a sliver); the running coflows are its transfers, with the bytes they have left.
    #[test]
    fn the_link_share_scales_the_nics_the_scheduler_divides() {
        let mut s = State::new(1);
        let a = s.register_daemon(0.0, "a:1", 100.0, &[], &[]);
        let b = s.register_daemon(0.0, "b:1", 100.0, &[], &[]);
        s.set_connected(a, true);
        s.set_connected(b, true);
        let c = s
            .register_coflow(1.5, "c".into(), 1, None, 2.0, vec![])
            .unwrap();
        s.register_coflow(0.0, "idle".into(), 1, None, 1.0, vec![])
            .unwrap();
        // It arrives when READY (its hinted gets started), as for the scheduler.
        s.start_flow(2.5, a, &flow(1, c, "b:1", 10_000));
        let t = s.running_transfers();
        assert_eq!(t.len(), 1);
        assert_eq!(
            (t[0].0, t[0].1.arrival_s, t[0].1.bytes, t[0].1.weight),
            (c, 2.5, 1e4, 2.0)
        );
        let mut fair = build(SchedulerKind::Fair, &SchedOptions::default());
        let rate = |s: &mut State, fair: &mut dyn Scheduler| {
            let (_, ups) = s.decide(fair, 0.0);
            ups[a]
                .rates
                .iter()
                .find(|r| r.flow == 1)
                .unwrap()
                .bytes_per_s
        };
        assert!((rate(&mut s, fair.as_mut()) - 100.0).abs() < 1e-9);
        s.set_link_share(0.25);
        assert_eq!(s.fabric().up_bytes_per_s[a], 25.0);
        assert!((rate(&mut s, fair.as_mut()) - 25.0).abs() < 1e-9);
        s.set_link_share(0.0);
        assert_eq!(s.link_share(), MIN_LINK_SHARE);
        assert!(rate(&mut s, fair.as_mut()) <= 100.0 * MIN_LINK_SHARE + 1e-9);
    }

    /// Two daemons at 100 B/s; a small and a large coflow from A to B. Varys (SEBF) gives the
    /// whole link to the small one; fair shares it; the rates are what the shared scheduler says.
    #[test]
    fn rounds_call_the_shared_scheduler() {
        let mut s = State::new(1);
        let a = s.register_daemon(0.0, "a:1", 100.0, &[], &[]);
        let b = s.register_daemon(0.0, "b:1", 100.0, &[], &[]);
        s.set_connected(a, true);
        s.set_connected(b, true);
        let big = s
            .register_coflow(0.0, "big".into(), 1, None, 1.0, vec![])
            .unwrap();
        let small = s
            .register_coflow(0.0, "small".into(), 1, None, 1.0, vec![])
            .unwrap();
        s.start_flow(0.0, a, &flow(1, big, "b:1", 10_000));
        s.start_flow(0.0, a, &flow(2, small, "b:1", 100));
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
        assert!(s.pending());
        let (_, ups) = s.decide(varys.as_mut(), 1.0);
        assert_eq!(ups[a].rates.len(), 1);
        assert!((rate(&ups[a], 1) - 100.0).abs() < 1e-9);
    }

    /// The decision clock of the simulator runs here too: under SEBF a flow's end hands its
    /// bandwidth to the flow waiting on its port without a full round; fair (max-min)
    /// decides in full; a coflow's end always does.
    #[test]
    fn a_flow_end_hands_bandwidth_on_without_a_round() {
        let mut s = State::new(1);
        let a = s.register_daemon(0.0, "a:1", 100.0, &[], &[]);
        let b = s.register_daemon(0.0, "b:1", 100.0, &[], &[]);
        let c = s.register_daemon(0.0, "c:1", 100.0, &[], &[]);
        for p in [a, b, c] {
            s.set_connected(p, true);
        }
        // X = {a->b: 100, a->c: 1000}, Y = {a->c: 5000}: X first (smaller); X's a->b holds
        // a's uplink, a->c waits behind it as Y's does.
        let x = s
            .register_coflow(0.0, "x".into(), 0, None, 1.0, vec![])
            .unwrap();
        let y = s
            .register_coflow(0.0, "y".into(), 0, None, 1.0, vec![])
            .unwrap();
        s.start_flow(0.0, a, &flow(1, x, "b:1", 100));
        s.start_flow(0.0, a, &flow(2, x, "c:1", 1000));
        s.start_flow(0.0, a, &flow(3, y, "c:1", 5000));
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
        assert_eq!((s.rounds(), s.hand_ons()), (1, 1));
        assert!((rate(&round.updates[a], 2) - 100.0).abs() < 1e-9);
        assert_eq!(rate(&round.updates[a], 3), 0.0);
        // X ends: a full round.
        s.progress(a, 2, 1000, true, false);
        let round = s.step(sebf.as_mut(), 2.0, false).expect("a coflow ended");
        assert!(round.full);
        assert!((rate(&round.updates[a], 3) - 100.0).abs() < 1e-9);
        // Max-min decides in full on a flow's end.
        let mut fair = build(SchedulerKind::Fair, &SchedOptions::default());
        let z = s
            .register_coflow(0.0, "z".into(), 0, None, 1.0, vec![])
            .unwrap();
        s.start_flow(0.0, b, &flow(4, z, "c:1", 1000));
        s.start_flow(0.0, b, &flow(5, z, "a:1", 1000));
        assert!(s.step(fair.as_mut(), 3.0, false).unwrap().full);
        s.progress(b, 4, 1000, true, false);
        assert!(s.step(fair.as_mut(), 4.0, false).unwrap().full);
    }

    /// 100,000 flows of one coflow, a third of them failing: each failure leaves the coflow
    /// and each end is counted without a scan of the coflow (both scanned it, 10^10 steps in
    /// all here), and the coflow ends exactly at its last flow's end.
    #[test]
    fn one_coflow_of_100_thousand_flows_ends_flow_by_flow() {
        let n = 100_000u64;
        let mut s = State::new(1);
        let a = s.register_daemon(0.0, "a:1", 100.0, &[], &[]);
        let b = s.register_daemon(0.0, "b:1", 100.0, &[], &[]);
        s.set_connected(a, true);
        s.set_connected(b, true);
        let c = (s.register_coflow(0.0, "c".into(), 0, None, 1.0, vec![])).unwrap();
        for k in 0..n {
            s.start_flow(0.0, a, &flow(k, c, "b:1", 10));
        }
        // Started again: counted once, in its place.
        s.start_flow(0.0, a, &flow(1, c, "b:1", 10));
        for k in (0..n).step_by(3) {
            s.progress(a, k, 0, false, true);
        }
        let rest: Vec<u64> = (0..n).filter(|k| k % 3 != 0).collect();
        let flows = &s.coflow(c).unwrap().flows;
        assert_eq!((flows.len(), flows.running()), (rest.len(), rest.len()));
        assert!(
            flows.iter().map(|k| k.1).eq(rest.iter().copied()),
            "start order"
        );
        let (last2, ended) = rest.split_last_chunk::<2>().map(|(e, l)| (*l, e)).unwrap();
        for &k in ended {
            s.progress(a, k, 10, true, false);
            s.progress(a, k, 10, true, false); // reported twice: counted once
        }
        assert_eq!(s.coflow(c).unwrap().flows.running(), 2);
        let mut sebf = build(SchedulerKind::Sebf, &SchedOptions::default());
        assert!(s.step(sebf.as_mut(), 1.0, false).unwrap().full);
        s.progress(a, last2[0], 10, true, false);
        assert!(
            !s.step(sebf.as_mut(), 2.0, false).unwrap().full,
            "a flow ended"
        );
        s.progress(a, last2[1], 10, true, false);
        assert!(
            s.step(sebf.as_mut(), 3.0, false).unwrap().full,
            "the coflow ended"
        );
        assert_eq!(s.coflow(c).unwrap().flows.running(), 0);
        s.unregister(c);
        assert_eq!(s.flows().count(), 0);
    }

    /// 50,000 gets that started while their puts streamed in: each put's completion gives its
    /// waiting get its size without a scan of every flow (each scanned them all, 2.5 x 10^9
    /// steps here); a get that failed waits no more, and nothing is left waiting.
    #[test]
    fn puts_completing_find_their_waiting_gets_directly() {
        let n = 50_000u64;
        let mut s = State::new(1);
        let a = s.register_daemon(0.0, "a:1", 100.0, &[], &[]);
        s.register_daemon(0.0, "b:1", 100.0, &[], &[]);
        let c = (s.register_coflow(0.0, "c".into(), 0, None, 1.0, vec![])).unwrap();
        for k in 0..n {
            let f = FlowInfo {
                size_pending: true,
                ..flow(k, c, "b:1", 0)
            };
            s.start_flow(0.0, a, &f);
        }
        s.progress(a, 7, 0, false, true);
        assert_eq!(s.rec.waiting.len() as u64, n - 1);
        for k in 0..n {
            let o = StoredObject {
                coflow: c,
                data_id: format!("d{k}"),
                size_bytes: 100 + k,
                ..Default::default()
            };
            s.put_done(0.0, a, &o);
        }
        for k in (0..n).filter(|&k| k != 7) {
            let f = s.flow((a, k)).unwrap();
            assert!(!f.size_pending, "flow {k}");
            assert_eq!(f.size_bytes, (100 + k) as f64);
        }
        assert!(s.flow((a, 7)).is_none());
        assert!(s.rec.waiting.is_empty());
    }

    #[test]
    fn not_ready_until_hinted_gets_started_and_restart_rebuilds() {
        let mut s = State::new(1);
        let a = s.register_daemon(0.0, "a:1", 100.0, &[], &[]);
        s.set_connected(a, true);
        let c = s
            .register_coflow(0.0, String::new(), 2, None, 1.0, vec![])
            .unwrap();
        s.start_flow(0.0, a, &flow(1, c, "", 50));
        let mut fair = build(SchedulerKind::Fair, &SchedOptions::default());
        let (_, ups) = s.decide(fair.as_mut(), 0.0);
        assert_eq!(ups[a].rates[0].bytes_per_s, 0.0, "not READY yet");
        s.start_flow(0.0, a, &flow(2, c, "", 50));
        let (_, ups) = s.decide(fair.as_mut(), 0.0);
        assert!(ups[a].rates.iter().all(|r| r.bytes_per_s > 0.0));

        // A fresh coordinator learns the coflow and its flows from the daemon's re-registration.
        let mut s2 = State::new(1);
        let objs = [StoredObject {
            coflow: c,
            data_id: "x".into(),
            size_bytes: 5,
            ..Default::default()
        }];
        let a2 = s2.register_daemon(0.0, "a:1", 100.0, &objs, &[flow(2, c, "", 50)]);
        assert!(s2.coflow(c).is_some());
        assert_eq!(s2.locate(c, "x"), Some((a2, 5)));
        s2.set_connected(a2, true);
        let (_, ups) = s2.decide(fair.as_mut(), 0.0);
        assert_eq!(ups[a2].rates.len(), 1);
        assert!(ups[a2].rates[0].bytes_per_s > 0.0);
        // Unregister forgets everything about the coflow and tells the daemons.
        s2.unregister(c);
        assert!(s2.objects() == 0 && s2.flows().count() == 0);
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
        let mut s = State::new(1);
        let a = s.register_daemon(0.0, "a:1", 100.0, &[], &[]);
        let b = s.register_daemon(0.0, "b:1", 100.0, &[], &[]);
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

        let p = s
            .register_coflow(0.0, "p".into(), 0, None, 1.0, vec![])
            .unwrap();
        s.start_flow(0.0, a, &flow(1, p, "b:1", 10_000));
        s.progress(a, 1, 1500, false, false); // past Q1: the DAG is in Q2
        s.decide(aalo.as_mut(), 0.0);
        let x = s
            .register_coflow(0.0, "x".into(), 0, None, 1.0, vec![])
            .unwrap();
        let ch = s
            .register_coflow(0.0, "ch".into(), 0, None, 1.0, vec![p])
            .unwrap();
        let (pd, xd, cd) = (
            s.dag_pos(p).unwrap(),
            s.dag_pos(x).unwrap(),
            s.dag_pos(ch).unwrap(),
        );
        assert_eq!((cd.external, cd.internal), (pd.external, 1));
        assert_ne!(xd.external, pd.external);
        s.start_flow(0.0, a, &flow(2, x, "b:1", 10_000));
        s.start_flow(0.0, a, &flow(3, ch, "b:1", 10_000));
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
        assert_eq!(s.dag_pos(ch).unwrap().finished_bytes, 10_000.0);
        let g = s
            .register_coflow(0.0, "g".into(), 0, None, 1.0, vec![ch, x])
            .unwrap();
        assert_eq!(s.dag_pos(g).unwrap().internal, 2);
        assert_eq!(s.dag_pos(g).unwrap().external, pd.external, "the older DAG");
        let err = s.register_coflow(0.0, "h".into(), 0, None, 1.0, vec![12345]);
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
        let mut s = State::new(1);
        let a = s.register_daemon(0.0, "a:1", 100.0, &[], &[]);
        let b = s.register_daemon(0.0, "b:1", 100.0, &[], &[]);
        s.set_connected(a, true);
        s.set_connected(b, true);
        let c = s
            .register_coflow(0.0, String::new(), 0, None, 1.0, vec![])
            .unwrap();
        let object = |pending, size| StoredObject {
            coflow: c,
            data_id: "d1".into(),
            size_bytes: size,
            pending,
            abandoned: false,
        };
        s.put_done(0.0, a, &object(true, 0));
        s.start_flow(
            0.0,
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
        s.put_done(0.0, a, &object(false, 5000));
        assert_eq!(s.flow((a, 1)).unwrap().size_bytes, 5000.0);
        assert_eq!(rate(&s.decide(varys.as_mut(), 0.0).1[a]), 100.0);
        // The completion reported before the start: the start takes the size on record.
        s.start_flow(
            0.0,
            a,
            &FlowInfo {
                size_pending: true,
                data_id: "d1".into(),
                ..flow(2, c, "b:1", 0)
            },
        );
        assert!(!s.flow((a, 2)).unwrap().size_pending);
        // An abandoned put is forgotten.
        s.put_done(
            0.0,
            a,
            &StoredObject {
                abandoned: true,
                ..object(false, 0)
            },
        );
        assert_eq!(s.objects(), 0);
    }

    /// A daemon disconnected for the timeout is forgotten: its flows and objects go, flows
    /// towards it count as going outside, the next new daemon takes its port (the fabric does
    /// not grow), and one that reconnects in time is kept.
    #[test]
    fn daemons_disconnected_past_the_timeout_are_forgotten_and_their_ports_reused() {
        let mut s = State::new(1);
        let a = s.register_daemon(0.0, "a:1", 100.0, &[], &[]);
        let b = s.register_daemon(0.0, "b:1", 100.0, &[], &[]);
        let c = s.register_daemon(0.0, "c:1", 100.0, &[], &[]);
        let sa = s.subscribe(a);
        let sb = s.subscribe(b);
        s.subscribe(c);
        let co = s
            .register_coflow(0.0, "co".into(), 2, None, 1.0, vec![])
            .unwrap();
        let obj = StoredObject {
            coflow: co,
            data_id: "x".into(),
            size_bytes: 5,
            ..Default::default()
        };
        s.put_done(0.0, b, &obj);
        s.start_flow(0.0, a, &flow(1, co, "b:1", 100));
        s.start_flow(0.0, b, &flow(2, co, "a:1", 100));
        assert!(s.unsubscribe(b, sb) && s.unsubscribe(a, sa));
        // A sees the disconnections; a comes back before the timeout.
        assert!(s.forget_disconnected(10.0, 30.0).is_empty());
        s.subscribe(a);
        assert!(s.forget_disconnected(39.0, 30.0).is_empty(), "29 s only");
        assert_eq!(s.forget_disconnected(40.0, 30.0), vec!["b:1".to_string()]);
        assert!(s.daemons()[b].gone && !s.daemons()[a].gone && !s.daemons()[c].gone);
        assert_eq!((s.live_daemons(), s.port_of("b:1")), (2, None));
        assert_eq!(s.locate(co, "x"), None, "its objects are not located");
        assert!(s.flow((b, 2)).is_none(), "its flows end");
        assert_eq!(s.flow((a, 1)).unwrap().dst, None, "towards it: outside");
        assert!(s.pending());
        let mut fair = build(SchedulerKind::Fair, &SchedOptions::default());
        let (_, ups) = s.decide(fair.as_mut(), 40.0);
        assert_eq!(ups.len(), 3, "one update per port, the free one too");
        // A new daemon takes the free port; an old session's end cannot disconnect it.
        let d = s.register_daemon(41.0, "d:1", 50.0, &[], &[]);
        assert_eq!(d, b);
        assert_eq!(s.daemons().len(), 3);
        let sd = s.subscribe(d);
        assert!(!s.unsubscribe(d, sb));
        assert!(s.daemons()[d].connected && !s.daemons()[d].gone);
        assert!(sd > sb);
        // Forgetting is idempotent, and 0 s forgets at the first sweep.
        assert!(s.forget_disconnected(100.0, 30.0).is_empty());
        assert!(s.unsubscribe(d, sd));
        assert_eq!(s.forget_disconnected(100.0, 0.0), vec!["d:1".to_string()]);
    }
}

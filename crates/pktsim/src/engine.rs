//! The discrete-time loop of thesis Listing 4. Each timestep: packets landing now are
//! delivered (to a switch output queue or a host's RX queue); every node receives (all control
//! packets, up to `rx_rate` data packets), grants, then sends at most one data packet; every
//! busy switch port forwards what its capacity allows. Receiving before granting and granting
//! before sending makes a grant-to-data loop exactly 4 hops: RTT = 8 timesteps in a rack.
//!
//! The nodes are driven through their sans-IO contract only (`coflowkit_shuffle::proto::node`):
//! a packet landing at a host is handled at once and its replies (ACKs) leave in the same
//! timestep (`poll_control`); once per timestep, after every arrival, each host polls
//! `poll_transmit` for its grants and one data packet. Time is the timestep.

use crate::metrics::Metrics;
use std::collections::VecDeque;

use coflowkit_shuffle::matrix::PacketMatrix;
use coflowkit_shuffle::proto::{Clock, Kind, Node, NodeSpec, Packet, Protocol};

use crate::bounds::Bounds;
use crate::config::{Priorities, SimConfig, SimError};
use crate::loss::{Impair, LossCounts};
use crate::network::{Port, Wheel, HOST};
use crate::preempt::NodeSchedule;
use crate::topology::Topology;
use crate::variation::PortVariation;

/// How far a run has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Timesteps simulated.
    pub steps: u64,
    /// Data packets delivered, of `total`.
    pub delivered: u64,
    pub total: u64,
}

/// A simulation in progress. `run` drives one to the end; tests can step it.
pub struct Sim {
    /// What the run counts (the report reads them).
    pub(crate) m: Metrics,
    pub(crate) cfg: SimConfig,
    pub(crate) protocol: Protocol,
    pub(crate) topo: Topology,
    pub(crate) bounds: Bounds,
    n: usize,
    now: u64,
    nodes: Vec<Node>,
    wheel: Wheel,
    ports: Vec<Port>,
    active: Vec<u32>,
    rx: Vec<VecDeque<Packet>>,
    /// Data packets host h processed in timestep `rx_stamp[h]`.
    rx_used: Vec<u32>,
    rx_stamp: Vec<u64>,
    scratch: Vec<Packet>,
    occupancy: Vec<u64>,
    /// Audit: packets each sender has been allowed (max cumulative grant seen), per message.
    allowed: Vec<u32>,
    step_left: Vec<u64>,
    cur_step: usize,
    barrier_due: Option<u64>,
    idle: u64,
    idle_limit: u64,
    max_steps: u64,
    /// Preemption schedules (empty when off) and whether each node is preempted now.
    sched: Vec<NodeSchedule>,
    preempted: Vec<bool>,
    stalled: Vec<bool>,
    /// GlobalSched's all-reduce: period in timesteps (0: every timestep) and the value in
    /// flight (sampled at the start of the current period, delivered at its end).
    allreduce_period: u64,
    allreduce_next: u64,
    allreduce_pending: u64,
    allreduce_value: u64,
    allreduce_sampled: u64,
    /// Per-port capacity variation (empty when off).
    variation: Vec<PortVariation>,
    /// Wire impairments (None: a loss-free wire) and the packets they release this timestep.
    impair: Option<Impair>,
    released: Vec<(u32, Packet)>,
    spare: Vec<Packet>,
}

impl Sim {
    pub fn new(m: &PacketMatrix, cfg: &SimConfig) -> Result<Sim, SimError> {
        let protocol = cfg.validate(m.n)?;
        let n = m.n;
        let topo = Topology::new(n, cfg.racks, cfg.placement, cfg.seed);
        let core_milli = topo.core_milli(cfg.core_fraction);
        let bounds = Bounds::new(m, &topo, core_milli);
        let gamma = bounds.lower();
        let mut nodes = Vec::with_capacity(n);
        let mut data_total = 0;
        let recovery = cfg.recovery();
        for i in 0..n {
            let senders: Vec<u32> = (0..n)
                .filter(|&s| s != i && m.get(s, i) > 0)
                .map(|s| s as u32)
                .collect();
            let row = &m.packets[i * n..(i + 1) * n];
            data_total += row
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, &x)| x)
                .sum::<u64>();
            nodes.push(Node::new(&NodeSpec {
                id: i,
                out_sizes: row,
                senders: &senders,
                protocol: &protocol,
                grant: &cfg.grant,
                madd_gamma: (gamma.num, gamma.den),
                clock: Clock::default(),
                recovery,
                seed: cfg.seed,
            }));
        }
        let r = topo.racks as u32;
        let mut ports = Vec::with_capacity(topo.ports());
        let edge = cfg.priorities != Priorities::None;
        let core = cfg.priorities == Priorities::All;
        for i in 0..n {
            ports.push(Port::new(edge, 1000, HOST, topo.rack(i) as u32));
        }
        for rack in 0..r {
            let mut up = Port::new(core, core_milli, r, rack);
            // At most one data packet per host of the rack reaches its uplink per timestep.
            up.never_queues = core_milli >= 1000 * topo.hosts_per_rack as u64;
            ports.push(up);
        }
        for rack in 0..r {
            ports.push(Port::new(core, core_milli, rack, r));
        }
        let mut step_left = vec![0u64; n + 1];
        if protocol == Protocol::Lockstep {
            for i in 0..n {
                for (k, left) in step_left.iter_mut().enumerate().take(n).skip(1) {
                    *left += m.get(i, (i + k) % n);
                }
            }
        }
        let lower = gamma.value().ceil() as u64;
        let max_steps = if cfg.max_steps > 0 {
            cfg.max_steps
        } else {
            // Loss recovery: room for a few dozen repairs of one timer period each.
            // Saturating: a huge bound or timer means "until done", not an overflow.
            (50u64.saturating_mul(lower))
                .saturating_add(100_000)
                .saturating_add(recovery.map_or(0, |r| r.timeout.saturating_mul(40)))
        };
        // The per-timestep series grow as steps run: reserve for the run's likely length, but
        // never for more steps than may run nor more than a few MB up front (a cell of 2^30
        // packets made `lower` reserve 4 GB per series and abort, whatever --max-steps said).
        let series = (lower.saturating_add(64))
            .min(max_steps.saturating_add(1))
            .min(1 << 20) as usize;
        let mut sim = Sim {
            m: Metrics {
                data_total,
                data_done: 0,
                last_rx: 0,
                host_rx_end: vec![0; n],
                host_tx_end: vec![0; n],
                up_series: Vec::with_capacity(series),
                done_series: Vec::with_capacity(series),
                messages: (0..n)
                    .map(|i| (0..n).filter(|&j| j != i && m.get(i, j) > 0).count() as u64)
                    .sum(),
                down_series: Vec::with_capacity(series),
                peak_switch: vec![0; topo.racks + 1],
                peak_port: 0,
                hops: 0,
                violations: 0,
                preempted_steps: vec![0; n],
                occupancy_sum: vec![0; topo.racks + 1],
                peak_port_class: [0; 3],
                class_sum: [0; 3],
            },
            cfg: cfg.clone(),
            protocol,
            n,
            now: 0,
            nodes,
            wheel: Wheel::new(cfg.hop_latency, 4),
            ports,
            active: Vec::new(),
            rx: (0..n).map(|_| VecDeque::new()).collect(),
            rx_used: vec![0; n],
            rx_stamp: vec![u64::MAX; n],
            scratch: Vec::new(),
            occupancy: vec![0; topo.racks + 1],
            allowed: if cfg.audit {
                vec![0; n * n]
            } else {
                Vec::new()
            },
            step_left,
            cur_step: 1,
            barrier_due: Some(0),
            idle: 0,
            // With loss recovery, nothing may move for up to two timer periods.
            idle_limit: (2 * lower)
                .max(10_000)
                .max(recovery.map_or(0, |r| 3 * r.timeout)),
            max_steps,
            sched: if cfg.preempt.on() {
                (0..n)
                    .map(|i| NodeSchedule::new(&cfg.preempt, cfg.seed, i))
                    .collect()
            } else {
                Vec::new()
            },
            preempted: vec![false; n],
            stalled: Vec::new(),
            allreduce_period: allreduce_period(cfg, n),
            allreduce_next: 0,
            allreduce_pending: 0,
            allreduce_value: 0,
            allreduce_sampled: 0,
            variation: Vec::new(),
            impair: cfg.loss.on().then(|| Impair::new(cfg.loss, cfg.seed)),
            released: Vec::new(),
            spare: Vec::new(),
            topo,
            bounds,
        };
        if cfg.bw_variation.on() {
            for (i, pt) in sim.ports.iter_mut().enumerate() {
                let mut v = PortVariation::new(&cfg.bw_variation, cfg.seed, i, pt.cap_milli);
                pt.cap_milli = v.redraw(0);
                pt.never_queues = false;
                sim.variation.push(v);
            }
        }
        if cfg.grant.pro_rata_overcommit {
            let busiest = (0..n).map(|i| m.in_network(i)).max().unwrap_or(0);
            for i in 0..n {
                sim.nodes[i].set_overcommit_share(m.in_network(i), busiest);
            }
        }
        // Announcements at time 0.
        for i in 0..n {
            let mut out = std::mem::take(&mut sim.scratch);
            while let Some(p) = sim.nodes[i].poll_control() {
                out.push(p);
            }
            sim.flush(i, &mut out);
            sim.scratch = out;
        }
        Ok(sim)
    }

    /// Stalls node `i` (preempted until un-stalled, on top of any schedule): the thesis'
    /// stalled-sender and stalled-receiver examples.
    pub fn stall(&mut self, i: usize, stalled: bool) {
        if self.stalled.is_empty() {
            self.stalled = vec![false; self.n];
        }
        self.stalled[i] = stalled;
    }

    /// Whether node `i` is preempted in the current timestep.
    pub fn preempted(&self, i: usize) -> bool {
        self.preempted[i]
    }

    pub fn now(&self) -> u64 {
        self.now
    }

    /// Timestep after the last data packet host `i` received and sent (0: none).
    pub fn host_ends(&self, i: usize) -> (u64, u64) {
        (self.m.host_rx_end[i], self.m.host_tx_end[i])
    }

    pub fn node(&self, i: usize) -> &Node {
        &self.nodes[i]
    }

    /// What the wire impairments did (None: a loss-free wire).
    pub fn loss_counts(&self) -> Option<LossCounts> {
        self.impair.as_ref().map(|im| im.counts)
    }

    pub fn progress(&self) -> Progress {
        Progress {
            steps: self.now,
            delivered: self.m.data_done,
            total: self.m.data_total,
        }
    }

    /// All data delivered.
    pub fn finished(&self) -> bool {
        self.m.data_done == self.m.data_total
    }

    /// Stopped without finishing: out of time, or nothing moved for a long time.
    pub fn stuck(&self) -> bool {
        self.now >= self.max_steps || self.idle > self.idle_limit
    }

    pub fn run_to_end(&mut self) {
        while !self.finished() && !self.stuck() {
            self.step();
        }
    }

    /// Puts a host's packets on its uplink. A control packet whose every output port on the
    /// way is prioritized would cross each switch in the timestep it lands, so it is sent
    /// straight to its host with the whole path's latency (same arrival, fewer wheel visits).
    fn flush(&mut self, host: usize, out: &mut Vec<Packet>) {
        if let Some(im) = &mut self.impair {
            let mut kept = std::mem::take(&mut self.spare);
            for p in out.drain(..) {
                im.send(self.now, host as u32, p, &mut kept);
            }
            for p in kept.drain(..) {
                self.put(host, p);
            }
            self.spare = kept;
            return;
        }
        for p in out.drain(..) {
            self.put(host, p);
        }
    }

    /// Puts one packet on host `host`'s uplink.
    fn put(&mut self, host: usize, p: Packet) {
        let at = self.topo.rack_of[host];
        if p.kind != Kind::Data {
            let same = self.topo.rack_of[p.dst as usize] == at;
            let direct = match self.cfg.priorities {
                Priorities::None => None,
                Priorities::Edge => same.then_some(2),
                Priorities::All => Some(if same { 2 } else { 4 }),
            };
            if let Some(hops) = direct {
                self.m.hops += hops - 1;
                self.wheel.send_hops(self.now, hops, HOST, p);
                return;
            }
        }
        self.wheel.send(self.now, at, p);
    }

    fn enqueue(&mut self, port: usize, p: Packet) {
        let pt = &mut self.ports[port];
        if p.kind == Kind::Data {
            pt.data.push_back(p);
            pt.queued_data += 1;
            self.occupancy[pt.switch as usize] += 1;
        } else if pt.prio {
            pt.ctrl.push_back(p);
        } else {
            pt.data.push_back(p);
        }
        if !pt.active {
            pt.active = true;
            self.active.push(port as u32);
        }
    }

    /// One timestep, in named phases: the timestep's clocks (barrier, preemption, all-reduce,
    /// capacity variation), deliver (packets landing at switch ports and hosts), nodes
    /// (receive, grant, send), forward (switch ports drain), then the accounting.
    pub fn step(&mut self) {
        self.clocks();
        let landed = self.deliver();
        let acted = self.nodes();
        self.forward();
        self.account(landed || acted);
    }

    /// The timestep's clocks: the lockstep barrier, who is preempted, the all-reduce, port
    /// capacities that vary.
    fn clocks(&mut self) {
        let now = self.now;
        if self.protocol == Protocol::Lockstep {
            self.lockstep_barrier();
        }
        self.m.done_series.push(0);
        if !self.sched.is_empty() {
            for (h, s) in self.sched.iter_mut().enumerate() {
                self.preempted[h] = s.at(now);
            }
        }
        if !self.stalled.is_empty() {
            for (h, &st) in self.stalled.iter().enumerate() {
                self.preempted[h] = st || (!self.sched.is_empty() && self.sched[h].preempted);
            }
        }
        if !self.sched.is_empty() || !self.stalled.is_empty() {
            for (c, &p) in self.m.preempted_steps.iter_mut().zip(&self.preempted) {
                *c += p as u64;
            }
        }
        if self.cfg.grant.global_exponent.is_some() {
            self.allreduce();
        }
        for (pt, v) in self.ports.iter_mut().zip(&mut self.variation) {
            if now >= v.until {
                pt.cap_milli = v.redraw(now);
            }
        }
    }

    /// Packets the impaired wire held back go on, and packets land: at a host (received at
    /// once unless a backlog waits or the host is out of budget) or at a switch port (queued,
    /// or passed on at once on the priority lane). Returns whether anything moved.
    fn deliver(&mut self) -> bool {
        let now = self.now;
        let mut moved = false;
        let mut delivered = 0u32;
        // 0. Packets the impaired wire held back go on now.
        if self.impair.as_ref().is_some_and(Impair::holding) {
            let mut rel = std::mem::take(&mut self.released);
            if let Some(im) = &mut self.impair {
                im.release(now, &mut rel);
            }
            for (h, p) in rel.drain(..) {
                moved = true;
                self.put(h as usize, p);
            }
            self.released = rel;
        }
        // 1. Packets landing now.
        let landing = self.wheel.take(now);
        if !landing.is_empty() {
            moved = true;
        }
        for e in &landing {
            let p = e.pkt;
            if e.at == HOST {
                let h = p.dst as usize;
                if p.kind == Kind::Data {
                    delivered += 1;
                }
                // A host receives before it grants or sends, and its receiving depends only
                // on what lands now: take the packet at once unless a backlog is ahead of it
                // or the host has used its processing budget.
                if self.rx[h].is_empty()
                    && !self.preempted[h]
                    && (p.kind != Kind::Data || self.rx_room(h))
                {
                    let mut out = std::mem::take(&mut self.scratch);
                    self.receive(h, p);
                    while let Some(r) = self.nodes[h].poll_control() {
                        out.push(r);
                    }
                    if !out.is_empty() {
                        self.flush(h, &mut out);
                    }
                    self.scratch = out;
                } else {
                    self.rx[h].push_back(p);
                }
                continue;
            }
            let dst_rack = self.topo.rack_of[p.dst as usize];
            let port = if e.at as usize == self.topo.racks {
                self.topo.core_port(dst_rack as usize)
            } else if dst_rack == e.at {
                p.dst as usize
            } else {
                self.topo.up_port(e.at as usize)
            };
            let pt = &self.ports[port];
            if (p.kind != Kind::Data && pt.prio) || pt.never_queues {
                // The high-priority queue drains in this timestep anyway, and so does a port
                // that can forward more per timestep than can ever reach it.
                self.wheel.send(now, pt.next, p);
                continue;
            }
            self.enqueue(port, p);
        }
        self.m.hops += landing.len() as u64;
        self.wheel.restore(now, landing);
        self.m.down_series.push(delivered);
        moved
    }

    /// Every node that is not preempted drains its receive backlog, handles its timer and
    /// sends what it has: replies, grants, at most one data packet. Returns whether any did.
    fn nodes(&mut self) -> bool {
        let now = self.now;
        let mut moved = false;
        // 2. Nodes: receive (backlogs), grant, send.
        let mut sent = 0u32;
        let mut out = std::mem::take(&mut self.scratch);
        for h in 0..self.n {
            if self.preempted[h] {
                continue; // its NIC queues what lands; its logic waits
            }
            if !self.rx[h].is_empty() {
                self.drain_rx(h);
            }
            let node = &mut self.nodes[h];
            if node.poll_timeout().is_some_and(|t| t <= now) {
                node.handle_timeout(now);
            }
            // Replies to the packets just handled, the grants decided on them, one data packet.
            let (mut data, mut granted) = (false, false);
            while let Some(p) = node.poll_transmit(now, !data) {
                match p.kind {
                    Kind::Data => {
                        if self.cfg.audit {
                            let a = self.allowed[h * self.n + p.dst as usize];
                            if p.seq >= a.max(p.unsched) {
                                self.m.violations += 1;
                            }
                        }
                        data = true;
                        sent += 1;
                        self.m.host_tx_end[h] = now + 1;
                    }
                    Kind::Grant => granted = true,
                    _ => {}
                }
                out.push(p);
            }
            if self.cfg.audit && granted {
                if let Some((o, max)) = self.nodes[h].grant_budget() {
                    if o > max {
                        self.m.violations += 1;
                    }
                }
            }
            if !out.is_empty() {
                moved = true;
                self.flush(h, &mut out);
            }
        }
        self.scratch = out;
        self.m.up_series.push(sent);
        moved
    }

    /// Switch ports forward: control packets at once, data as their credit allows.
    fn forward(&mut self) {
        let now = self.now;
        // 3. Switch ports forward.
        let mut i = 0;
        while i < self.active.len() {
            let port = self.active[i] as usize;
            let pt = &mut self.ports[port];
            while let Some(c) = pt.ctrl.pop_front() {
                self.wheel.send(now, pt.next, c);
            }
            let elapsed = now + 1 - pt.last;
            pt.last = now + 1;
            // An idle port banks at most one timestep's credit. A fractional capacity keeps
            // the part of a packet it has earned (below 1000) on top, or a port of 0.75
            // packets per timestep would send only every other timestep.
            let bank = if pt.cap_milli.is_multiple_of(1000) {
                pt.cap_milli.max(1000)
            } else {
                pt.cap_milli + 999
            };
            // Saturating: a fast port idle for long would pass 2^64 milli-packets.
            pt.credit = (pt
                .credit
                .saturating_add(pt.cap_milli.saturating_mul(elapsed)))
            .min(bank);
            while let Some(&p) = pt.data.front() {
                if p.kind == Kind::Data {
                    if pt.credit < 1000 {
                        break;
                    }
                    pt.credit -= 1000;
                    pt.queued_data -= 1;
                    self.occupancy[pt.switch as usize] -= 1;
                }
                pt.data.pop_front();
                self.wheel.send(now, pt.next, p);
            }
            self.m.peak_port = self.m.peak_port.max(pt.queued_data);
            let class = if port < self.n {
                0
            } else if port < self.n + self.topo.racks {
                1
            } else {
                2
            };
            self.m.peak_port_class[class] = self.m.peak_port_class[class].max(pt.queued_data);
            self.m.class_sum[class] += pt.queued_data;
            if pt.data.is_empty() && pt.ctrl.is_empty() {
                pt.active = false;
                self.active.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Occupancy samples, the idle count, the clock.
    fn account(&mut self, moved: bool) {
        for ((peak, sum), &occ) in self
            .m
            .peak_switch
            .iter_mut()
            .zip(&mut self.m.occupancy_sum)
            .zip(&self.occupancy)
        {
            *peak = (*peak).max(occ);
            *sum += occ;
        }
        self.idle = if moved { 0 } else { self.idle + 1 };
        self.now += 1;
    }

    /// GlobalSched's all-reduce of the receivers' remaining packets (Eq. 3.14's max_r
    /// total_rem): every `allreduce_period` timesteps the value sampled one period earlier
    /// reaches every receiver (a period of 0 is `Fresh`: the current value, every timestep).
    fn allreduce(&mut self) {
        if self.now >= self.allreduce_next {
            let current = (0..self.n)
                .map(|h| self.nodes[h].rx_remaining())
                .max()
                .unwrap_or(0);
            if self.allreduce_period == 0 {
                self.allreduce_value = current;
                self.allreduce_sampled = self.now;
            } else {
                self.allreduce_value = std::mem::replace(&mut self.allreduce_pending, current);
                self.allreduce_sampled = self.now.saturating_sub(self.allreduce_period);
            }
            self.allreduce_next = self.now + self.allreduce_period.max(1);
        } else if !self.cfg.allreduce_drain {
            return;
        }
        // With `allreduce_drain`, a receiver ages the value by one packet per timestep since
        // it was sampled: no receiver's backlog falls faster than its link delivers.
        let value = if self.cfg.allreduce_drain {
            self.allreduce_value
                .saturating_sub(self.now - self.allreduce_sampled.min(self.now))
        } else {
            self.allreduce_value
        };
        for node in &mut self.nodes {
            node.set_global_max(value);
        }
    }

    /// Whether host `h` may process another data packet this timestep.
    fn rx_room(&mut self, h: usize) -> bool {
        if self.rx_stamp[h] != self.now {
            self.rx_stamp[h] = self.now;
            self.rx_used[h] = 0;
        }
        self.rx_used[h] < self.cfg.rx_rate
    }

    /// Host `h` processes one packet; its replies wait in the node.
    fn receive(&mut self, h: usize, p: Packet) {
        if p.kind == Kind::Data {
            self.rx_used[h] += 1;
        } else if self.cfg.audit && matches!(p.kind, Kind::Grant | Kind::Resend) {
            // A RESEND grants what it asks for.
            let a = &mut self.allowed[p.dst as usize * self.n + p.src as usize];
            let upto = match p.kind {
                Kind::Grant => p.seq,
                _ => p.seq.saturating_add(p.total),
            };
            *a = (*a).max(upto);
        }
        let node = &mut self.nodes[h];
        let (completed, delivered) = (node.inbox().completed, node.inbox().delivered);
        node.handle_packet(self.now, &p);
        let inbox = node.inbox();
        // Only packets new to the application count (not duplicates or retransmissions).
        if inbox.delivered > delivered {
            self.m.data_done += 1;
            self.m.last_rx = self.now;
            self.m.host_rx_end[h] = self.now + 1;
            if self.protocol == Protocol::Lockstep {
                let k = (p.dst as usize + self.n - p.src as usize) % self.n;
                self.step_left[k] -= 1;
            }
        }
        if inbox.completed > completed {
            *self
                .m
                .done_series
                .last_mut()
                .expect("pushed at the start of the step") += 1;
        }
    }

    /// Host `h` works through its RX backlog: every control packet, data up to its budget.
    fn drain_rx(&mut self, h: usize) {
        while let Some(&p) = self.rx[h].front() {
            if p.kind == Kind::Data && !self.rx_room(h) {
                break;
            }
            self.rx[h].pop_front();
            self.receive(h, p);
        }
    }

    /// The lockstep barrier: once every packet of the current step has been received, all
    /// nodes move on `barrier_steps` timesteps later (empty steps are skipped).
    fn lockstep_barrier(&mut self) {
        if self.barrier_due.is_none()
            && self.cur_step < self.n
            && self.step_left[self.cur_step] == 0
        {
            self.barrier_due = Some(self.now + self.cfg.barrier_steps as u64);
        }
        if self.barrier_due.is_some_and(|d| self.now >= d) {
            self.barrier_due = None;
            if self.cur_step == 1 && self.step_left[1] > 0 {
                return; // time 0: step 1 has data, nothing to skip
            }
            loop {
                for node in &mut self.nodes {
                    node.on_barrier(self.cur_step);
                }
                self.cur_step += 1;
                if self.cur_step >= self.n || self.step_left[self.cur_step] > 0 {
                    break;
                }
            }
        }
    }
}

/// Timesteps between all-reduce results: X x ceil(log2 N) x 0.5 RTT for `StaleX` (thesis
/// §6.3.1; RTT = RTTpackets timesteps), 0 for `Fresh`.
fn allreduce_period(cfg: &SimConfig, n: usize) -> u64 {
    let levels = (n as f64).log2().ceil();
    (cfg.allreduce_stale * levels * 0.5 * cfg.grant.rtt_packets as f64).round() as u64
}

//! The endpoint's engine, the only reader of the clock, run in turns by whichever thread holds
//! it (a caller waiting for its exchange, or the endpoint's background thread when no caller
//! does; see `endpoint`). Each turn it takes new operations, reads what the socket holds (in
//! batches), hands each datagram to its operation (or stages it, or answers it for a completed
//! one), fires due timers, polls the operations for packets under the pacer, applies loss
//! injection, writes (in batches), and hands finished operations back; then the thread sleeps
//! in `ppoll` until a datagram, a caller or the next timer.

use std::collections::{HashMap, VecDeque};
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Arc;
use std::time::Instant;

use coflowkit_shuffle::proto::{Kind, Packet};

use crate::batch::{self, RawAddr, RecvBatch};
use crate::completed::Completed;
use crate::config::{EndpointConfig, ExchangeProtocol, ReturnWhen};
use crate::endpoint::Inner;
use crate::error::TransportError;
use crate::loss::Injector;
use crate::op::Op;
use crate::pacer::Pacer;
use crate::staging::Staging;
use crate::stats::Counters;
use crate::wire::{self, Header, HEADER_LEN};

pub type Outcome = Result<Vec<(u32, Vec<u8>)>, TransportError>;

/// A caller's request.
pub struct Start {
    pub op: u64,
    pub protocol: ExchangeProtocol,
    pub sends: Vec<(u32, Vec<u8>)>,
    pub recv_from: Vec<u32>,
    pub reply: SyncSender<Outcome>,
}

struct Active {
    op: Op,
    /// The caller, until answered.
    reply: Option<SyncSender<Outcome>>,
    /// The node had nothing more to send at the end of this turn (its last ACKs are out).
    drained: bool,
    /// A failed operation stays until then, still serving its peers: a rank that gave up on a
    /// dead peer keeps answering the others, so each of them fails naming the dead rank
    /// (or completes, if it needs nothing from it) instead of taking this one for dead.
    linger_until: Option<u64>,
}

/// Receive batches read per turn before the turn sends (a flood cannot starve sending).
const RECV_ROUNDS: usize = 4;
/// Longest sleep while an operation is active: a safety net under every timer.
const MAX_SLEEP_NS: u64 = 1_000_000;

/// How the sending half of a turn ended.
#[derive(Default)]
struct Sent {
    /// The pacer held data back.
    paced: bool,
    /// The batch filled: more may be ready now.
    more: bool,
    /// The socket's buffer is full.
    blocked: bool,
}

pub struct Driver {
    cfg: EndpointConfig,
    inner: Arc<Inner>,
    sock: Arc<UdpSocket>,
    cmds: Receiver<Start>,
    epoch: Instant,
    ops: HashMap<u64, Active>,
    turn: usize,
    completed: Completed,
    staging: Staging,
    pacer: Pacer,
    loss: Injector<(Vec<u8>, u32)>,
    addrs: Vec<RawAddr>,
    rb: RecvBatch,
    /// Encoded datagrams waiting for the socket (after loss injection), with their rank.
    pending: VecDeque<(Vec<u8>, u32)>,
    /// ACKs owed for completed operations: (op, packet).
    reacks: Vec<(u64, Packet)>,
    pool: Vec<Vec<u8>>,
    /// Why the endpoint no longer works (an I/O error, or closed).
    broken: Option<String>,
    /// When each peer was last told we live (answers to probes of operations not started).
    alive_sent: Vec<Option<u64>>,
}

/// Waits on the engine's socket and waker.
pub struct Sleeper {
    sock: Arc<UdpSocket>,
    inner: Arc<Inner>,
}

impl Sleeper {
    pub fn wait(&self, w: Wait) -> std::io::Result<()> {
        wait_on(&self.sock, &self.inner, w)
    }

    /// Like `wait`, but not woken by datagrams: only by a caller, the turn's timer, or `cap`
    /// ns at most (what arrives meanwhile waits in the socket's buffer).
    pub fn wait_lazy(&self, w: Wait, cap: u64) -> std::io::Result<()> {
        match w {
            Wait::Again => Ok(()),
            Wait::Sleep { timeout, .. } => {
                let t = timeout.map_or(cap, |t| t.min(cap));
                batch::wait(None, &self.inner.waker, false, Some(t))
            }
        }
    }
}

fn wait_on(sock: &UdpSocket, inner: &Inner, w: Wait) -> std::io::Result<()> {
    match w {
        Wait::Again => Ok(()),
        Wait::Sleep {
            want_write,
            timeout,
        } => batch::wait(Some(sock), &inner.waker, want_write, timeout),
    }
}

/// What a driving thread does after a turn.
#[derive(Debug, Clone, Copy)]
pub enum Wait {
    Again,
    Sleep {
        want_write: bool,
        timeout: Option<u64>,
    },
}

impl Driver {
    pub fn new(
        cfg: EndpointConfig,
        inner: Arc<Inner>,
        sock: Arc<UdpSocket>,
        cmds: Receiver<Start>,
    ) -> Driver {
        let dgram = HEADER_LEN + cfg.payload;
        Driver {
            addrs: cfg.peers.iter().map(RawAddr::new).collect(),
            // One byte more than the largest datagram of ours, so a longer one shows as cut.
            rb: RecvBatch::new(cfg.batch, dgram + 1),
            completed: Completed::new(cfg.remember_ops),
            staging: Staging::new(cfg.stage_bytes, cfg.stage_ttl.as_nanos() as u64),
            pacer: Pacer::new(cfg.rate_bps, cfg.burst_bytes, dgram),
            loss: Injector::new(cfg.loss),
            epoch: Instant::now(),
            ops: HashMap::new(),
            turn: 0,
            pending: VecDeque::new(),
            reacks: Vec::new(),
            pool: Vec::new(),
            broken: None,
            alive_sent: vec![None; cfg.peers.len()],
            cfg,
            inner,
            sock,
            cmds,
        }
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    fn counters(&self) -> &Counters {
        &self.inner.counters
    }

    /// Fail every operation, and every call still queued, with `Closed(why)`; calls queued
    /// later are refused the same way.
    pub fn fail_all(&mut self, why: &str) {
        self.broken.get_or_insert_with(|| why.to_string());
        for (_, a) in self.ops.drain() {
            if let Some(r) = a.reply {
                let _ = r.send(Err(TransportError::Closed(why.to_string())));
            }
        }
        while let Ok(s) = self.cmds.try_recv() {
            let _ = s.reply.send(Err(TransportError::Closed(why.to_string())));
        }
        self.inner.held.store(0, Ordering::Release);
    }

    /// One turn (new calls, receive, timers, send, answers), then what to do before the next:
    /// go on at once, or wait on the socket and the waker (see [`wait`](Self::wait)). An I/O
    /// error of the socket ends the endpoint: everything fails with `Closed`.
    pub fn turn(&mut self) -> Wait {
        if let Some(why) = self.broken.clone() {
            self.fail_all(&why);
            return Wait::Sleep {
                want_write: false,
                timeout: None,
            };
        }
        if self.inner.closing.load(Ordering::Acquire) {
            self.fail_all("");
            return Wait::Sleep {
                want_write: false,
                timeout: None,
            };
        }
        match self.turn_io() {
            Ok(w) => w,
            Err(e) => {
                self.fail_all(&format!(": {e}"));
                Wait::Sleep {
                    want_write: false,
                    timeout: None,
                }
            }
        }
    }

    /// Some caller still waits for its answer (then datagrams must wake whoever runs the
    /// engine; otherwise they only concern operations already answered, completed ones and
    /// ones not started here, which can wait a little).
    pub fn urgent(&self) -> bool {
        self.ops.values().any(|a| a.reply.is_some())
    }

    /// Block until a datagram, a caller's wake-up or the turn's timer (whichever first).
    pub fn wait(&self, w: Wait) -> std::io::Result<()> {
        // Borrowed, not a `Sleeper`: this is the caller's hot path.
        wait_on(&self.sock, &self.inner, w)
    }

    /// How often the background thread looks at the socket when nobody waits for an answer:
    /// a quarter of the loss-recovery period, so a peer that probes for a lost ACK hears back
    /// well before its next probe.
    pub fn lazy_ns(&self) -> u64 {
        (self.cfg.resend_timeout.as_nanos() as u64 / 4).max(1)
    }

    /// What waiting needs, to wait without holding the engine.
    pub fn sleeper(&self) -> Sleeper {
        Sleeper {
            sock: self.sock.clone(),
            inner: self.inner.clone(),
        }
    }

    fn turn_io(&mut self) -> std::io::Result<Wait> {
        let now = self.now();
        self.take_calls(now);
        self.receive()?;
        let now = self.now();
        self.timers(now);
        let sent = self.transmit(now)?;
        let now = self.now();
        self.finish_done(now);
        if sent.more && !sent.blocked {
            return Ok(Wait::Again);
        }
        let now = self.now();
        let mut wake = self
            .ops
            .values()
            .flat_map(|a| [a.op.poll_timeout(), a.linger_until])
            .flatten()
            .min();
        let mut at = |t: Option<u64>| {
            if let Some(t) = t {
                wake = Some(wake.map_or(t, |w| w.min(t)));
            }
        };
        at(self.staging.next_expiry());
        if sent.paced {
            at(self.pacer.next_ready(HEADER_LEN + self.cfg.payload));
        }
        if !self.ops.is_empty() {
            at(Some(now + MAX_SLEEP_NS));
        }
        let timeout = wake.map(|w| w.saturating_sub(now));
        Ok(if timeout == Some(0) {
            Wait::Again
        } else {
            Wait::Sleep {
                want_write: sent.blocked,
                timeout,
            }
        })
    }

    fn take_calls(&mut self, now: u64) {
        while let Ok(s) = self.cmds.try_recv() {
            if self.ops.contains_key(&s.op) || self.completed.get(s.op).is_some() {
                let e = TransportError::Config(format!("operation id {} is already used", s.op));
                let _ = s.reply.send(Err(e));
                continue;
            }
            match Op::new(&self.cfg, now, s.op, &s.protocol, s.sends, &s.recv_from) {
                Err(e) => {
                    let _ = s.reply.send(Err(e));
                }
                Ok(op) => {
                    self.ops.insert(
                        s.op,
                        Active {
                            op,
                            reply: Some(s.reply),
                            drained: false,
                            linger_until: None,
                        },
                    );
                    // Packets of peers that started first (opened when they were staged).
                    for mut d in self.staging.take(s.op) {
                        self.handle(now, Some(&mut d), true);
                    }
                }
            }
        }
    }

    fn receive(&mut self) -> std::io::Result<()> {
        let mut rb = std::mem::replace(&mut self.rb, RecvBatch::new(0, 0));
        let fd = self.sock.as_raw_fd();
        let mut result = Ok(());
        for _ in 0..RECV_ROUNDS {
            let n = match rb.recv(fd) {
                Ok(n) => n,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            };
            if n == 0 {
                break;
            }
            let now = self.now();
            for i in 0..n {
                let d = rb.get_mut(i);
                Counters::add(&self.counters().packets_received, 1);
                Counters::add(
                    &self.counters().bytes_received,
                    d.as_ref().map_or(0, |d| d.len() as u64),
                );
                self.handle(now, d, false);
            }
        }
        self.rb = rb;
        result
    }

    /// One datagram (`None`: cut short by the buffer); `opened`: already authenticated and
    /// decrypted (a staged one).
    fn handle(&mut self, now: u64, d: Option<&mut [u8]>, opened: bool) {
        let c = &self.inner.counters;
        let Some(d) = d else {
            Counters::add(&c.malformed, 1);
            return;
        };
        let h = match wire::decode(d, self.cfg.session) {
            Ok((h, _)) => h,
            Err(e) => {
                Counters::add(
                    if e.is_foreign() {
                        &c.foreign
                    } else {
                        &c.malformed
                    },
                    1,
                );
                return;
            }
        };
        // Before anything else reads it: a forged datagram changes nothing.
        if let Some(k) = self.cfg.auth.as_ref().filter(|_| !opened) {
            if !k.open(d) {
                Counters::add(&c.unauthenticated, 1);
                return;
            }
        }
        let d: &[u8] = d;
        let payload = &d[HEADER_LEN..];
        let p = h.packet;
        let n = self.cfg.peers.len() as u32;
        if p.dst != self.cfg.rank || p.src >= n || p.src == self.cfg.rank {
            Counters::add(&c.malformed, 1);
            return;
        }
        // Any word from a peer shows it alive, whichever operation it concerns: an operation
        // waiting on it must not take it for dead while it is busy elsewhere.
        for a in self.ops.values_mut() {
            a.op.heard_from(p.src);
        }
        if wire::is_alive(&p) {
            Counters::add(&c.alive_received, 1);
            return;
        }
        if let Some(a) = self.ops.get_mut(&h.op) {
            if a.op.on_packet(now, &h, payload).is_err() {
                Counters::add(&c.malformed, 1);
            }
            return;
        }
        match self.completed.get(h.op) {
            // A sender that missed our ACK asks again: answer for the finished operation.
            Some(true) if matches!(p.kind, Kind::Data | Kind::Announce) => {
                let ack = Packet {
                    kind: Kind::Ack,
                    src: self.cfg.rank,
                    dst: p.src,
                    seq: p.total,
                    total: 0,
                    unsched: 0,
                    seed: 0,
                };
                self.reacks.push((h.op, ack));
                Counters::add(&c.reacks, 1);
            }
            Some(_) => {}
            None => {
                let kept = self.staging.push(now, h.op, d);
                Counters::add(if kept { &c.staged } else { &c.expired }, 1);
                // Its sender may be probing an operation we have not reached (we are busy, or
                // blocked on another peer): tell it we live, at most twice a period per peer.
                let period = self.cfg.resend_timeout.as_nanos() as u64;
                let last = &mut self.alive_sent[p.src as usize];
                if last.is_none_or(|t| now >= t + period / 2) {
                    *last = Some(now);
                    self.reacks.push(wire::alive(h.op, self.cfg.rank, p.src));
                    Counters::add(&c.alive_sent, 1);
                }
            }
        }
    }

    fn timers(&mut self, now: u64) {
        for a in self.ops.values_mut() {
            a.op.handle_timeout(now);
        }
        let n = self.staging.expire(now);
        Counters::add(&self.counters().expired, n as u64);
    }

    /// Send what is pending, then poll the operations for one batch.
    fn transmit(&mut self, now: u64) -> std::io::Result<Sent> {
        let mut sent = Sent::default();
        if !self.flush()? {
            sent.blocked = true;
            return Ok(sent);
        }
        let batch = self.cfg.batch;
        let session = self.cfg.session;
        let full = HEADER_LEN + self.cfg.payload;
        let mut fresh: Vec<(Vec<u8>, u32)> = Vec::new();
        for (op, p) in std::mem::take(&mut self.reacks) {
            let h = Header {
                session,
                op,
                packet: p,
                msg_bytes: 0,
                msg_crc: 0,
            };
            let mut buf = self.pool.pop().unwrap_or_default();
            buf.resize(HEADER_LEN, 0);
            wire::encode_into(&h, &[], &mut buf).expect("a header fits its buffer");
            if let Some(k) = &self.cfg.auth {
                k.seal(&mut buf);
            }
            self.pacer.spend(now, buf.len());
            fresh.push((buf, p.dst));
        }
        let mut ids: Vec<u64> = self.ops.keys().copied().collect();
        ids.sort_unstable();
        if !ids.is_empty() {
            let k = self.turn % ids.len();
            ids.rotate_left(k);
        }
        self.turn = self.turn.wrapping_add(1);
        for id in ids {
            let a = self.ops.get_mut(&id).expect("listed above");
            a.drained = false;
            loop {
                if fresh.len() >= batch {
                    sent.more = true;
                    break;
                }
                let data_ok = self.pacer.ready(now, full);
                if !data_ok {
                    sent.paced = true;
                }
                let Some((mut h, payload)) = a.op.poll_transmit(now, data_ok) else {
                    a.drained = true;
                    break;
                };
                h.session = session;
                // The tag's nonce counts on it (crate::auth): a rank sends as itself only.
                debug_assert_eq!(h.packet.src, self.cfg.rank, "a packet sent as another rank");
                let mut buf = self.pool.pop().unwrap_or_default();
                buf.resize(HEADER_LEN + payload.len(), 0);
                wire::encode_into(&h, payload, &mut buf).expect("sized to fit");
                if let Some(k) = &self.cfg.auth {
                    k.seal(&mut buf);
                }
                self.pacer.spend(now, buf.len());
                fresh.push((buf, h.packet.dst));
            }
            let r = a.op.retransmissions();
            Counters::add(
                &self.inner.counters.retransmissions,
                r - a.op.retransmissions_seen,
            );
            a.op.retransmissions_seen = r;
            if sent.more {
                break;
            }
        }
        let mut out = Vec::with_capacity(fresh.len() + 2);
        for d in fresh {
            self.loss.apply(d, &mut out);
        }
        self.loss.flush(&mut out);
        let c = &self.inner.counters;
        Counters::set(&c.injected_drops, self.loss.dropped);
        Counters::set(&c.injected_duplicates, self.loss.duplicated);
        Counters::set(&c.injected_reorders, self.loss.reordered);
        self.pending.extend(out);
        if !self.flush()? {
            sent.blocked = true;
        }
        Ok(sent)
    }

    /// Write pending datagrams; whether all went.
    fn flush(&mut self) -> std::io::Result<bool> {
        if self.pending.is_empty() {
            return Ok(true);
        }
        let (a, b) = self.pending.as_slices();
        let list: Vec<(&[u8], RawAddr)> = a
            .iter()
            .chain(b)
            .map(|(d, r)| (&d[..], self.addrs[*r as usize]))
            .collect();
        let k = batch::send_batch(self.sock.as_raw_fd(), &list)?;
        drop(list);
        let mut bytes = 0;
        for _ in 0..k {
            let (d, _) = self.pending.pop_front().expect("sent from it");
            bytes += d.len() as u64;
            self.pool.push(d);
        }
        let c = &self.inner.counters;
        Counters::add(&c.packets_sent, k as u64);
        Counters::add(&c.bytes_sent, bytes);
        Ok(self.pending.is_empty())
    }

    /// Answer the callers of finished or failed operations; drop lingering ones whose time
    /// is up (or whose protocol ended after all).
    fn finish_done(&mut self, now: u64) {
        let linger = self.cfg.resend_timeout.as_nanos() as u64 * self.cfg.dead_after as u64 * 2;
        let eager = self.cfg.return_when == ReturnWhen::Sent;
        let mut gone = Vec::new();
        for (&id, a) in self.ops.iter_mut() {
            if let Some(until) = a.linger_until {
                if now >= until || (a.drained && a.op.node_done()) {
                    gone.push(id);
                }
            } else if let Some(e) = a.op.error.take() {
                if let Some(r) = a.reply.take() {
                    let _ = r.send(Err(e));
                }
                a.op.lingering = true;
                a.linger_until = Some(now + linger);
            } else if a.drained && a.op.is_done() {
                gone.push(id);
            } else if a.reply.is_some() && eager && a.op.is_sent() {
                // Answered now; the operation stays until its peers ACK (or it fails, which
                // then only ends it: the caller has what it needed).
                let r = a.reply.take().expect("checked");
                let _ = r.send(Ok(a.op.take_received()));
            }
        }
        let left = self.ops.len() - gone.len();
        self.inner.held.store(left, Ordering::Release);
        for id in gone {
            let a = self.ops.remove(&id).expect("listed above");
            let ok = a.linger_until.is_none();
            let outcome = a.op.finish();
            self.completed.insert(id, ok);
            if let Some(r) = a.reply {
                let _ = r.send(outcome);
            }
        }
    }
}

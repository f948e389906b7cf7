//! One host of a broadcast, as its own process: a server that hands out the blocks it holds
//! (send slots, queued requests, the source's round robin, BitTorrent's choking) and, on a
//! receiver, a fetcher that asks peers for blocks as its mechanism says.
//!
//! Everything runs on one thread (a current-thread tokio runtime): many of these processes
//! share a few cores. The whole-data hash runs on the blocking pool so serving goes on.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::net::TcpStream;
use tokio::sync::{broadcast, mpsc, watch, Semaphore};
use tokio::time::Instant;

use crate::control::{FromNode, PeerInfo, Plan, ToNode};
use crate::error::io;
use crate::layout::Layout;
use crate::link::{self, LinkEvent, Outgoing};
use crate::mechanism::Mechanism;
use crate::pace::Pacer;
use crate::roundrobin::RoundRobin;
use crate::wire::{read_msg, write_msg, Msg};
use crate::{cornet, data, OrchestraError};

/// Where a node process learns who it is: the launcher's `COFLOWKIT_RANK` (its host; 0 is the
/// source), `COFLOWKIT_RENDEZVOUS` (the controller) and `COFLOWKIT_ORCHESTRA_BIND` (its data
/// address).
#[derive(Debug, Clone)]
pub struct NodeEnv {
    pub host: u32,
    pub controller: String,
    pub bind: IpAddr,
}

pub const BIND_VAR: &str = "COFLOWKIT_ORCHESTRA_BIND";

impl NodeEnv {
    /// `None` when this process was not started as a node.
    pub fn from_env() -> Result<Option<NodeEnv>, OrchestraError> {
        let (Ok(rank), Ok(controller)) = (
            std::env::var("COFLOWKIT_RANK"),
            std::env::var("COFLOWKIT_RENDEZVOUS"),
        ) else {
            return Ok(None);
        };
        let host = rank.parse().map_err(|_| {
            OrchestraError::Bad(format!("COFLOWKIT_RANK={rank}: not a host number"))
        })?;
        let bind = match std::env::var(BIND_VAR) {
            Ok(b) => b
                .parse()
                .map_err(|_| OrchestraError::Bad(format!("{BIND_VAR}={b}: not an IP address")))?,
            Err(_) => IpAddr::from([127, 0, 0, 1]),
        };
        Ok(Some(NodeEnv {
            host,
            controller,
            bind,
        }))
    }
}

/// Run a node to the end of its broadcast (`Finish`: Ok; `Abort` or a lost controller: Err).
pub fn run_node(env: NodeEnv) -> Result<(), OrchestraError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(io("tokio runtime"))?;
    rt.block_on(node(env))
}

/// What the server half and the fetcher half of a node share.
struct Shared {
    host: u32,
    plan: Plan,
    layout: Layout,
    blocks: Mutex<Vec<Option<Arc<Vec<u8>>>>>,
    /// Each new block's index, to peers' `Have` forwarders and to pipelined requests waiting.
    new_block: broadcast::Sender<u32>,
    slots: Arc<Semaphore>,
    pacer: Option<Arc<Pacer>>,
    rr: Mutex<RoundRobin>,
    choke: Mutex<Choke>,
    /// Bumped when the unchoked set changes.
    choke_version: watch::Sender<u64>,
}

/// BitTorrent's choking state of this node's uploads.
#[derive(Default)]
struct Choke {
    unchoked: HashSet<u32>,
    interested: HashSet<u32>,
    /// Bytes received from each peer in this rechoke period (tit for tat).
    got_from: HashMap<u32, u64>,
    /// Bytes sent to each peer, ever (a seed spreads its uploads).
    sent_to: HashMap<u32, u64>,
    optimistic: Option<u32>,
    round: u32,
}

impl Shared {
    fn block(&self, b: u32) -> Option<Arc<Vec<u8>>> {
        self.blocks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(b as usize)?
            .clone()
    }

    fn have_map(&self) -> Vec<u8> {
        let g = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
        g.iter().map(|b| b.is_some() as u8).collect()
    }

    /// Store a block; false if it was already held.
    fn insert(&self, b: u32, d: Arc<Vec<u8>>) -> bool {
        {
            let mut g = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
            if g[b as usize].is_some() {
                return false;
            }
            g[b as usize] = Some(d);
        }
        let _ = self.new_block.send(b);
        true
    }

    async fn wait_block(&self, b: u32) -> Arc<Vec<u8>> {
        let mut sub = self.new_block.subscribe();
        loop {
            if let Some(d) = self.block(b) {
                return d;
            }
            // Any news (or a lag) is a reason to look again.
            let _ = sub.recv().await;
        }
    }

    fn unchoked(&self, peer: u32) -> bool {
        self.choke
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .unchoked
            .contains(&peer)
    }

    fn choke_mut(&self) -> std::sync::MutexGuard<'_, Choke> {
        self.choke.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn swarm(&self) -> bool {
        self.plan.mechanism.is_cornet() || self.plan.mechanism == Mechanism::BitTorrent
    }
}

async fn node(env: NodeEnv) -> Result<(), OrchestraError> {
    let crate::link::ControllerConnection {
        lines: mut ctl_rd,
        listener,
        addr,
        tx: ctl_tx,
    } = crate::link::controller_connection::<FromNode>(&env).await?;
    let _ = ctl_tx.send(FromNode::Hello {
        host: env.host,
        addr: addr.to_string(),
    });
    let next = |line: std::io::Result<Option<String>>| -> Result<ToNode, OrchestraError> {
        let line = line
            .map_err(io("reading from the controller"))?
            .ok_or_else(|| OrchestraError::Failed("the controller closed the connection".into()))?;
        serde_json::from_str(&line).map_err(|e| OrchestraError::Protocol {
            peer: "controller".into(),
            why: format!("{e}: {line}"),
        })
    };
    let plan = match next(ctl_rd.next_line().await)? {
        ToNode::Plan(p) => p,
        ToNode::Abort { why } => return Err(OrchestraError::Aborted(why)),
        m => {
            return Err(OrchestraError::Protocol {
                peer: "controller".into(),
                why: format!("expected the plan, got {m:?}"),
            })
        }
    };
    let layout = Layout::new(plan.layout.bytes, plan.layout.block_bytes)?;
    let n = layout.blocks();
    let slots = if plan.mechanism.is_cornet() {
        plan.opts.send_slots as usize
    } else {
        // HDFS datanodes, tree and chain parents serve whoever asks; BitTorrent limits uploads
        // by choking instead.
        Semaphore::MAX_PERMITS
    };
    let shared = Arc::new(Shared {
        host: env.host,
        layout,
        blocks: Mutex::new(vec![None; n as usize]),
        new_block: broadcast::channel(n as usize + 64).0,
        slots: Arc::new(Semaphore::new(slots)),
        pacer: plan.pace_bps.map(|r| Arc::new(Pacer::new(r))),
        rr: Mutex::new(RoundRobin::new(n)),
        choke: Mutex::new(Choke::default()),
        choke_version: watch::channel(0).0,
        plan,
    });
    if env.host == 0 {
        let all = data::make(shared.plan.seed, layout.bytes);
        let digest = data::digest([&all[..]]);
        let mut pieces = Vec::new();
        {
            let mut g = shared.blocks.lock().unwrap_or_else(|p| p.into_inner());
            for b in 0..n {
                let r = layout.range(b);
                let piece = &all[r.start as usize..r.end as usize];
                if shared.plan.mechanism == Mechanism::BitTorrent {
                    pieces.push(data::digest([piece]));
                }
                g[b as usize] = Some(Arc::new(piece.to_vec()));
            }
        }
        let _ = ctl_tx.send(FromNode::Ready { digest, pieces });
    }
    let sh = shared.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let sh = sh.clone();
            tokio::spawn(async move {
                if let Err(e) = serve(sh, stream).await {
                    tracing::debug!("serving a peer: {e}");
                }
            });
        }
    });
    let (digest, pieces) = loop {
        match next(ctl_rd.next_line().await)? {
            ToNode::Go { digest, pieces } => break (digest, pieces),
            ToNode::Abort { why } => return Err(OrchestraError::Aborted(why)),
            ToNode::Finish => return Ok(()),
            _ => {}
        }
    };
    if shared.plan.mechanism == Mechanism::BitTorrent {
        tokio::spawn(choker(shared.clone()));
    }
    let (ev_tx, ev_rx) = mpsc::unbounded_channel::<Ev>();
    let etx = ev_tx.clone();
    tokio::spawn(async move {
        loop {
            let m = match ctl_rd.next_line().await {
                Ok(Some(line)) => match serde_json::from_str::<ToNode>(&line) {
                    Ok(m) => Ev::Ctl(m),
                    Err(e) => Ev::CtlGone(format!("bad control message ({e}): {line}")),
                },
                Ok(None) => Ev::CtlGone("the controller closed the connection".into()),
                Err(e) => Ev::CtlGone(format!("reading from the controller: {e}")),
            };
            let end = matches!(m, Ev::CtlGone(_));
            if etx.send(m).is_err() || end {
                break;
            }
        }
    });
    let mut f = Fetcher {
        rng: ChaCha8Rng::seed_from_u64(
            shared.plan.seed ^ (env.host as u64).wrapping_mul(0x9E37_79B9),
        ),
        held: shared.have_map().iter().map(|&h| h == 1).collect(),
        held_count: if env.host == 0 { n } else { 0 },
        shared,
        ctl: ctl_tx,
        ev_tx,
        peers: HashMap::new(),
        connecting: HashSet::new(),
        inflight: HashMap::new(),
        any_at: HashMap::new(),
        avail: vec![0; n as usize],
        next_seq: 0,
        reading: false,
        hashing: false,
        digest,
        pieces,
        known: HashMap::new(),
    };
    f.run(ev_rx).await
}

/// One inbound connection: a peer's requests in, blocks and news out.
async fn serve(sh: Arc<Shared>, stream: TcpStream) -> std::io::Result<()> {
    let _ = stream.set_nodelay(true);
    let (mut rd, wr) = stream.into_split();
    let peer = match read_msg(&mut rd).await? {
        Some(Msg::Hello { host }) => host,
        m => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("expected hello, got {m:?}"),
            ))
        }
    };
    let (tx, rx) = mpsc::unbounded_channel::<Outgoing>();
    let w = sh.clone();
    let writer = link::spawn_writer(wr, rx, sh.pacer.clone(), move |n| {
        *w.choke_mut().sent_to.entry(peer).or_default() += n as u64;
    });
    let mut helpers = Vec::new();
    if sh.swarm() {
        let sh2 = sh.clone();
        helpers.push(link::spawn_haves(
            sh.new_block.subscribe(),
            tx.clone(),
            move || sh2.have_map(),
        ));
    }
    if sh.plan.mechanism == Mechanism::BitTorrent {
        let (tx2, sh2) = (tx.clone(), sh.clone());
        let mut ver = sh.choke_version.subscribe();
        helpers.push(tokio::spawn(async move {
            let mut open = false;
            loop {
                let now = sh2.unchoked(peer);
                if now != open {
                    open = now;
                    let m = if open { Msg::Unchoke } else { Msg::Choke };
                    if tx2.send((m, None)).is_err() {
                        break;
                    }
                }
                if ver.changed().await.is_err() {
                    break;
                }
            }
        }));
    }
    let result = loop {
        let m = match read_msg(&mut rd).await {
            Ok(Some(m)) => m,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        };
        match m {
            Msg::Get { block, wait } => {
                tokio::spawn(respond(sh.clone(), peer, block, wait, tx.clone()));
            }
            Msg::GetAny { have } => {
                let pick = sh.rr.lock().unwrap_or_else(|p| p.into_inner()).pick(&have);
                match pick {
                    Some(b) => {
                        tokio::spawn(respond(sh.clone(), peer, b, false, tx.clone()));
                    }
                    None => {
                        let _ = tx.send((Msg::NotHave { block: u32::MAX }, None));
                    }
                }
            }
            Msg::Interested => {
                sh.choke_mut().interested.insert(peer);
            }
            Msg::NotInterested => {
                sh.choke_mut().interested.remove(&peer);
            }
            m => {
                break Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("unexpected request {m:?}"),
                ))
            }
        }
    };
    for h in helpers {
        h.abort();
    }
    sh.choke_mut().interested.remove(&peer);
    drop(tx);
    let _ = writer.await;
    result
}

/// Answer one request: the block (once held, if `wait`; after a send slot frees), or
/// `NotHave`. A choked BitTorrent peer's request is dropped (it forgets it when choked).
async fn respond(
    sh: Arc<Shared>,
    peer: u32,
    block: u32,
    wait: bool,
    tx: mpsc::UnboundedSender<Outgoing>,
) {
    if block >= sh.layout.blocks() {
        let _ = tx.send((Msg::NotHave { block }, None));
        return;
    }
    if sh.plan.mechanism == Mechanism::BitTorrent && !sh.unchoked(peer) {
        return;
    }
    let data = if wait {
        sh.wait_block(block).await
    } else {
        match sh.block(block) {
            Some(d) => d,
            None => {
                let _ = tx.send((Msg::NotHave { block }, None));
                return;
            }
        }
    };
    let Ok(permit) = sh.slots.clone().acquire_owned().await else {
        return;
    };
    let _ = tx.send((Msg::Block { block, data }, Some(permit)));
}

/// BitTorrent's rechoke, every period: the interested peers that gave us the most in the last
/// period (a seed: those it gave the least so far) get the regular slots, and one more, chosen
/// at random and kept for a few periods, the optimistic slot.
async fn choker(sh: Arc<Shared>) {
    let o = sh.plan.opts;
    let mut rng = ChaCha8Rng::seed_from_u64(sh.plan.seed ^ 0xB7 ^ ((sh.host as u64) << 20));
    let mut tick = tokio::time::interval(Duration::from_secs_f64(o.bt_rechoke_s));
    loop {
        tick.tick().await;
        let seed = sh.have_map().iter().all(|&h| h == 1);
        let mut c = sh.choke_mut();
        let mut cands: Vec<u32> = c.interested.iter().copied().collect();
        cands.sort();
        cands.shuffle(&mut rng);
        if seed {
            cands.sort_by_key(|p| c.sent_to.get(p).copied().unwrap_or(0));
        } else {
            cands.sort_by_key(|p| std::cmp::Reverse(c.got_from.get(p).copied().unwrap_or(0)));
        }
        let mut open: HashSet<u32> = cands.iter().copied().take(o.bt_unchoke as usize).collect();
        let rest: Vec<u32> = cands
            .iter()
            .copied()
            .filter(|p| !open.contains(p))
            .collect();
        let keep = c
            .optimistic
            .filter(|p| rest.contains(p) && !c.round.is_multiple_of(o.bt_optimistic_every));
        c.optimistic = keep.or_else(|| rest.choose(&mut rng).copied());
        open.extend(c.optimistic);
        c.round += 1;
        c.got_from.clear();
        if open != c.unchoked {
            c.unchoked = open;
            drop(c);
            sh.choke_version.send_modify(|v| *v += 1);
        }
    }
}

enum Ev {
    Link(LinkEvent),
    Ctl(ToNode),
    CtlGone(String),
    Hashed(String),
}

impl From<LinkEvent> for Ev {
    fn from(e: LinkEvent) -> Ev {
        Ev::Link(e)
    }
}

struct PeerConn {
    tx: mpsc::UnboundedSender<Msg>,
    have: Vec<bool>,
    /// Requests outstanding here (specific blocks and "any block").
    outstanding: u32,
    unchoked: bool,
}

/// A receiver's fetching half.
struct Fetcher {
    shared: Arc<Shared>,
    ctl: mpsc::UnboundedSender<FromNode>,
    ev_tx: mpsc::UnboundedSender<Ev>,
    rng: ChaCha8Rng,
    peers: HashMap<u32, PeerConn>,
    connecting: HashSet<u32>,
    /// Requested blocks: from whom and since when (several in BitTorrent's endgame).
    inflight: HashMap<u32, Vec<(u32, Instant)>>,
    /// "Any block" requests outstanding at the source, since when.
    any_at: HashMap<u32, Vec<Instant>>,
    held: Vec<bool>,
    held_count: u32,
    /// Copies among connected peers (BitTorrent's rarest first).
    avail: Vec<u32>,
    /// Pipelines: the next block to request.
    next_seq: u32,
    /// HDFS-like readers: replicas written, reading.
    reading: bool,
    hashing: bool,
    digest: String,
    pieces: Vec<String>,
    /// Peers' addresses and racks as the controller gave them.
    known: HashMap<u32, PeerInfo>,
}

impl Fetcher {
    fn me(&self) -> u32 {
        self.shared.host
    }

    fn m(&self) -> Mechanism {
        self.shared.plan.mechanism
    }

    fn n(&self) -> u32 {
        self.held.len() as u32
    }

    fn complete(&self) -> bool {
        self.held_count == self.n()
    }

    async fn run(&mut self, mut ev: mpsc::UnboundedReceiver<Ev>) -> Result<(), OrchestraError> {
        let me = self.me();
        if me != 0 {
            match self.m() {
                m if m.is_cornet() => {
                    let _ = self.ctl.send(FromNode::PeersPlease);
                }
                Mechanism::BitTorrent => {
                    for h in (0..self.shared.plan.hosts()).filter(|&h| h != me) {
                        self.connect(h);
                    }
                }
                _ => {
                    if let Some(p) = self.shared.plan.parent(me) {
                        self.connect(p);
                    }
                }
            }
        }
        let refresh = Duration::from_secs_f64(self.shared.plan.opts.peer_refresh_s.max(0.01));
        let mut tick = tokio::time::interval_at(Instant::now() + refresh, refresh);
        loop {
            tokio::select! {
                e = ev.recv() => {
                    let Some(e) = e else { return Ok(()) };
                    if let Some(end) = self.handle(e)? {
                        return end;
                    }
                }
                _ = tick.tick() => {
                    if me != 0 && self.m().is_cornet() && !self.complete() {
                        let _ = self.ctl.send(FromNode::PeersPlease);
                    }
                }
            }
            if me != 0 {
                self.schedule();
                if self.complete() && !self.hashing {
                    self.hashing = true;
                    self.hash();
                }
            }
        }
    }

    /// Handle one event; `Some(result)` ends the node.
    fn handle(&mut self, e: Ev) -> Result<Option<Result<(), OrchestraError>>, OrchestraError> {
        match e {
            Ev::Link(LinkEvent::Up { host, tx }) => {
                self.connecting.remove(&host);
                if self.m() == Mechanism::BitTorrent {
                    let _ = tx.send(if self.complete() {
                        Msg::NotInterested
                    } else {
                        Msg::Interested
                    });
                }
                let n = self.n() as usize;
                self.peers.insert(
                    host,
                    PeerConn {
                        tx,
                        have: vec![false; n],
                        outstanding: 0,
                        unchoked: false,
                    },
                );
            }
            Ev::Link(LinkEvent::Peer { host, msg }) => self.on_msg(host, msg)?,
            Ev::Link(LinkEvent::Down { host }) => {
                self.connecting.remove(&host);
                if let Some(p) = self.peers.remove(&host) {
                    for (b, &h) in p.have.iter().enumerate() {
                        if h {
                            self.avail[b] -= 1;
                        }
                    }
                }
                self.forget_requests_at(host);
            }
            Ev::Ctl(m) => match m {
                ToNode::Peers { peers } => {
                    let cap = 2 * self.shared.plan.opts.peer_set as usize;
                    for p in peers {
                        let h = p.host;
                        self.known.insert(h, p);
                        if self.peers.len() + self.connecting.len() < cap {
                            self.connect(h);
                        }
                    }
                }
                ToNode::ReplicasReady => {
                    self.reading = true;
                    for r in self.shared.plan.replicas() {
                        if r != self.me() {
                            self.connect(r);
                        }
                    }
                }
                ToNode::Finish => return Ok(Some(Ok(()))),
                ToNode::Abort { why } => return Ok(Some(Err(OrchestraError::Aborted(why)))),
                _ => {}
            },
            Ev::CtlGone(why) => return Ok(Some(Err(OrchestraError::Failed(why)))),
            Ev::Hashed(d) => {
                if d != self.digest {
                    tracing::warn!("host {}: the data's SHA-256 is not the source's", self.me());
                }
                let _ = self.ctl.send(FromNode::Done { digest: d });
                if self.m() == Mechanism::BitTorrent {
                    for p in self.peers.values() {
                        let _ = p.tx.send(Msg::NotInterested);
                    }
                }
            }
        }
        Ok(None)
    }

    fn on_msg(&mut self, host: u32, msg: Msg) -> Result<(), OrchestraError> {
        let n = self.n() as usize;
        let Some(p) = self.peers.get_mut(&host) else {
            return Ok(());
        };
        match msg {
            Msg::HaveMap { have } => {
                for b in 0..n {
                    let now = have.get(b) == Some(&1);
                    if now != p.have[b] {
                        p.have[b] = now;
                        if now {
                            self.avail[b] += 1;
                        } else {
                            self.avail[b] -= 1;
                        }
                    }
                }
            }
            Msg::Have { block } => {
                if let Some(h) = p.have.get_mut(block as usize) {
                    if !*h {
                        *h = true;
                        self.avail[block as usize] += 1;
                    }
                }
            }
            Msg::Choke => {
                p.unchoked = false;
                self.forget_requests_at(host);
            }
            Msg::Unchoke => p.unchoked = true,
            Msg::NotHave { block } => {
                p.outstanding = p.outstanding.saturating_sub(1);
                if block == u32::MAX {
                    if let Some(v) = self.any_at.get_mut(&host) {
                        v.pop();
                    }
                } else if (block as usize) < n {
                    if p.have[block as usize] {
                        p.have[block as usize] = false;
                        self.avail[block as usize] -= 1;
                    }
                    self.drop_request(block, host);
                }
            }
            Msg::Block { block, data } => {
                p.outstanding = p.outstanding.saturating_sub(1);
                self.on_block(host, block, data)?;
            }
            m => {
                return Err(OrchestraError::Protocol {
                    peer: format!("host {host}"),
                    why: format!("unexpected {m:?}"),
                })
            }
        }
        Ok(())
    }

    fn on_block(&mut self, from: u32, b: u32, d: Arc<Vec<u8>>) -> Result<(), OrchestraError> {
        let layout = self.shared.layout;
        if b >= self.n() || d.len() != layout.len(b) {
            return Err(OrchestraError::Protocol {
                peer: format!("host {from}"),
                why: format!("block {b} of {} bytes", d.len()),
            });
        }
        let since = match self.inflight.get_mut(&b).and_then(|v| {
            let i = v.iter().position(|&(h, _)| h == from)?;
            Some(v.swap_remove(i).1)
        }) {
            Some(t) => Some(t),
            None => self
                .any_at
                .get_mut(&from)
                .and_then(|v| (!v.is_empty()).then(|| v.remove(0))),
        };
        if self.inflight.get(&b).is_some_and(|v| v.is_empty()) {
            self.inflight.remove(&b);
        }
        if self.held[b as usize] {
            return Ok(());
        }
        if self.m() == Mechanism::BitTorrent {
            // BitTorrent checks every piece; a bad one is dropped and fetched again.
            if self
                .pieces
                .get(b as usize)
                .is_some_and(|p| *p != data::digest([&d[..]]))
            {
                tracing::warn!("host {}: piece {b} from {from} failed its hash", self.me());
                return Ok(());
            }
            *self.shared.choke_mut().got_from.entry(from).or_default() += d.len() as u64;
        }
        self.held[b as usize] = true;
        self.held_count += 1;
        if self.shared.plan.die_holding == Some((self.me(), self.held_count)) {
            // Fault injection: die as a SIGKILLed host does, mid-broadcast.
            // SAFETY: kill(2) on our own pid has no memory-safety preconditions.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
        self.shared.insert(b, d);
        let secs = since.map_or(0.0, |t| t.elapsed().as_secs_f64());
        let _ = self.ctl.send(FromNode::Got {
            block: b,
            from,
            secs,
        });
        Ok(())
    }

    fn drop_request(&mut self, b: u32, host: u32) {
        if let Some(v) = self.inflight.get_mut(&b) {
            v.retain(|&(h, _)| h != host);
            if v.is_empty() {
                self.inflight.remove(&b);
            }
        }
    }

    /// Requests at `host` will not be answered (it died, or choked us).
    fn forget_requests_at(&mut self, host: u32) {
        self.inflight.retain(|_, v| {
            v.retain(|&(h, _)| h != host);
            !v.is_empty()
        });
        self.any_at.remove(&host);
        if let Some(p) = self.peers.get_mut(&host) {
            p.outstanding = 0;
        }
        // A pipeline re-asks from the first block it lacks.
        if !self.m().is_cornet() && self.m() != Mechanism::BitTorrent {
            self.next_seq = self
                .held
                .iter()
                .position(|&h| !h)
                .unwrap_or(self.held.len()) as u32;
        }
    }

    fn connect(&mut self, host: u32) {
        if host == self.me() || self.peers.contains_key(&host) || !self.connecting.insert(host) {
            return;
        }
        let addr = self
            .known
            .get(&host)
            .map(|p| p.addr.clone())
            .or_else(|| self.shared.plan.addrs.get(host as usize).cloned());
        let Some(addr) = addr.and_then(|a| a.parse::<SocketAddr>().ok()) else {
            self.connecting.remove(&host);
            return;
        };
        let (ev, me) = (self.ev_tx.clone(), self.me());
        tokio::spawn(async move {
            let open = async move {
                let s = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
                let _ = s.set_nodelay(true);
                let (rd, mut wr) = s.into_split();
                write_msg(&mut wr, &Msg::Hello { host: me }, None)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok((rd, wr))
            };
            if let Err(e) = link::pump(host, open, &ev).await {
                tracing::debug!("connection to host {host}: {e}");
            }
        });
    }

    fn hash(&mut self) {
        let blocks: Vec<Arc<Vec<u8>>> = {
            let g = self.shared.blocks.lock().unwrap_or_else(|p| p.into_inner());
            g.iter().map(|b| b.clone().expect("complete")).collect()
        };
        let ev = self.ev_tx.clone();
        tokio::task::spawn_blocking(move || {
            let d = data::digest(blocks.iter().map(|b| &b[..]));
            let _ = ev.send(Ev::Hashed(d));
        });
    }

    fn request(&mut self, host: u32, b: u32, wait: bool) {
        if let Some(p) = self.peers.get_mut(&host) {
            if p.tx.send(Msg::Get { block: b, wait }).is_ok() {
                p.outstanding += 1;
                self.inflight
                    .entry(b)
                    .or_default()
                    .push((host, Instant::now()));
            }
        }
    }

    fn outstanding(&self) -> usize {
        self.inflight.values().map(Vec::len).sum::<usize>()
            + self.any_at.values().map(Vec::len).sum::<usize>()
    }

    fn schedule(&mut self) {
        if self.complete() {
            return;
        }
        match self.m() {
            m if m.is_cornet() => self.schedule_cornet(),
            Mechanism::BitTorrent => self.schedule_bt(),
            Mechanism::Hdfs { .. } if self.shared.plan.parent(self.me()).is_none() => {
                if self.reading {
                    self.schedule_reader()
                }
            }
            _ => self.schedule_pipe(),
        }
    }

    /// Chain, tree, HDFS write pipeline: the next blocks in order from the parent, which holds
    /// each request until it has the block.
    fn schedule_pipe(&mut self) {
        let Some(parent) = self.shared.plan.parent(self.me()) else {
            return;
        };
        if !self.peers.contains_key(&parent) {
            return;
        }
        let w = self.shared.plan.opts.pipe_window as usize;
        while self.outstanding() < w && self.next_seq < self.n() {
            let b = self.next_seq;
            self.next_seq += 1;
            if !self.held[b as usize] && !self.inflight.contains_key(&b) {
                self.request(parent, b, true);
            }
        }
    }

    /// HDFS-like reader: blocks in order, each HDFS block (the Cornet block size's worth of
    /// pieces) from one replica picked at random (seeded by block, so every piece of it goes
    /// to the same replica).
    fn schedule_reader(&mut self) {
        let live: Vec<u32> = self
            .shared
            .plan
            .replicas()
            .into_iter()
            .filter(|r| self.peers.contains_key(r))
            .collect();
        if live.is_empty() {
            return;
        }
        let per = (self.shared.plan.opts.block_bytes / self.shared.layout.block_bytes).max(1);
        let w = self.shared.plan.opts.pipe_window as usize;
        while self.outstanding() < w && self.next_seq < self.n() {
            let b = self.next_seq;
            self.next_seq += 1;
            if self.held[b as usize] || self.inflight.contains_key(&b) {
                continue;
            }
            let hdfs_block = (b / per) as u64;
            let mut r = ChaCha8Rng::seed_from_u64(
                self.shared.plan.seed ^ hdfs_block << 16 ^ self.me() as u64,
            );
            let replica = live[r.gen_range(0..live.len())];
            self.request(replica, b, true);
        }
    }

    /// Cornet: what to ask whom is [`cornet::schedule`]'s decision; this applies it.
    fn schedule_cornet(&mut self) {
        let requested: Vec<bool> = (0..self.n())
            .map(|b| self.inflight.contains_key(&b))
            .collect();
        let mut requested = requested;
        let racks = &self.shared.plan.racks;
        let rack = |h: u32| racks.get(h as usize).copied().unwrap_or(0);
        let mut hosts: Vec<u32> = self.peers.keys().copied().collect();
        hosts.sort();
        let asks = {
            let mut peers: Vec<cornet::Peer> = hosts
                .iter()
                .map(|h| {
                    let p = &self.peers[h];
                    cornet::Peer {
                        host: *h,
                        rack: rack(*h),
                        have: &p.have,
                        outstanding: p.outstanding,
                    }
                })
                .collect();
            let mut me = cornet::Receiver {
                rack: rack(self.shared.host),
                rack_aware: self.m() != Mechanism::Cornet,
                receive_slots: self.shared.plan.opts.receive_slots,
                held: &self.held,
                requested: &mut requested,
            };
            cornet::schedule(&mut me, &mut peers, &mut self.rng)
        };
        for a in asks {
            match a {
                cornet::Ask::Block { peer, block } => self.request(peer, block, false),
                cornet::Ask::Any { peer, have } => {
                    let Some(p) = self.peers.get_mut(&peer) else {
                        continue;
                    };
                    if p.tx.send(Msg::GetAny { have }).is_ok() {
                        p.outstanding += 1;
                        self.any_at.entry(peer).or_default().push(Instant::now());
                    }
                }
            }
        }
    }

    /// BitTorrent: at each unchoked peer up to its pipeline of requests, rarest block first
    /// (random among equals); once every missing block is requested, the endgame asks other
    /// peers for them too.
    fn schedule_bt(&mut self) {
        let n = self.n() as usize;
        let depth = self.shared.plan.opts.bt_pipeline;
        let mut hosts: Vec<u32> = self.peers.keys().copied().collect();
        hosts.sort();
        hosts.shuffle(&mut self.rng);
        for h in hosts {
            loop {
                let p = &self.peers[&h];
                if !p.unchoked || p.outstanding >= depth {
                    break;
                }
                let start = self.rng.gen_range(0..n);
                let mut best: Option<(u32, usize)> = None;
                for i in 0..n {
                    let b = (start + i) % n;
                    if p.have[b] && !self.held[b] && !self.inflight.contains_key(&(b as u32)) {
                        let a = self.avail[b];
                        if best.is_none_or(|(ba, _)| a < ba) {
                            best = Some((a, b));
                        }
                    }
                }
                let pick = best.map(|(_, b)| b).or_else(|| {
                    // Endgame: every missing block is requested somewhere.
                    (0..n).map(|i| (start + i) % n).find(|&b| {
                        p.have[b]
                            && !self.held[b]
                            && self
                                .inflight
                                .get(&(b as u32))
                                .is_some_and(|v| v.len() < 2 && v.iter().all(|&(x, _)| x != h))
                    })
                });
                match pick {
                    Some(b) => self.request(h, b as u32, false),
                    None => break,
                }
            }
        }
    }
}

//! A daemon's part in broadcasts (Cornet, coflow thesis §4.4.2, spec §2.3): the source's
//! daemon serves the put object's blocks; a receiver's daemon, asked by a local `get`, joins
//! the broadcast at the coordinator (the controller), asks it for peers every second, swaps
//! blocks with the peers' daemons (the orchestra peer protocol: have-maps, `Get`, the source's
//! round robin `GetAny`), serves its blocks to the others as they arrive, checks the whole
//! data's SHA-256 at the end and then serves the local gets. What to ask whom is the shared
//! `coflowkit_orchestra::cornet::schedule`; this file is the driver around it.
//!
//! A receiver stays in the swarm (serving what it holds) until the coflow is unregistered.
//! Swap uploads leave at most at the NIC rate (one user-space pacer per daemon, beside the
//! scheduler's per-flow rates, which broadcasts do not go through).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use coflowkit_orchestra::cornet;
use coflowkit_orchestra::data;
use coflowkit_orchestra::layout::Layout;
use coflowkit_orchestra::link::{self, LinkEvent, Outgoing};
use coflowkit_orchestra::pace::Pacer;
use coflowkit_orchestra::roundrobin::RoundRobin;
use coflowkit_orchestra::wire::{self, Msg};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::{broadcast as chan, mpsc, watch, OnceCell, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::allowance::Allowance;
use super::Daemon;
use crate::auth::PROTOCOL_VERSION;
use crate::coordinator::broadcast::MAX_GOT_PER_REQUEST;
use crate::frame::{self, Kind, BLOCK_BYTES};
use crate::proto::{
    data_request, BlockGot, BroadcastPeer, BroadcastPeersReply, BroadcastPeersRequest, DataHello,
    DataReply, DataRequest, SwapRequest,
};
use crate::tls;

/// Cornet's send and receive slots per machine (spec §2.3 item 4).
pub const SEND_SLOTS: usize = 12;
pub const RECEIVE_SLOTS: u32 = 8;
/// How often a receiver asks the controller for new peers (spec §2.3 item 6).
pub const PEER_REFRESH: Duration = Duration::from_secs(1);
/// Most peers a receiver is connected to (twice the default peer set).
const MAX_PEERS: usize = 20;

type Key = (u64, String);

/// The broadcasts this daemon takes part in.
pub struct Swarms {
    map: Mutex<HashMap<Key, Arc<OnceCell<Arc<Swarm>>>>>,
    pacer: Arc<Pacer>,
    /// The NIC's rate, of which the inter-transfer controller hands each broadcast a share.
    nic_bytes_per_s: f64,
}

/// One broadcast object on this daemon: the blocks it holds, its send slots, and (on a
/// receiver) how its fetch ended.
pub struct Swarm {
    layout: Layout,
    blocks: Mutex<Vec<Option<Arc<Vec<u8>>>>>,
    new_block: chan::Sender<u32>,
    slots: Arc<Semaphore>,
    rr: Mutex<RoundRobin>,
    /// `None` while fetching; the local gets wait for it.
    outcome: watch::Sender<Option<Result<(), String>>>,
    /// The fetch task, stopped when the swarm is dropped.
    fetcher: Mutex<Option<JoinHandle<()>>>,
    /// The swarm's bytes, held against the daemon's memory bound until the swarm is dropped.
    _mem: OwnedSemaphorePermit,
}

impl Swarm {
    fn new(layout: Layout, blocks: Vec<Option<Arc<Vec<u8>>>>, mem: OwnedSemaphorePermit) -> Swarm {
        let n = layout.blocks();
        let done = blocks.iter().all(Option::is_some);
        Swarm {
            layout,
            blocks: Mutex::new(blocks),
            new_block: chan::channel(n as usize + 64).0,
            slots: Arc::new(Semaphore::new(SEND_SLOTS)),
            rr: Mutex::new(RoundRobin::new(n)),
            outcome: watch::channel(done.then_some(Ok(()))).0,
            fetcher: Mutex::new(None),
            _mem: mem,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Option<Arc<Vec<u8>>>>> {
        self.blocks.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn block(&self, b: u32) -> Option<Arc<Vec<u8>>> {
        self.lock().get(b as usize)?.clone()
    }

    fn have_map(&self) -> Vec<u8> {
        self.lock().iter().map(|b| b.is_some() as u8).collect()
    }

    fn insert(&self, b: u32, d: Arc<Vec<u8>>) {
        self.lock()[b as usize] = Some(d);
        let _ = self.new_block.send(b);
    }

    fn all(&self) -> Vec<Arc<Vec<u8>>> {
        self.lock().iter().flatten().cloned().collect()
    }
}

impl Drop for Swarm {
    fn drop(&mut self) {
        if let Some(t) = self.fetcher.get_mut().ok().and_then(Option::take) {
            t.abort();
        }
    }
}

impl Swarms {
    pub fn new(nic_bytes_per_s: f64) -> Swarms {
        Swarms {
            map: Mutex::new(HashMap::new()),
            pacer: Arc::new(Pacer::new(nic_bytes_per_s * 8.0)),
            nic_bytes_per_s,
        }
    }

    fn cell(&self, coflow: u64, data_id: &str) -> Arc<OnceCell<Arc<Swarm>>> {
        let mut m = self.map.lock().unwrap_or_else(|p| p.into_inner());
        m.entry((coflow, data_id.to_string())).or_default().clone()
    }

    /// The coflow is unregistered: leave its swarms.
    pub fn drop_coflow(&self, coflow: u64) {
        let mut m = self.map.lock().unwrap_or_else(|p| p.into_inner());
        m.retain(|(c, _), _| *c != coflow);
    }
}

/// The swarm a peer asks to swap in: this daemon's receiver swarm, or, on the source's daemon,
/// one made from the put object.
async fn for_swap(
    d: &Arc<Daemon>,
    coflow: u64,
    data_id: &str,
    block_bytes: u32,
) -> Result<Arc<Swarm>, String> {
    let cell = d.swarms.cell(coflow, data_id);
    if let Some(s) = cell.get() {
        return Ok(s.clone());
    }
    let Some(obj) = d.store.get(coflow, data_id) else {
        return Err(format!(
            "daemon {} takes no part in the broadcast of `{data_id}` of coflow {coflow} (yet)",
            d.cfg.advertise
        ));
    };
    let init = async {
        let size = obj.size().ok_or_else(|| {
            format!("data `{data_id}` of coflow {coflow} is still being put; broadcast it once complete")
        })?;
        let layout = Layout::new(size, block_bytes).map_err(|e| e.to_string())?;
        let mem = reserve(d, size, data_id)?;
        let mut all = Vec::with_capacity(size as usize);
        let (mut buf, mut file) = (Vec::new(), None);
        for i in 0.. {
            match obj.read_block(i, &mut buf, &mut file).await {
                Ok(_) => all.extend_from_slice(&buf),
                Err(super::store::Fetch::End) => break,
                Err(super::store::Fetch::Io(e)) => return Err(format!("reading `{data_id}`: {e}")),
                Err(super::store::Fetch::Abandoned(why)) => return Err(why),
            }
        }
        let blocks = (0..layout.blocks())
            .map(|b| {
                let r = layout.range(b);
                Some(Arc::new(all[r.start as usize..r.end as usize].to_vec()))
            })
            .collect();
        Ok::<_, String>(Arc::new(Swarm::new(layout, blocks, mem)))
    };
    cell.get_or_try_init(|| init).await.cloned()
}

/// This daemon's receiver swarm for the object, joining the broadcast on first use.
async fn joined(d: &Arc<Daemon>, coflow: u64, data_id: &str) -> Result<Arc<Swarm>, String> {
    let cell = d.swarms.cell(coflow, data_id);
    let init = async {
        let key = (coflow, data_id.to_string());
        let first = ask(d, &key, Vec::new(), None).await?;
        if !first.failed.is_empty() {
            return Err(first.failed);
        }
        let layout = Layout::new(first.size_bytes, first.block_bytes).map_err(|e| e.to_string())?;
        let mem = reserve(d, layout.bytes, data_id)?;
        let sw = Arc::new(Swarm::new(
            layout,
            vec![None; layout.blocks() as usize],
            mem,
        ));
        let (d2, sw2) = (d.clone(), Arc::downgrade(&sw));
        let task = tokio::spawn(async move {
            let res = fetch(&d2, &sw2, key, first).await;
            if let Err(why) = &res {
                tracing::warn!("broadcast fetch failed: {why}");
            }
            if let Some(sw) = sw2.upgrade() {
                sw.outcome.send_replace(Some(res));
            }
        });
        *sw.fetcher.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
        Ok::<_, String>(sw)
    };
    cell.get_or_try_init(|| init).await.cloned()
}

/// Hold a swarm's bytes against the daemon's memory bound, which puts and swarms share (a
/// swarm keeps every block to serve its peers until the coflow ends), or refuse by name.
fn reserve(d: &Daemon, bytes: u64, data_id: &str) -> Result<OwnedSemaphorePermit, String> {
    u32::try_from(bytes)
        .ok()
        .and_then(|n| d.store.mem.clone().try_acquire_many_owned(n).ok())
        .ok_or_else(|| {
            format!(
                "the broadcast of `{data_id}` ({bytes} bytes) does not fit in daemon {}'s memory: \
                 its bound is {} bytes, {} in use",
                d.cfg.advertise,
                d.store.mem_limit(),
                d.store.mem_used()
            )
        })
}

/// One call to the controller: the news since the last, and (at the end) the digest.
async fn ask(
    d: &Daemon,
    key: &Key,
    got: Vec<BlockGot>,
    done: Option<String>,
) -> Result<BroadcastPeersReply, String> {
    let Some(mut c) = d.link.client.lock().await.clone() else {
        return Err(format!(
            "daemon {} is not connected to the coordinator (the broadcast's controller)",
            d.cfg.advertise
        ));
    };
    let r = c
        .broadcast_peers(BroadcastPeersRequest {
            coflow: key.0,
            data_id: key.1.clone(),
            daemon: d.cfg.advertise.clone(),
            got,
            done: done.is_some(),
            digest: done.unwrap_or_default(),
        })
        .await
        .map_err(|s| format!("the coordinator: {}", s.message()))?;
    Ok(r.into_inner())
}

async fn refuse<W: AsyncWrite + Unpin>(w: &mut W, error: String) -> std::io::Result<()> {
    frame::write_msg(
        w,
        Kind::Reply,
        &DataReply {
            error,
            ..Default::default()
        },
    )
    .await?;
    w.flush().await
}

/// A local `get` of a broadcast object: join, wait for the whole verified data, serve it in
/// checksummed blocks like any get.
pub async fn get<W: AsyncWrite + Unpin>(
    d: &Arc<Daemon>,
    coflow: u64,
    data_id: String,
    w: &mut W,
) -> std::io::Result<()> {
    let sw = match joined(d, coflow, &data_id).await {
        Ok(s) => s,
        Err(why) => return refuse(w, why).await,
    };
    let mut rx = sw.outcome.subscribe();
    let outcome = match rx.wait_for(Option::is_some).await {
        Ok(o) => o.clone().expect("waited for it"),
        Err(_) => Err("the broadcast ended".to_string()),
    };
    if let Err(why) = outcome {
        return refuse(w, why).await;
    }
    frame::write_msg(
        w,
        Kind::Reply,
        &DataReply {
            error: String::new(),
            size_bytes: sw.layout.bytes,
            streaming: false,
        },
    )
    .await?;
    for b in sw.all() {
        for piece in b.chunks(BLOCK_BYTES) {
            frame::write_block(w, crc32fast::hash(piece), piece).await?;
        }
    }
    frame::write_end(w, sw.layout.bytes).await?;
    w.flush().await
}

/// A peer daemon's swap connection: the have-map and then each new block announced, its
/// requests answered (a specific block, or the source's round-robin pick) holding a send
/// slot from grant to written.
pub async fn swap<R, W>(
    d: &Arc<Daemon>,
    coflow: u64,
    data_id: String,
    s: SwapRequest,
    mut r: R,
    mut w: W,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let sw = match for_swap(d, coflow, &data_id, s.block_bytes).await {
        Ok(sw) => sw,
        Err(why) => return refuse(&mut w, why).await,
    };
    if sw.layout.block_bytes != s.block_bytes {
        let why = format!(
            "blocks of {} bytes asked, the broadcast's are {}",
            s.block_bytes, sw.layout.block_bytes
        );
        return refuse(&mut w, why).await;
    }
    frame::write_msg(&mut w, Kind::Reply, &DataReply::default()).await?;
    w.flush().await?;
    let (tx, rx) = mpsc::unbounded_channel::<Outgoing>();
    let writer = link::spawn_writer(w, rx, Some(d.swarms.pacer.clone()), |_| {});
    let sw2 = sw.clone();
    let haves = link::spawn_haves(sw.new_block.subscribe(), tx.clone(), move || sw2.have_map());
    let result = loop {
        let m = match wire::read_msg(&mut r).await {
            Ok(Some(m)) => m,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        };
        let block = match m {
            Msg::Get { block, .. } => Some(block),
            Msg::GetAny { have } => sw.rr.lock().unwrap_or_else(|p| p.into_inner()).pick(&have),
            m => {
                break Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("unexpected swap request {m:?} from host {}", s.host),
                ))
            }
        };
        let (sw, tx) = (sw.clone(), tx.clone());
        tokio::spawn(async move {
            let data = block.and_then(|b| sw.block(b).map(|d| (b, d)));
            let Some((block, data)) = data else {
                let _ = tx.send((
                    Msg::NotHave {
                        block: block.unwrap_or(u32::MAX),
                    },
                    None,
                ));
                return;
            };
            if let Ok(permit) = sw.slots.clone().acquire_owned().await {
                let _ = tx.send((Msg::Block { block, data }, Some(permit)));
            }
        });
    };
    haves.abort();
    drop(tx);
    let _ = writer.await;
    result
}

/// A connected peer, as the fetcher sees it.
struct PeerConn {
    tx: mpsc::UnboundedSender<Msg>,
    have: Vec<bool>,
    outstanding: u32,
}

type Ev = LinkEvent;

/// A receiver's fetch state (the bookkeeping [`cornet::schedule`] decides from).
struct Fetch {
    me: u32,
    /// Our rack and whether to prefer it (CornetTopology/-Clustering), and each peer's.
    rack: u32,
    rack_aware: bool,
    racks: HashMap<u32, u32>,
    key: Key,
    block_bytes: u32,
    peers: HashMap<u32, PeerConn>,
    connecting: HashSet<u32>,
    /// Requested blocks: of whom, since when.
    inflight: HashMap<u32, (u32, Instant)>,
    /// "Any block" requests at the source, since when.
    any_at: VecDeque<Instant>,
    held: Vec<bool>,
    held_count: u32,
    /// Blocks got since the last report to the controller.
    got: Vec<BlockGot>,
    rng: ChaCha8Rng,
    tasks: Vec<JoinHandle<()>>,
    /// The ITC's share of this daemon's NIC for the broadcast, as paced asks.
    allowance: Allowance,
    nic_bytes_per_s: f64,
    t0: Instant,
}

impl Drop for Fetch {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

async fn fetch(
    d: &Arc<Daemon>,
    sw: &std::sync::Weak<Swarm>,
    key: Key,
    first: BroadcastPeersReply,
) -> Result<(), String> {
    let Some(swarm) = sw.upgrade() else {
        return Err("left the broadcast".into());
    };
    let layout = swarm.layout;
    drop(swarm);
    let n = layout.blocks();
    let (ev_tx, mut ev_rx) = mpsc::unbounded_channel::<Ev>();
    let mut f = Fetch {
        me: first.host,
        rack: first.rack,
        rack_aware: first.rack_aware,
        racks: HashMap::new(),
        rng: ChaCha8Rng::seed_from_u64(key.0 ^ ((first.host as u64) << 40)),
        key,
        block_bytes: layout.block_bytes,
        peers: HashMap::new(),
        connecting: HashSet::new(),
        inflight: HashMap::new(),
        any_at: VecDeque::new(),
        held: vec![false; n as usize],
        held_count: 0,
        got: Vec::new(),
        tasks: Vec::new(),
        allowance: Allowance::new(RECEIVE_SLOTS as f64 * layout.block_bytes as f64, 0.0),
        nic_bytes_per_s: d.swarms.nic_bytes_per_s,
        t0: Instant::now(),
    };
    f.share(&first);
    f.connect(d, &first.peers, &ev_tx);
    let mut tick = tokio::time::interval_at(Instant::now() + PEER_REFRESH, PEER_REFRESH);
    while f.held_count < n {
        let credit_at = f
            .allowance
            .next_s(layout.block_bytes as f64)
            .map(|s| f.t0 + Duration::from_secs_f64(s));
        tokio::select! {
            e = ev_rx.recv() => {
                let Some(e) = e else { return Err("fetch events ended".into()) };
                let Some(sw) = sw.upgrade() else { return Err("left the broadcast".into()) };
                f.handle(&sw, e);
            }
            _ = tick.tick() => {
                let got = f.take_got();
                match ask(d, &f.key, got.clone(), None).await {
                    Ok(r) if !r.failed.is_empty() => return Err(r.failed),
                    Ok(r) => {
                        f.share(&r);
                        f.connect(d, &r.peers, &ev_tx);
                    }
                    // A coordinator away for a moment: report again next time.
                    Err(why) => {
                        tracing::debug!("asking for peers: {why}");
                        let later = std::mem::replace(&mut f.got, got);
                        f.got.extend(later);
                    }
                }
            }
            _ = tokio::time::sleep_until(credit_at.unwrap_or_else(Instant::now)), if credit_at.is_some() => {}
        }
        f.schedule();
    }
    let Some(swarm) = sw.upgrade() else {
        return Err("left the broadcast".into());
    };
    // The one integrity check over the whole data (spec §2.3 item 3).
    let blocks = swarm.all();
    let digest = tokio::task::spawn_blocking(move || data::digest(blocks.iter().map(|b| &b[..])))
        .await
        .map_err(|e| format!("hashing the data: {e}"))?;
    let key = f.key.clone();
    // The news the controller has not had yet, within its per-request bound, the last with
    // the digest.
    let mut news = Vec::new();
    while f.got.len() > MAX_GOT_PER_REQUEST {
        news.push(f.take_got());
    }
    let got = std::mem::take(&mut f.got);
    // Our fetch connections end here; peers keep fetching from us over theirs.
    drop(f);
    let ok = digest == first.digest;
    for got in news {
        if let Err(why) = ask(d, &key, got, None).await {
            tracing::debug!("reporting blocks of a broadcast: {why}");
        }
    }
    if let Err(why) = ask(d, &key, got, Some(digest)).await {
        tracing::debug!("reporting the end of a broadcast: {why}");
    }
    if ok {
        Ok(())
    } else {
        Err("the broadcast data's SHA-256 is not the source's".into())
    }
}

impl Fetch {
    /// The controller's share for this broadcast, if it shares broadcasts.
    fn share(&mut self, r: &BroadcastPeersReply) {
        let now = self.t0.elapsed().as_secs_f64();
        self.allowance
            .set(r.shared.then_some(r.share), self.nic_bytes_per_s, now);
    }

    /// The oldest blocks got not reported yet, as many as one request may carry.
    fn take_got(&mut self) -> Vec<BlockGot> {
        let n = self.got.len().min(MAX_GOT_PER_REQUEST);
        self.got.drain(..n).collect()
    }

    fn connect(
        &mut self,
        d: &Arc<Daemon>,
        peers: &[BroadcastPeer],
        ev: &mpsc::UnboundedSender<Ev>,
    ) {
        for p in peers {
            let host = p.host;
            self.racks.insert(host, p.rack);
            if host == self.me
                || self.peers.contains_key(&host)
                || self.connecting.contains(&host)
                || self.peers.len() + self.connecting.len() >= MAX_PEERS
            {
                continue;
            }
            self.connecting.insert(host);
            let (d, ev, addr) = (d.clone(), ev.clone(), p.daemon.clone());
            let req = DataRequest {
                coflow: self.key.0,
                data_id: self.key.1.clone(),
                op: Some(data_request::Op::Swap(SwapRequest {
                    host: self.me,
                    block_bytes: self.block_bytes,
                })),
            };
            self.tasks.push(tokio::spawn(async move {
                let open = open_swap(&d, &addr, req);
                if let Err(why) = link::pump(host, open, &ev).await {
                    tracing::debug!(peer = %addr, "swap connection: {why}");
                }
            }));
        }
    }

    fn handle(&mut self, sw: &Swarm, e: Ev) {
        let n = self.held.len();
        match e {
            Ev::Up { host, tx } => {
                self.connecting.remove(&host);
                self.peers.insert(
                    host,
                    PeerConn {
                        tx,
                        have: vec![false; n],
                        outstanding: 0,
                    },
                );
            }
            Ev::Down { host } => {
                self.connecting.remove(&host);
                self.peers.remove(&host);
                self.inflight.retain(|_, (h, _)| *h != host);
                if host == 0 {
                    self.any_at.clear();
                }
            }
            Ev::Peer { host, msg } => {
                let Some(p) = self.peers.get_mut(&host) else {
                    return;
                };
                match msg {
                    Msg::HaveMap { have } => {
                        for (b, h) in p.have.iter_mut().enumerate() {
                            *h = have.get(b) == Some(&1);
                        }
                    }
                    Msg::Have { block } => {
                        if let Some(h) = p.have.get_mut(block as usize) {
                            *h = true;
                        }
                    }
                    Msg::NotHave { block } => {
                        p.outstanding = p.outstanding.saturating_sub(1);
                        if block == u32::MAX {
                            self.any_at.pop_front();
                        } else if (block as usize) < n {
                            p.have[block as usize] = false;
                            if self.inflight.get(&block).is_some_and(|(h, _)| *h == host) {
                                self.inflight.remove(&block);
                            }
                        }
                    }
                    Msg::Block { block, data } => {
                        p.outstanding = p.outstanding.saturating_sub(1);
                        if block as usize >= n || data.len() != sw.layout.len(block) {
                            tracing::warn!(host, block, bytes = data.len(), "a malformed block");
                            return;
                        }
                        let since = match self.inflight.get(&block) {
                            Some(&(h, t)) if h == host => {
                                self.inflight.remove(&block);
                                Some(t)
                            }
                            _ if host == 0 => self.any_at.pop_front(),
                            _ => None,
                        };
                        if self.held[block as usize] {
                            return;
                        }
                        self.held[block as usize] = true;
                        self.held_count += 1;
                        sw.insert(block, data);
                        self.got.push(BlockGot {
                            block,
                            from: host,
                            secs: since.map_or(0.0, |t| t.elapsed().as_secs_f64()),
                        });
                    }
                    m => tracing::debug!(host, "unexpected swap message {m:?}"),
                }
            }
        }
    }

    /// Ask as [`cornet::schedule`] decides (rack-aware when the controller says so).
    fn schedule(&mut self) {
        let mut requested: Vec<bool> = (0..self.held.len() as u32)
            .map(|b| self.inflight.contains_key(&b))
            .collect();
        let mut hosts: Vec<u32> = self.peers.keys().copied().collect();
        hosts.sort();
        let asks = {
            let mut peers: Vec<cornet::Peer> = hosts
                .iter()
                .map(|h| cornet::Peer {
                    host: *h,
                    rack: self.racks.get(h).copied().unwrap_or(0),
                    have: &self.peers[h].have,
                    outstanding: self.peers[h].outstanding,
                })
                .collect();
            let mut me = cornet::Receiver {
                rack: self.rack,
                rack_aware: self.rack_aware,
                receive_slots: RECEIVE_SLOTS,
                held: &self.held,
                requested: &mut requested,
            };
            cornet::schedule(&mut me, &mut peers, &mut self.rng)
        };
        let block = self.block_bytes as f64;
        let allowed = self
            .allowance
            .blocks(block, self.t0.elapsed().as_secs_f64());
        for a in asks.into_iter().take(allowed) {
            let (peer, msg) = match a {
                cornet::Ask::Block { peer, block } => (peer, Msg::Get { block, wait: false }),
                cornet::Ask::Any { peer, have } => (peer, Msg::GetAny { have }),
            };
            let Some(p) = self.peers.get_mut(&peer) else {
                continue;
            };
            if p.tx.send(msg.clone()).is_err() {
                continue;
            }
            p.outstanding += 1;
            self.allowance.spend(block);
            match msg {
                Msg::Get { block, .. } => {
                    self.inflight.insert(block, (peer, Instant::now()));
                }
                _ => self.any_at.push_back(Instant::now()),
            }
        }
    }
}

/// Open a swap connection to a peer's daemon: hello and request, and its reply; then the peer
/// protocol runs both ways ([`link::pump`]) until either side ends.
async fn open_swap(
    d: &Daemon,
    addr: &str,
    req: DataRequest,
) -> Result<
    (
        impl AsyncRead + Unpin,
        impl AsyncWrite + Unpin + Send + 'static,
    ),
    String,
> {
    let tls = d.cfg.coordinator_tls.as_ref();
    let sock = tls::connect_data(addr, tls)
        .await
        .map_err(|e| e.to_string())?;
    let (r, w) = tokio::io::split(sock);
    let (mut r, mut w) = (BufReader::new(r), BufWriter::new(w));
    let hello = DataHello {
        protocol_version: PROTOCOL_VERSION,
        token: d.cfg.token.as_str().to_string(),
    };
    let io = |e: std::io::Error| e.to_string();
    frame::write_msg(&mut w, Kind::Hello, &hello)
        .await
        .map_err(io)?;
    frame::write_msg(&mut w, Kind::Request, &req)
        .await
        .map_err(io)?;
    w.flush().await.map_err(io)?;
    let mut buf = Vec::new();
    let reply: DataReply = frame::read_msg(&mut r, &mut buf, Kind::Reply)
        .await
        .map_err(|e| e.to_string())?;
    if !reply.error.is_empty() {
        return Err(reply.error);
    }
    Ok((r, w))
}

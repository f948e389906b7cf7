//! The coordinator as Cornet's controller (coflow thesis §4.4.2, spec §2.3 item 6), sans-IO:
//! one `coflowkit_orchestra::controller::Controller` per broadcast object (the same state
//! `coflowkit broadcast` hosts), receivers joining as their daemons first ask for peers, block
//! reports and deaths fed in, peer sets and the verdict handed out. Times are passed in.
//!
//! Racks: CornetTopology takes each daemon's rack from the coordinator's configuration
//! (`CoordinatorConfig::racks`, by the host part of the daemon's address); CornetClustering
//! learns them from the block transfer times of earlier broadcasts, which the coordinator
//! keeps (between receivers, by daemon address) for as long as it runs.

use std::collections::{HashMap, VecDeque};

use coflowkit_orchestra::clustering::{racks_from_transfers, ClusteringOptions};
use coflowkit_orchestra::controller::{Controller, Transfer, Verdict};
use coflowkit_orchestra::itc::{self, Policy};
use coflowkit_orchestra::layout::Layout;
use coflowkit_orchestra::Mechanism;

use crate::proto::{BroadcastPeer, BroadcastPeersReply, BroadcastPeersRequest};

/// Cornet's default block (spec §2.3 item 1).
pub const DEFAULT_BLOCK_BYTES: u32 = 4 << 20;
pub const DEFAULT_PEER_SET: u32 = 10;
/// Most blocks one `BroadcastPeers` request may report (`got`); a daemon with more reports
/// the rest in its next requests. Keeps one request's handling short (100,000 entries stalled
/// the coordinator for seconds).
pub const MAX_GOT_PER_REQUEST: usize = 4096;
/// A broadcast where no block moved for this long while receivers wait has failed.
pub const STALL_S: f64 = 30.0;
/// Block transfers kept for CornetClustering (the oldest go first).
pub const HISTORY: usize = 100_000;

struct Broadcast {
    ctl: Controller,
    /// Rack of each daemon for this broadcast (None: vanilla Cornet, one rack).
    racks: Option<HashMap<String, u32>>,
    /// Rack of a receiver the map does not name.
    other_rack: u32,
    /// Daemon address of each host (0 = the source).
    daemons: Vec<String>,
    layout: Layout,
    digest: String,
    /// Its class under the inter-transfer controller (arrival, bytes, priority, weight).
    class: itc::Transfer,
}

/// Why a broadcast request is refused.
#[derive(Debug, PartialEq)]
pub enum Refused {
    NotFound(String),
    Invalid(String),
}

#[derive(Default)]
pub struct Broadcasts {
    map: HashMap<(u64, String), Broadcast>,
    /// The configured topology: host (the address without its port) -> rack.
    racks: HashMap<String, u32>,
    /// Block transfers between receivers of past and running broadcasts:
    /// (from daemon, to daemon, seconds).
    history: VecDeque<(String, String, f64)>,
    /// The inter-transfer controller across broadcasts and shuffles (None: none).
    policy: Option<Policy>,
    /// The shuffles running beside the broadcasts (coflow, class), as the brain last saw them.
    shuffles: Vec<(u64, itc::Transfer)>,
    /// A coflow's class under the ITC (`RegisterCoflowRequest.priority`), for its shuffle.
    priorities: HashMap<u64, u32>,
}

/// One transfer the ITC shares the NICs among: a broadcast or a shuffle (a coflow's flows).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Broadcast(u64, String),
    Shuffle(u64),
}

/// A broadcast's weighted fair share as requested: 0 means 1; negative or not finite is
/// refused by name.
pub fn weight(w: f64) -> Result<f64, Refused> {
    if w == 0.0 {
        Ok(1.0)
    } else if w.is_finite() && w > 0.0 {
        Ok(w)
    } else {
        Err(Refused::Invalid(format!(
            "weight {w}: must be positive and finite (0 = 1)"
        )))
    }
}

/// The host part of a daemon address: `10.0.0.1:7000` -> `10.0.0.1`, `[::1]:7000` -> `::1`.
pub fn host_of(daemon: &str) -> &str {
    let h = daemon.rsplit_once(':').map_or(daemon, |(h, _)| h);
    h.trim_start_matches('[').trim_end_matches(']')
}

impl Broadcasts {
    /// With a configured topology (host -> rack) for CornetTopology.
    pub fn with_racks(racks: HashMap<String, u32>) -> Broadcasts {
        Broadcasts {
            racks,
            ..Default::default()
        }
    }

    /// With an inter-transfer controller across broadcasts.
    pub fn with_policy(mut self, policy: Option<Policy>) -> Broadcasts {
        self.policy = policy;
        self
    }

    /// A started broadcast's class: when it arrived (seconds since the coordinator started),
    /// its priority and weight (checked by [`weight`]).
    pub fn classify(&mut self, coflow: u64, data_id: &str, now_s: f64, priority: u32, weight: f64) {
        if let Some(b) = self.map.get_mut(&(coflow, data_id.to_string())) {
            b.class.arrival_s = now_s;
            b.class.priority = priority;
            b.class.weight = weight;
        }
    }

    /// The ITC's share of a receiver's NIC for broadcast `key` among the broadcasts still
    /// running and the shuffles beside them (None: no ITC). A held broadcast (share 0) is not
    /// stalled: its clock is kept moving.
    fn share(&mut self, key: &(u64, String), now_s: f64) -> Option<f64> {
        let (keys, shares) = self.itc_shares(now_s)?;
        let me = Key::Broadcast(key.0, key.1.clone());
        let share = keys
            .iter()
            .position(|k| *k == me)
            .map_or(1.0, |i| shares[i]);
        if share <= 0.0 {
            if let Some(b) = self.map.get_mut(key) {
                b.ctl.on_held(now_s);
            }
        }
        Some(share)
    }

    /// Every running transfer and its share under the policy (None: no ITC).
    fn itc_shares(&self, now_s: f64) -> Option<(Vec<Key>, Vec<f64>)> {
        let policy = self.policy?;
        let mut running: Vec<(Key, &itc::Transfer)> = (self.map.iter())
            .filter(|(_, b)| b.ctl.verdict(now_s, STALL_S) == Verdict::Running)
            .map(|(k, b)| (Key::Broadcast(k.0, k.1.clone()), &b.class))
            .chain(self.shuffles.iter().map(|(c, t)| (Key::Shuffle(*c), t)))
            .collect();
        // A stable order: the shares do not depend on the map's.
        running.sort_by(|a, b| a.0.cmp(&b.0));
        let classes: Vec<&itc::Transfer> = running.iter().map(|r| r.1).collect();
        let shares = itc::shares(policy, &classes);
        Some((running.into_iter().map(|r| r.0).collect(), shares))
    }

    /// The brain's view of the shuffles (coflows with flows running, their classes without
    /// the priority, which is filled in here); returns their share of every NIC beside the
    /// running broadcasts, which the coflow scheduler divides among them (1: no ITC, or no
    /// broadcast running).
    pub fn shuffle_share(&mut self, shuffles: Vec<(u64, itc::Transfer)>, now_s: f64) -> f64 {
        self.shuffles = shuffles;
        for (c, t) in &mut self.shuffles {
            t.priority = self.priorities.get(c).copied().unwrap_or(0);
        }
        let Some((keys, shares)) = self.itc_shares(now_s) else {
            return 1.0;
        };
        if !keys.iter().any(|k| matches!(k, Key::Broadcast(..))) {
            return 1.0;
        }
        (keys.iter().zip(&shares))
            .filter(|(k, _)| matches!(k, Key::Shuffle(_)))
            .map(|(_, s)| s)
            .sum()
    }

    /// Coflow `coflow`'s class under the ITC for its shuffle (larger is more urgent).
    pub fn set_priority(&mut self, coflow: u64, priority: u32) {
        if priority == 0 {
            self.priorities.remove(&coflow);
        } else {
            self.priorities.insert(coflow, priority);
        }
    }

    /// Whether an ITC runs (the brain then computes the shuffles' share).
    pub fn has_policy(&self) -> bool {
        self.policy.is_some()
    }

    /// Racks learned from the transfer history (CornetClustering): daemon -> rack. Daemons
    /// never seen as receivers are not in the map.
    pub fn learned_racks(&self, seed: u64) -> HashMap<String, u32> {
        let mut ids: HashMap<&str, u32> = HashMap::new();
        let mut names: Vec<&str> = Vec::new();
        let mut seen = Vec::with_capacity(self.history.len());
        for (from, to, secs) in &self.history {
            seen.push(Transfer {
                from: intern(&mut ids, &mut names, from),
                to: intern(&mut ids, &mut names, to),
                secs: *secs,
            });
        }
        // Host 0 is nobody here (the clustering gives it a rack of its own).
        let o = ClusteringOptions {
            seed,
            ..Default::default()
        };
        let racks = racks_from_transfers(names.len() as u32 + 1, &seen, &o);
        names
            .iter()
            .enumerate()
            .map(|(i, d)| (d.to_string(), racks[i + 1]))
            .collect()
    }

    /// Start a broadcast of `data_id`, `size` bytes on daemon `source`.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        &mut self,
        coflow: u64,
        data_id: &str,
        source: &str,
        size: u64,
        block_bytes: u32,
        digest: &str,
        peer_set: u32,
        mechanism: &str,
    ) -> Result<(), Refused> {
        let mechanism = if mechanism.is_empty() {
            Mechanism::Cornet
        } else {
            mechanism
                .parse::<Mechanism>()
                .ok()
                .filter(Mechanism::is_cornet)
                .ok_or_else(|| {
                    Refused::Invalid(format!(
                        "mechanism `{mechanism}`: the runtime broadcasts with cornet, \
                         cornet-topology or cornet-clustering"
                    ))
                })?
        };
        if mechanism == Mechanism::CornetTopology && self.racks.is_empty() {
            return Err(Refused::Invalid(
                "mechanism cornet-topology: the coordinator has no racks configured \
                 (CoordinatorConfig::racks)"
                    .into(),
            ));
        }
        if size == 0 {
            return Err(Refused::Invalid(format!(
                "data `{data_id}` is empty: nothing to broadcast"
            )));
        }
        if digest.len() != 64 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Refused::Invalid(
                "digest: must be a SHA-256 in 64 hex digits".into(),
            ));
        }
        let block = if block_bytes == 0 {
            DEFAULT_BLOCK_BYTES
        } else {
            block_bytes
        };
        let layout = Layout::new(size, block).map_err(|e| Refused::Invalid(e.to_string()))?;
        let key = (coflow, data_id.to_string());
        if self.map.contains_key(&key) {
            return Err(Refused::Invalid(format!(
                "data `{data_id}` of coflow {coflow} is broadcast already"
            )));
        }
        let peer_set = if peer_set == 0 {
            DEFAULT_PEER_SET
        } else {
            peer_set
        };
        let racks: Option<HashMap<String, u32>> = match mechanism {
            Mechanism::CornetTopology => Some(self.racks.clone()),
            Mechanism::CornetClustering => Some(self.learned_racks(coflow)),
            _ => None,
        };
        // Receivers nobody placed share a rack of their own; so does an unplaced source.
        let other_rack = racks
            .as_ref()
            .and_then(|m| m.values().max().map(|&r| r + 1))
            .unwrap_or(0);
        // A source the history never saw as a receiver: a rack of its own, as in
        // `coflowkit broadcast` (its transfers are not clustered).
        let source_rack = match mechanism {
            Mechanism::CornetClustering => rack_in(&racks, other_rack + 1, source),
            _ => rack_in(&racks, other_rack, source),
        };
        let ctl = Controller::open_in(mechanism, layout.blocks(), peer_set, coflow, source_rack);
        self.map.insert(
            key,
            Broadcast {
                ctl,
                racks,
                other_rack,
                daemons: vec![source.to_string()],
                layout,
                digest: digest.to_ascii_lowercase(),
                class: itc::Transfer {
                    arrival_s: 0.0,
                    bytes: size as f64,
                    priority: 0,
                    weight: 1.0,
                },
            },
        );
        Ok(())
    }

    pub fn is_broadcast(&self, coflow: u64, data_id: &str) -> bool {
        self.map.contains_key(&(coflow, data_id.to_string()))
    }

    /// A receiver's daemon asks for peers (joining on its first call), with its news.
    /// `connected(addr)` says whether a daemon is still registered and connected: hosts that
    /// are not count as dead.
    pub fn peers(
        &mut self,
        now_s: f64,
        r: &BroadcastPeersRequest,
        connected: impl Fn(&str) -> bool,
    ) -> Result<BroadcastPeersReply, Refused> {
        let b = self
            .map
            .get_mut(&(r.coflow, r.data_id.clone()))
            .ok_or_else(|| {
                Refused::NotFound(format!(
                    "coflow {} has no broadcast `{}` (not started, or unregistered)",
                    r.coflow, r.data_id
                ))
            })?;
        if r.daemon == b.daemons[0] {
            return Err(Refused::Invalid(format!(
                "daemon {} is the broadcast's source",
                r.daemon
            )));
        }
        let host = match b.daemons.iter().position(|d| *d == r.daemon) {
            Some(h) => h as u32,
            None => {
                b.daemons.push(r.daemon.clone());
                let rack = b.rack_of(&r.daemon);
                b.ctl.join(rack, now_s)
            }
        };
        let (hosts, blocks) = (b.ctl.hosts(), b.layout.blocks());
        for g in &r.got {
            if g.block >= blocks || g.from >= hosts || !g.secs.is_finite() || g.secs < 0.0 {
                return Err(Refused::Invalid(format!(
                    "got: block {} from host {} in {} s is not a block of this broadcast \
                     ({blocks} blocks, {hosts} hosts)",
                    g.block, g.from, g.secs
                )));
            }
            b.ctl.on_got(host, g.block, g.from, g.secs, now_s);
            // Receiver to receiver only: the source's times include its send-slot queue.
            if g.from != 0 && g.from != host {
                if self.history.len() >= HISTORY {
                    self.history.pop_front();
                }
                let from = b.daemons[g.from as usize].clone();
                self.history.push_back((from, r.daemon.clone(), g.secs));
            }
        }
        if r.done {
            b.ctl
                .on_done(host, r.digest.eq_ignore_ascii_case(&b.digest), now_s);
        }
        for (h, d) in b.daemons.iter().enumerate() {
            if b.ctl.alive(h as u32) && !connected(d) {
                b.ctl.on_dead(h as u32, now_s);
            }
        }
        let failed = match b.ctl.verdict(now_s, STALL_S) {
            Verdict::Failed(why) => why,
            _ => String::new(),
        };
        let peers = b
            .ctl
            .peers_for(host)
            .into_iter()
            .map(|h| BroadcastPeer {
                host: h,
                daemon: b.daemons[h as usize].clone(),
                rack: b.ctl.rack(h),
            })
            .collect();
        let mut reply = BroadcastPeersReply {
            rack: b.ctl.rack(host),
            rack_aware: b.racks.is_some(),
            host,
            size_bytes: b.layout.bytes,
            block_bytes: b.layout.block_bytes,
            digest: b.digest.clone(),
            peers,
            failed,
            shared: false,
            share: 0.0,
        };
        let key = (r.coflow, r.data_id.clone());
        if let Some(s) = self.share(&key, now_s) {
            reply.shared = true;
            reply.share = s;
        }
        Ok(reply)
    }

    /// Each host's rack in a broadcast (index = host; 0 the source).
    pub fn racks(&self, coflow: u64, data_id: &str) -> Option<Vec<u32>> {
        let b = self.map.get(&(coflow, data_id.to_string()))?;
        Some((0..b.ctl.hosts()).map(|h| b.ctl.rack(h)).collect())
    }

    /// The coflow is unregistered: its broadcasts end.
    pub fn forget_coflow(&mut self, coflow: u64) {
        self.map.retain(|(c, _), _| *c != coflow);
        self.priorities.remove(&coflow);
        self.shuffles.retain(|(c, _)| *c != coflow);
    }

    /// Each joined receiver's completion time, seconds since the coordinator started (None:
    /// unfinished or dead).
    pub fn receiver_times_s(&self, coflow: u64, data_id: &str) -> Option<Vec<Option<f64>>> {
        let b = self.map.get(&(coflow, data_id.to_string()))?;
        Some(b.ctl.receiver_times_s())
    }
}

/// `d`'s number (from 1, in order of first appearance).
fn intern<'h>(ids: &mut HashMap<&'h str, u32>, names: &mut Vec<&'h str>, d: &'h str) -> u32 {
    *ids.entry(d).or_insert_with(|| {
        names.push(d);
        names.len() as u32
    })
}

impl Broadcast {
    fn rack_of(&self, daemon: &str) -> u32 {
        rack_in(&self.racks, self.other_rack, daemon)
    }
}

/// A daemon's rack in `racks` (keyed by daemon address when learned, by host when
/// configured), else `other`; 0 for vanilla Cornet.
fn rack_in(racks: &Option<HashMap<String, u32>>, other: u32, daemon: &str) -> u32 {
    match racks {
        None => 0,
        Some(m) => m
            .get(daemon)
            .or_else(|| m.get(host_of(daemon)))
            .copied()
            .unwrap_or(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::BlockGot;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    const D: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    fn ask(daemon: &str) -> BroadcastPeersRequest {
        BroadcastPeersRequest {
            coflow: 7,
            data_id: "x".into(),
            daemon: daemon.into(),
            ..Default::default()
        }
    }

    fn ask_for(data_id: &str, daemon: &str) -> BroadcastPeersRequest {
        BroadcastPeersRequest {
            data_id: data_id.into(),
            ..ask(daemon)
        }
    }

    /// The ITC's shares ride on the peers replies: without a policy none; with one, among the
    /// broadcasts still running (a finished one leaves its share to the others); a held
    /// broadcast is not failed as stalled, however long it waits.
    #[test]
    fn replies_carry_the_inter_transfer_shares() {
        let all = |_: &str| true;
        let mut plain = Broadcasts::default();
        plain.start(7, "x", "s:1", 10, 4, D, 0, "").unwrap();
        let r = plain.peers(0.0, &ask_for("x", "a:1"), all).unwrap();
        assert!(!r.shared);

        let run = |policy| {
            let mut b = Broadcasts::default().with_policy(Some(policy));
            b.start(7, "batch", "s:1", 1000, 4, D, 0, "").unwrap();
            b.classify(7, "batch", 0.0, 0, 1.0);
            b.start(7, "adhoc", "s:1", 10, 4, D, 0, "").unwrap();
            b.classify(7, "adhoc", 1.0, 1, 3.0);
            b
        };
        // A broadcast counts from its first receiver's ask on (before it, it moves nothing).
        let shares = |b: &mut Broadcasts, now: f64| {
            b.peers(now, &ask_for("adhoc", "a:1"), all).unwrap();
            let x = b.peers(now, &ask_for("batch", "a:1"), all).unwrap();
            let y = b.peers(now, &ask_for("adhoc", "a:1"), all).unwrap();
            assert!(x.shared && y.shared);
            (x.share, y.share)
        };
        assert_eq!(shares(&mut run(Policy::Priority), 2.0), (0.0, 1.0));
        assert_eq!(shares(&mut run(Policy::Fifo), 2.0), (1.0, 0.0));
        assert_eq!(shares(&mut run(Policy::WeightedFair), 2.0), (0.25, 0.75));
        // FIFO: the ad hoc broadcast waits long past the stall limit, then gets the NIC once
        // the batch's receiver is done.
        let mut b = run(Policy::Fifo);
        shares(&mut b, 2.0);
        for t in 3..100 {
            // The batch moves (a block a second), so it is neither stalled nor done.
            let mut news = ask_for("batch", "a:1");
            news.got = vec![BlockGot {
                block: t,
                from: 0,
                secs: 0.5,
            }];
            b.peers(t as f64, &news, all).unwrap();
            let y = b.peers(t as f64, &ask_for("adhoc", "a:1"), all).unwrap();
            assert!(y.failed.is_empty() && y.share == 0.0, "{t}: {y:?}");
        }
        let mut done = ask_for("batch", "a:1");
        done.done = true;
        done.digest = D.into();
        b.peers(100.0, &done, all).unwrap();
        let y = b.peers(100.5, &ask_for("adhoc", "a:1"), all).unwrap();
        assert_eq!((y.failed.as_str(), y.share), ("", 1.0));
        // Weights are checked by name; 0 means 1.
        assert_eq!(weight(0.0), Ok(1.0));
        assert!(matches!(weight(-1.0), Err(Refused::Invalid(w)) if w.contains("weight -1")));
        assert!(weight(f64::NAN).is_err());
    }

    /// One ITC over broadcasts and shuffles: the shuffles' share of every NIC beside a
    /// running broadcast under each policy, and the broadcast's share beside them.
    #[test]
    fn shuffles_and_broadcasts_share_under_one_controller() {
        let all = |_: &str| true;
        let shuffle = |arrival_s, weight| itc::Transfer {
            arrival_s,
            bytes: 1e6,
            priority: 0,
            weight,
        };
        let run = |policy, bcast_priority, shuffle_priority| {
            let mut b = Broadcasts::default().with_policy(Some(policy));
            b.start(7, "x", "s:1", 1000, 4, D, 0, "").unwrap();
            b.classify(7, "x", 1.0, bcast_priority, 1.0);
            b.set_priority(9, shuffle_priority);
            b
        };
        // No broadcast running yet (none of its receivers asked): the shuffles have it all.
        let mut b = run(Policy::Priority, 1, 0);
        assert_eq!(b.shuffle_share(vec![(9, shuffle(0.0, 1.0))], 2.0), 1.0);
        // (policy, broadcast's priority, shuffle's, shuffle's weight) -> (shuffle, broadcast)
        for (policy, bp, sp, w, want) in [
            (Policy::Priority, 1, 0, 1.0, (0.0, 1.0)),
            (Policy::Priority, 0, 2, 1.0, (1.0, 0.0)),
            (Policy::Fifo, 0, 0, 1.0, (1.0, 0.0)),
            (Policy::WeightedFair, 0, 0, 3.0, (0.75, 0.25)),
        ] {
            let mut b = run(policy, bp, sp);
            b.peers(2.0, &ask("a:1"), all).unwrap();
            let s = b.shuffle_share(vec![(9, shuffle(0.0, w))], 2.0);
            let r = b.peers(2.0, &ask("a:1"), all).unwrap();
            assert_eq!((s, r.share), want, "{policy:?}");
        }
        // The coflow unregistered: its shuffle and class are gone.
        let mut b = run(Policy::Priority, 0, 2);
        b.peers(2.0, &ask("a:1"), all).unwrap();
        b.shuffle_share(vec![(9, shuffle(0.0, 1.0))], 2.0);
        b.forget_coflow(9);
        assert_eq!(b.peers(2.0, &ask("a:1"), all).unwrap().share, 1.0);
        // Without a policy the shuffles keep every NIC.
        let mut plain = Broadcasts::default();
        assert_eq!(plain.shuffle_share(vec![(9, shuffle(0.0, 1.0))], 2.0), 1.0);
    }

    #[test]
    fn receivers_join_get_peers_and_finish() {
        let mut b = Broadcasts::default();
        assert!(matches!(
            b.start(7, "x", "s:1", 0, 0, D, 0, ""),
            Err(Refused::Invalid(w)) if w.contains("empty")
        ));
        assert!(matches!(
            b.start(7, "x", "s:1", 10, 4, "zz", 0, ""),
            Err(Refused::Invalid(w)) if w.contains("digest")
        ));
        b.start(7, "x", "s:1", 10, 4, D, 0, "").unwrap();
        assert!(b.is_broadcast(7, "x") && !b.is_broadcast(7, "y"));
        assert!(b.start(7, "x", "s:1", 10, 4, D, 0, "").is_err(), "twice");
        let all = |_: &str| true;
        let r1 = b.peers(1.0, &ask("a:1"), all).unwrap();
        assert_eq!((r1.host, r1.size_bytes, r1.block_bytes), (1, 10, 4));
        assert_eq!(r1.peers.len(), 1);
        assert_eq!(r1.peers[0].daemon, "s:1");
        let r2 = b.peers(1.1, &ask("b:1"), all).unwrap();
        assert_eq!(r2.host, 2);
        let mut hosts: Vec<u32> = r2.peers.iter().map(|p| p.host).collect();
        hosts.sort();
        assert_eq!(hosts, [0, 1]);
        // The same daemon again is the same host.
        assert_eq!(b.peers(1.2, &ask("a:1"), all).unwrap().host, 1);
        // A report naming a block out of range is refused, by name.
        let mut bad = ask("a:1");
        bad.got = vec![BlockGot {
            block: 3,
            from: 0,
            secs: 0.1,
        }];
        assert!(
            matches!(b.peers(1.3, &bad, all), Err(Refused::Invalid(w)) if w.contains("block 3"))
        );
        let mut done = ask("a:1");
        done.done = true;
        done.digest = D.to_uppercase();
        b.peers(2.0, &done, all).unwrap();
        done.daemon = "b:1".into();
        b.peers(2.5, &done, all).unwrap();
        assert_eq!(b.receiver_times_s(7, "x").unwrap(), [Some(2.0), Some(2.5)]);
        assert!(matches!(
            b.peers(3.0, &ask("s:1"), all),
            Err(Refused::Invalid(_))
        ));
        b.forget_coflow(7);
        assert!(matches!(
            b.peers(3.0, &ask("a:1"), all),
            Err(Refused::NotFound(_))
        ));
    }

    #[test]
    fn a_source_gone_before_any_block_left_fails_the_broadcast() {
        let mut b = Broadcasts::default();
        b.start(7, "x", "s:1", 10, 4, D, 0, "").unwrap();
        b.peers(0.1, &ask("a:1"), |_| true).unwrap();
        let gone = |d: &str| d != "s:1";
        assert_eq!(b.peers(0.2, &ask("a:1"), gone).unwrap().failed, "");
        let r = b.peers(1.0, &ask("a:1"), gone).unwrap();
        assert!(r.failed.contains("held by no live host"), "{}", r.failed);
        assert!(r.peers.is_empty(), "the dead source is no peer");
    }

    fn rack_sets(b: &Broadcasts, coflow: u64) -> Vec<Vec<u32>> {
        let racks = b.racks(coflow, "x").unwrap();
        let mut sets: Vec<Vec<u32>> = Vec::new();
        for k in 0..=*racks.iter().max().unwrap() {
            let s: Vec<u32> = (0..racks.len() as u32)
                .filter(|&h| racks[h as usize] == k)
                .collect();
            if !s.is_empty() {
                sets.push(s);
            }
        }
        sets
    }

    #[test]
    fn topology_peer_sets_come_from_the_configured_racks() {
        // Hosts 10.0.0.1-9 in three racks of three; the source, 10.0.0.5, in rack 1.
        let racks = (1..=9)
            .map(|i| (format!("10.0.0.{i}"), (i - 1) / 3))
            .collect();
        let mut b = Broadcasts::with_racks(racks);
        let start = |b: &mut Broadcasts, m: &str| b.start(7, "x", "10.0.0.5:9", 100, 10, D, 10, m);
        assert!(
            matches!(start(&mut b, "chain"), Err(Refused::Invalid(w)) if w.contains("`chain`"))
        );
        start(&mut b, "cornet-topology").unwrap();
        let all = |_: &str| true;
        for i in [1, 2, 3, 4, 6, 7, 8, 9] {
            b.peers(0.1, &ask(&format!("10.0.0.{i}:9")), all).unwrap();
        }
        // Hosts join in that order: 1-3 rack 0, 4 and the source rack 1, 6 rack 1, 7-9 rack 2.
        assert_eq!(b.racks(7, "x").unwrap(), [1, 0, 0, 0, 1, 1, 2, 2, 2]);
        for i in [1, 4, 9] {
            let r = b.peers(0.2, &ask(&format!("10.0.0.{i}:9")), all).unwrap();
            assert!(r.rack_aware);
            let mine = (i - 1) / 3;
            assert_eq!(r.rack, mine);
            let (same, far): (Vec<_>, Vec<_>) = r.peers.iter().partition(|p| p.rack == mine);
            assert_eq!(
                same.len(),
                2,
                "host {i}: the others of its rack: {:?}",
                r.peers
            );
            assert_eq!(far.len(), 1, "host {i}: one peer outside: {:?}", r.peers);
            for p in &r.peers {
                let ip: u32 = host_of(&p.daemon)
                    .rsplit('.')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert_eq!(p.rack, (ip - 1) / 3, "{p:?}");
            }
        }
        // Vanilla Cornet on the same coordinator: one rack, the source always a peer.
        b.forget_coflow(7);
        start(&mut b, "").unwrap();
        let r = b.peers(0.1, &ask("10.0.0.1:9"), all).unwrap();
        assert!(!r.rack_aware);
        assert_eq!((r.rack, r.peers[0].rack), (0, 0));
        // Without a configured topology cornet-topology is refused by name.
        let mut bare = Broadcasts::default();
        assert!(matches!(
            start(&mut bare, "cornet-topology"),
            Err(Refused::Invalid(w)) if w.contains("no racks configured")
        ));
    }

    #[test]
    fn clustering_learns_the_racks_from_earlier_block_times() {
        // Twelve receivers in three racks of four (rack = i % 3, interleaved so join order
        // says nothing); intra-rack blocks take ~0.1 s, cross-rack ~1 s.
        let mut b = Broadcasts::default();
        b.start(1, "x", "src:9", 1000, 10, D, 20, "").unwrap();
        let all = |_: &str| true;
        let name = |i: u32| format!("r{i}:9");
        for i in 0..12 {
            b.peers(0.1, &ask_in(1, &name(i)), all).unwrap();
        }
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for i in 0..12u32 {
            let mut r = ask_in(1, &name(i));
            for j in (0..12u32).filter(|&j| j != i) {
                // Hosts are numbered from 1 in join order; 30% of the pairs never swapped.
                if rng.gen_bool(0.3) {
                    continue;
                }
                let base = if i % 3 == j % 3 { 0.1 } else { 1.0 };
                r.got.push(BlockGot {
                    block: j,
                    from: j + 1,
                    secs: base * rng.gen_range(0.85..1.15),
                });
            }
            b.peers(0.5, &r, all).unwrap();
        }
        b.start(2, "x", "src:9", 1000, 10, D, 20, "cornet-clustering")
            .unwrap();
        for i in 0..12 {
            b.peers(1.0, &ask_in(2, &name(i)), all).unwrap();
        }
        let mut sets = rack_sets(&b, 2);
        sets.sort();
        // The source (host 0) alone; hosts 1 + i by i % 3.
        assert_eq!(
            sets,
            [
                vec![0],
                vec![1, 4, 7, 10],
                vec![2, 5, 8, 11],
                vec![3, 6, 9, 12]
            ]
        );
        let r = b.peers(1.1, &ask_in(2, &name(0)), all).unwrap();
        assert!(r.rack_aware);
    }

    fn ask_in(coflow: u64, daemon: &str) -> BroadcastPeersRequest {
        BroadcastPeersRequest {
            coflow,
            ..ask(daemon)
        }
    }
}

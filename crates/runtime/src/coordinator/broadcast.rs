//! The coordinator as Cornet's controller (coflow thesis §4.4.2, spec §2.3 item 6), sans-IO:
//! one `coflowkit_orchestra::controller::Controller` per broadcast object (the same state
//! `coflowkit broadcast` hosts), receivers joining as their daemons first ask for peers, block
//! reports and deaths fed in, peer sets and the verdict handed out. Times are passed in.

use std::collections::HashMap;

use coflowkit_orchestra::controller::{Controller, Verdict};
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

struct Broadcast {
    ctl: Controller,
    /// Daemon address of each host (0 = the source).
    daemons: Vec<String>,
    layout: Layout,
    digest: String,
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
}

impl Broadcasts {
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
    ) -> Result<(), Refused> {
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
        let ctl = Controller::open(Mechanism::Cornet, layout.blocks(), peer_set, coflow);
        self.map.insert(
            key,
            Broadcast {
                ctl,
                daemons: vec![source.to_string()],
                layout,
                digest: digest.to_ascii_lowercase(),
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
                b.ctl.join(0, now_s)
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
            })
            .collect();
        Ok(BroadcastPeersReply {
            host,
            size_bytes: b.layout.bytes,
            block_bytes: b.layout.block_bytes,
            digest: b.digest.clone(),
            peers,
            failed,
        })
    }

    /// The coflow is unregistered: its broadcasts end.
    pub fn forget_coflow(&mut self, coflow: u64) {
        self.map.retain(|(c, _), _| *c != coflow);
    }

    /// Each joined receiver's completion time, seconds since the coordinator started (None:
    /// unfinished or dead).
    pub fn receiver_times_s(&self, coflow: u64, data_id: &str) -> Option<Vec<Option<f64>>> {
        let b = self.map.get(&(coflow, data_id.to_string()))?;
        Some(b.ctl.receiver_times_s())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::BlockGot;

    const D: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    fn ask(daemon: &str) -> BroadcastPeersRequest {
        BroadcastPeersRequest {
            coflow: 7,
            data_id: "x".into(),
            daemon: daemon.into(),
            ..Default::default()
        }
    }

    #[test]
    fn receivers_join_get_peers_and_finish() {
        let mut b = Broadcasts::default();
        assert!(matches!(
            b.start(7, "x", "s:1", 0, 0, D, 0),
            Err(Refused::Invalid(w)) if w.contains("empty")
        ));
        assert!(matches!(
            b.start(7, "x", "s:1", 10, 4, "zz", 0),
            Err(Refused::Invalid(w)) if w.contains("digest")
        ));
        b.start(7, "x", "s:1", 10, 4, D, 0).unwrap();
        assert!(b.is_broadcast(7, "x") && !b.is_broadcast(7, "y"));
        assert!(b.start(7, "x", "s:1", 10, 4, D, 0).is_err(), "twice");
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
        b.start(7, "x", "s:1", 10, 4, D, 0).unwrap();
        b.peers(0.1, &ask("a:1"), |_| true).unwrap();
        let gone = |d: &str| d != "s:1";
        assert_eq!(b.peers(0.2, &ask("a:1"), gone).unwrap().failed, "");
        let r = b.peers(1.0, &ask("a:1"), gone).unwrap();
        assert!(r.failed.contains("held by no live host"), "{}", r.failed);
        assert!(r.peers.is_empty(), "the dead source is no peer");
    }
}

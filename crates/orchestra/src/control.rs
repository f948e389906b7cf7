//! The control protocol between each node and the controller: one JSON object per line over
//! TCP. A node says `Hello`; once every node has, the controller sends each the `Plan`; the
//! source makes the data and says `Ready` with its digest; the controller starts the clock and
//! sends `Go`. Receivers then report blocks (`Got`, which also feeds CornetClustering) and the
//! end (`Done` with the digest of what they hold), ask for peers every second (`PeersPlease`),
//! and stay and serve until `Finish` (or `Abort`).

use serde::{Deserialize, Serialize};

use crate::layout::Layout;
use crate::mechanism::Mechanism;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum FromNode {
    Hello { host: u32, addr: String },
    Ready { digest: String, pieces: Vec<String> },
    PeersPlease,
    Got { block: u32, from: u32, secs: f64 },
    Done { digest: String },
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum ToNode {
    Plan(Plan),
    Go {
        digest: String,
        pieces: Vec<String>,
    },
    Peers {
        peers: Vec<PeerInfo>,
    },
    /// HDFS-like readers may start: the replicas are written.
    ReplicasReady,
    Finish,
    Abort {
        why: String,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PeerInfo {
    pub host: u32,
    pub addr: String,
    pub rack: u32,
}

/// Everything a node needs to take part in one broadcast.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Plan {
    pub mechanism: Mechanism,
    pub layout: Layout,
    /// Seed of the data (the source's bytes are a ChaCha8 stream from it) and of every node's
    /// random choices (xor its host).
    pub seed: u64,
    /// Data address of every host (index = host; host 0 is the source).
    pub addrs: Vec<String>,
    /// Rack of every host as the controller configures or learned it (all 0 when unknown).
    pub racks: Vec<u32>,
    /// User-space pacing of each node's uploads, bits per second (loopback without netns).
    pub pace_bps: Option<f64>,
    pub opts: Options,
    /// Fault injection (`--kill H@got:N`): host `.0` SIGKILLs itself on receiving its `.1`-th
    /// block, so it dies mid-broadcast however late the controller hears of its progress.
    #[serde(default)]
    pub die_holding: Option<(u32, u32)>,
}

/// The knobs of the mechanisms, defaults as the thesis gives them (spec §2.3) or as chosen
/// (docs/orchestra.md, "Choices").
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Options {
    /// Cornet's block size (thesis: 4 MB).
    pub block_bytes: u32,
    /// Pieces of the pipelined mechanisms (chain, tree, HDFS write pipeline and reads).
    pub pipe_bytes: u32,
    /// BitTorrent's chunk size (thesis: up to 256 KB).
    pub chunk_bytes: u32,
    /// Cornet's receive and send slots per machine (thesis: 8 and 12).
    pub receive_slots: u32,
    pub send_slots: u32,
    /// Peers the controller hands a Cornet receiver per request.
    pub peer_set: u32,
    /// Seconds between a receiver's requests for new peers (thesis: 1 s).
    pub peer_refresh_s: f64,
    /// Requests a pipelined receiver keeps outstanding at its parent.
    pub pipe_window: u32,
    /// BitTorrent: regular unchoke slots, requests outstanding per peer, rechoke period,
    /// rechokes per optimistic unchoke.
    pub bt_unchoke: u32,
    pub bt_pipeline: u32,
    pub bt_rechoke_s: f64,
    pub bt_optimistic_every: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            block_bytes: 4 << 20,
            pipe_bytes: 256 << 10,
            chunk_bytes: 256 << 10,
            receive_slots: 8,
            send_slots: 12,
            peer_set: 10,
            peer_refresh_s: 1.0,
            pipe_window: 4,
            bt_unchoke: 4,
            bt_pipeline: 5,
            bt_rechoke_s: 1.0,
            bt_optimistic_every: 3,
        }
    }
}

impl Options {
    /// The unit a mechanism moves data in.
    pub fn unit_bytes(&self, m: Mechanism) -> u32 {
        match m {
            Mechanism::BitTorrent => self.chunk_bytes,
            Mechanism::Chain | Mechanism::Tree { .. } | Mechanism::Hdfs { .. } => self.pipe_bytes,
            _ => self.block_bytes,
        }
    }
}

impl Plan {
    pub fn hosts(&self) -> u32 {
        self.addrs.len() as u32
    }

    /// Where a pipelined receiver fetches from: its parent in the chain or tree, its
    /// predecessor in the HDFS write pipeline (replicas `1..r`); `None` for HDFS readers.
    pub fn parent(&self, host: u32) -> Option<u32> {
        if host == 0 {
            return None;
        }
        match self.mechanism {
            Mechanism::Chain => Some(host - 1),
            Mechanism::Tree { d } => Some((host - 1) / d),
            Mechanism::Hdfs { r } if host < r => Some(host - 1),
            _ => None,
        }
    }

    /// HDFS-like: the hosts holding replicas (the source writes the first, as HDFS places the
    /// first replica on the writer's node), capped at the hosts there are.
    pub fn replicas(&self) -> Vec<u32> {
        match self.mechanism {
            Mechanism::Hdfs { r } => (0..r.min(self.hosts())).collect(),
            _ => vec![0],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(m: Mechanism, hosts: u32) -> Plan {
        Plan {
            mechanism: m,
            layout: Layout::new(100, 10).unwrap(),
            seed: 1,
            addrs: vec!["127.0.0.1:1".into(); hosts as usize],
            racks: vec![0; hosts as usize],
            pace_bps: None,
            opts: Options::default(),
            die_holding: None,
        }
    }

    #[test]
    fn parents_form_chains_trees_and_pipelines() {
        let c = plan(Mechanism::Chain, 5);
        assert_eq!(
            (1..5).map(|h| c.parent(h).unwrap()).collect::<Vec<_>>(),
            [0, 1, 2, 3]
        );
        let t = plan(Mechanism::Tree { d: 2 }, 7);
        assert_eq!(
            (1..7).map(|h| t.parent(h).unwrap()).collect::<Vec<_>>(),
            [0, 0, 1, 1, 2, 2]
        );
        let h = plan(Mechanism::Hdfs { r: 3 }, 6);
        assert_eq!(h.replicas(), [0, 1, 2]);
        assert_eq!(
            [h.parent(1), h.parent(2), h.parent(3)],
            [Some(0), Some(1), None]
        );
        assert_eq!(plan(Mechanism::Hdfs { r: 10 }, 4).replicas(), [0, 1, 2, 3]);
        assert_eq!(plan(Mechanism::Cornet, 4).parent(2), None);
    }

    #[test]
    fn messages_are_one_json_line_each() {
        let m = ToNode::Plan(plan(Mechanism::Hdfs { r: 3 }, 2));
        let s = serde_json::to_string(&m).unwrap();
        assert!(!s.contains('\n'));
        assert_eq!(serde_json::from_str::<ToNode>(&s).unwrap(), m);
        let g: FromNode =
            serde_json::from_str(r#"{"t":"got","block":3,"from":0,"secs":0.5}"#).unwrap();
        assert_eq!(
            g,
            FromNode::Got {
                block: 3,
                from: 0,
                secs: 0.5
            }
        );
    }
}

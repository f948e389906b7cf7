//! The broadcast controller's state, sans-IO (spec §2.3 item 6): who is alive, who holds which
//! block, which peers each receiver gets, when the run is done or cannot finish. Times are
//! passed in (seconds since the start); the command's driver (`run`) feeds it the nodes'
//! messages, and a coordinator could host the same state later.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::mechanism::Mechanism;

/// One block transfer as a receiver reported it: the raw material of CornetClustering.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Transfer {
    pub from: u32,
    pub to: u32,
    pub secs: f64,
}

#[derive(Debug)]
pub struct Controller {
    mechanism: Mechanism,
    /// Rack of each host; all 0 for vanilla Cornet.
    racks: Vec<u32>,
    alive: Vec<bool>,
    /// `held[h][b]`.
    held: Vec<Vec<bool>>,
    done_s: Vec<Option<f64>>,
    digest_ok: Vec<Option<bool>>,
    peer_set: usize,
    last_progress_s: f64,
    last_death_s: Option<f64>,
    transfers: Vec<Transfer>,
    rng: ChaCha8Rng,
}

/// Seconds after a death before blocks only the dead held count as lost.
pub const DEATH_GRACE_S: f64 = 0.5;

/// Why a broadcast cannot finish.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Running,
    /// Every receiver still alive holds the whole data.
    Done,
    Failed(String),
}

impl Controller {
    /// Host 0 is the source and holds every block.
    pub fn new(
        mechanism: Mechanism,
        hosts: u32,
        blocks: u32,
        racks: Vec<u32>,
        peer_set: u32,
        seed: u64,
    ) -> Controller {
        let n = hosts as usize;
        let mut held = vec![vec![false; blocks as usize]; n];
        held[0].fill(true);
        let mut done_s = vec![None; n];
        done_s[0] = Some(0.0);
        let mut digest_ok = vec![None; n];
        digest_ok[0] = Some(true);
        Controller {
            mechanism,
            racks: if racks.len() == n { racks } else { vec![0; n] },
            alive: vec![true; n],
            held,
            done_s,
            digest_ok,
            peer_set: peer_set.max(1) as usize,
            last_progress_s: 0.0,
            last_death_s: None,
            transfers: Vec::new(),
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0xC0_47E7),
        }
    }

    /// A broadcast whose receivers join as they come (the runtime's coordinator: a receiver
    /// is whoever asks for the data): the source, host 0, alone at first.
    pub fn open(mechanism: Mechanism, blocks: u32, peer_set: u32, seed: u64) -> Controller {
        Controller::open_in(mechanism, blocks, peer_set, seed, 0)
    }

    /// [`Controller::open`] with the source in rack `source_rack`.
    pub fn open_in(
        mechanism: Mechanism,
        blocks: u32,
        peer_set: u32,
        seed: u64,
        source_rack: u32,
    ) -> Controller {
        Controller::new(mechanism, 1, blocks, vec![source_rack], peer_set, seed)
    }

    /// A new receiver in rack `rack`: its host number (the next one).
    pub fn join(&mut self, rack: u32, now_s: f64) -> u32 {
        let blocks = self.held[0].len();
        self.racks.push(rack);
        self.alive.push(true);
        self.held.push(vec![false; blocks]);
        self.done_s.push(None);
        self.digest_ok.push(None);
        // A receiver arriving late is not a stall.
        self.last_progress_s = self.last_progress_s.max(now_s);
        self.hosts() - 1
    }

    pub fn hosts(&self) -> u32 {
        self.alive.len() as u32
    }

    pub fn rack(&self, h: u32) -> u32 {
        self.racks[h as usize]
    }

    /// Peers for receiver `me` (spec §2.3 item 6). Vanilla Cornet: a random `peer_set` of the
    /// live hosts, the source always among them while it lives (it holds every block).
    /// Topology-aware: every live host of `me`'s rack (up to the set size), then one of another
    /// rack chosen at random, so blocks enter the rack, and the source only from `me`'s rack or
    /// as that one cross-rack peer.
    pub fn peers_for(&mut self, me: u32) -> Vec<u32> {
        let others: Vec<u32> = (0..self.hosts())
            .filter(|&h| h != me && self.alive[h as usize])
            .collect();
        let mut out: Vec<u32> = Vec::new();
        let rack_aware = matches!(
            self.mechanism,
            Mechanism::CornetTopology | Mechanism::CornetClustering
        ) && self.racks.iter().any(|&r| r != self.racks[0]);
        if rack_aware {
            let mine = self.racks[me as usize];
            let (mut same, mut far): (Vec<u32>, Vec<u32>) = others
                .into_iter()
                .partition(|&h| self.racks[h as usize] == mine);
            same.shuffle(&mut self.rng);
            far.shuffle(&mut self.rng);
            out.extend(same.into_iter().take(self.peer_set));
            out.extend(far.into_iter().take(1));
        } else {
            let mut rest: Vec<u32> = others.into_iter().filter(|&h| h != 0).collect();
            if self.alive[0] && me != 0 {
                out.push(0);
            }
            rest.shuffle(&mut self.rng);
            let room = self.peer_set.saturating_sub(out.len());
            out.extend(rest.into_iter().take(room));
        }
        out
    }

    /// Host `host` got `block` from `from` in `secs`. Only a block's first report for a host
    /// is kept as a transfer, so the list is at most hosts x blocks long however often a
    /// receiver repeats its reports (it grew by each repeat, without bound).
    pub fn on_got(&mut self, host: u32, block: u32, from: u32, secs: f64, now_s: f64) {
        let held = self
            .held
            .get_mut(host as usize)
            .and_then(|h| h.get_mut(block as usize));
        let Some(b) = held else { return };
        self.last_progress_s = now_s;
        if std::mem::replace(b, true) {
            return;
        }
        self.transfers.push(Transfer {
            from,
            to: host,
            secs,
        });
    }

    pub fn on_done(&mut self, host: u32, digest_ok: bool, now_s: f64) {
        if let Some(h) = self.held.get_mut(host as usize) {
            h.fill(true);
        }
        self.done_s[host as usize].get_or_insert(now_s);
        self.digest_ok[host as usize] = Some(digest_ok);
        self.last_progress_s = now_s;
    }

    /// The inter-transfer controller holds this broadcast (a share of 0): time held is not
    /// a stall.
    pub fn on_held(&mut self, now_s: f64) {
        self.last_progress_s = self.last_progress_s.max(now_s);
    }

    pub fn on_dead(&mut self, host: u32, now_s: f64) {
        self.alive[host as usize] = false;
        self.last_death_s = Some(now_s);
    }

    /// Every block is at some live receiver: a complete copy survives the source.
    pub fn copied(&self) -> bool {
        (0..self.held[0].len())
            .all(|b| (1..self.held.len()).any(|h| self.alive[h] && self.held[h][b]))
    }

    /// Blocks host `h` is known to hold.
    pub fn held_count(&self, h: u32) -> usize {
        self.held[h as usize].iter().filter(|&&x| x).count()
    }

    pub fn alive(&self, h: u32) -> bool {
        self.alive[h as usize]
    }

    /// HDFS-like readers start once every replica is written.
    pub fn replicas_written(&self, replicas: &[u32]) -> bool {
        replicas
            .iter()
            .all(|&h| self.done_s[h as usize].is_some() || !self.alive[h as usize])
    }

    /// Done, still running, or failed: a block no live host holds (the source died before
    /// every block left it), or no block moved for `stall_s` seconds (a chain or tree whose
    /// parent died).
    pub fn verdict(&self, now_s: f64, stall_s: f64) -> Verdict {
        let waiting: Vec<u32> = (1..self.hosts())
            .filter(|&h| self.alive[h as usize] && self.done_s[h as usize].is_none())
            .collect();
        if waiting.is_empty() {
            return Verdict::Done;
        }
        let blocks = self.held[0].len();
        // Reports of blocks that arrived just before a death may still be on their way.
        let settled = self
            .last_death_s
            .is_some_and(|d| now_s - d >= DEATH_GRACE_S);
        let lost: Vec<usize> = (0..blocks)
            .filter(|&b| !(0..self.hosts() as usize).any(|h| self.alive[h] && self.held[h][b]))
            .collect();
        if settled && !lost.is_empty() {
            let dead: Vec<u32> = (0..self.hosts())
                .filter(|&h| !self.alive[h as usize])
                .collect();
            return Verdict::Failed(format!(
                "{} of {blocks} blocks (first: {}) are held by no live host (dead: {dead:?}); receivers {waiting:?} cannot finish",
                lost.len(),
                lost[0]
            ));
        }
        if now_s - self.last_progress_s > stall_s {
            return Verdict::Failed(format!(
                "no block moved for {stall_s} s; receivers {waiting:?} unfinished (dead hosts: {:?})",
                (0..self.hosts()).filter(|&h| !self.alive[h as usize]).collect::<Vec<_>>()
            ));
        }
        Verdict::Running
    }

    /// Each receiver's completion time (None: dead or unfinished).
    pub fn receiver_times_s(&self) -> Vec<Option<f64>> {
        self.done_s[1..].to_vec()
    }

    /// Every receiver that finished holds data whose digest is the source's.
    pub fn checksums_ok(&self) -> bool {
        self.digest_ok[1..].iter().all(|d| d != &Some(false))
    }

    pub fn transfers(&self) -> &[Transfer] {
        &self.transfers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A receiver repeating its reports adds no transfer (each repeat did); a block out of
    /// range is ignored.
    #[test]
    fn repeated_block_reports_keep_one_transfer_each() {
        let mut c = Controller::new(Mechanism::Cornet, 3, 4, vec![], 2, 7);
        for round in 0..100 {
            for block in 0..4 {
                c.on_got(1, block, 0, 0.5, round as f64);
            }
            c.on_got(1, 99, 0, 0.5, 0.0);
            c.on_got(99, 0, 0, 0.5, 0.0);
        }
        c.on_got(2, 3, 1, 0.25, 100.0);
        assert_eq!(c.transfers().len(), 5);
        let last = c.transfers()[4];
        assert_eq!((last.from, last.to, last.secs), (1, 2, 0.25));
    }

    #[test]
    fn cornet_peer_sets_are_random_live_hosts_with_the_source() {
        let mut c = Controller::new(Mechanism::Cornet, 12, 4, vec![], 4, 7);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..50 {
            let p = c.peers_for(5);
            assert_eq!(p.len(), 4);
            assert_eq!(p[0], 0);
            assert!(!p.contains(&5));
            let mut d = p.clone();
            d.sort();
            d.dedup();
            assert_eq!(d.len(), 4);
            seen.extend(p);
        }
        assert_eq!(seen.len(), 11, "every other host turns up: {seen:?}");
        c.on_dead(3, 0.0);
        c.on_dead(0, 0.0);
        for _ in 0..50 {
            let p = c.peers_for(5);
            assert!(!p.contains(&3) && !p.contains(&0), "{p:?}");
        }
    }

    #[test]
    fn topology_peer_sets_stay_in_the_rack_but_one() {
        // Source 0 in rack 1; hosts 1-3 rack 0, 4-6 rack 1, 7-9 rack 2.
        let racks = vec![1, 0, 0, 0, 1, 1, 1, 2, 2, 2];
        let mut c = Controller::new(Mechanism::CornetTopology, 10, 4, racks.clone(), 10, 1);
        for _ in 0..20 {
            let p = c.peers_for(8);
            let far: Vec<u32> = p
                .iter()
                .copied()
                .filter(|&h| racks[h as usize] != 2)
                .collect();
            assert_eq!(far.len(), 1, "{p:?}");
            assert!(p.contains(&7) && p.contains(&9));
            let p = c.peers_for(4);
            assert!(p.contains(&0) && p.contains(&5) && p.contains(&6), "{p:?}");
        }
        // Vanilla Cornet ignores racks.
        let mut v = Controller::new(Mechanism::Cornet, 10, 4, racks, 9, 1);
        assert_eq!(v.peers_for(8).len(), 9);
    }

    #[test]
    fn receivers_join_an_open_broadcast() {
        let mut c = Controller::open(Mechanism::Cornet, 3, 4, 1);
        assert_eq!(c.verdict(0.0, 5.0), Verdict::Done, "nobody waits yet");
        assert_eq!(c.join(0, 0.5), 1);
        assert_eq!(c.join(0, 0.6), 2);
        assert_eq!(c.peers_for(1), [0, 2]);
        assert_eq!(c.verdict(1.0, 5.0), Verdict::Running);
        c.on_got(1, 2, 0, 0.1, 1.0);
        assert_eq!(c.held_count(1), 1);
        c.on_done(1, true, 2.0);
        c.on_done(2, true, 2.5);
        assert_eq!(c.verdict(3.0, 5.0), Verdict::Done);
        assert_eq!(c.receiver_times_s(), [Some(2.0), Some(2.5)]);
    }

    #[test]
    fn verdicts() {
        let mut c = Controller::new(Mechanism::Cornet, 3, 2, vec![], 4, 1);
        assert_eq!(c.verdict(0.1, 5.0), Verdict::Running);
        c.on_got(1, 0, 0, 0.1, 0.2);
        c.on_dead(0, 0.3);
        assert_eq!(c.verdict(0.4, 5.0), Verdict::Running, "within the grace");
        // Block 1 was only at the source.
        match c.verdict(0.9, 5.0) {
            Verdict::Failed(why) => assert!(why.contains("1 of 2 blocks (first: 1)"), "{why}"),
            v => panic!("{v:?}"),
        }
        let mut c = Controller::new(Mechanism::Cornet, 3, 2, vec![], 4, 1);
        c.on_got(1, 0, 0, 0.1, 0.2);
        assert!(!c.copied());
        c.on_got(2, 1, 0, 0.1, 0.2);
        assert!(c.copied());
        assert_eq!((c.held_count(0), c.held_count(2)), (2, 1));
        c.on_dead(0, 0.3);
        assert_eq!(c.verdict(1.0, 5.0), Verdict::Running);
        assert!(matches!(c.verdict(9.0, 5.0), Verdict::Failed(w) if w.contains("no block moved")));
        c.on_done(1, true, 1.5);
        c.on_dead(2, 1.6);
        assert_eq!(c.verdict(2.0, 5.0), Verdict::Done);
        assert_eq!(c.receiver_times_s(), [Some(1.5), None]);
        assert!(c.checksums_ok());
        c.on_done(2, false, 2.0);
        assert!(!c.checksums_ok());
    }
}

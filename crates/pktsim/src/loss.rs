//! Impairments of the wire (off by default, where the thesis' simulator never loses a
//! packet): each packet a host puts on its link is dropped, duplicated or held back a few
//! timesteps with the given probabilities, from the run's seed. Turning any of them on turns
//! on the protocol's loss recovery (`SimConfig::recovery`).

use coflowkit_shuffle::proto::Packet;
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Probabilities per packet sent by a host (data and control alike).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Loss {
    pub drop: f64,
    pub duplicate: f64,
    /// A packet (or a duplicate's copy) is held back 1..=`reorder_max` timesteps, uniformly,
    /// so packets sent later overtake it.
    pub reorder: f64,
    pub reorder_max: u32,
}

impl Loss {
    pub const OFF: Loss = Loss {
        drop: 0.0,
        duplicate: 0.0,
        reorder: 0.0,
        reorder_max: 8,
    };

    pub fn on(&self) -> bool {
        self.drop > 0.0 || self.duplicate > 0.0 || self.reorder > 0.0
    }
}

/// What the impairments did over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LossCounts {
    pub dropped: u64,
    pub duplicated: u64,
    pub reordered: u64,
}

/// The impairments in action: the random stream and the packets held back.
#[derive(Debug)]
pub struct Impair {
    cfg: Loss,
    rng: ChaCha8Rng,
    /// (release timestep, sending host, packet), in no particular order.
    held: Vec<(u64, u32, Packet)>,
    pub counts: LossCounts,
}

impl Impair {
    pub fn new(cfg: Loss, seed: u64) -> Self {
        Impair {
            cfg,
            // Its own stream: the other seeded choices of a run stay what they were.
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x6c6f_7373_5f77_6972),
            held: Vec::new(),
            counts: LossCounts::default(),
        }
    }

    /// Packet `p` leaves `host` at `now`: pushes the copies that go on the wire now to `out`
    /// (none if dropped, two if duplicated and neither held back).
    pub fn send(&mut self, now: u64, host: u32, p: Packet, out: &mut Vec<Packet>) {
        if self.rng.gen_bool(self.cfg.drop) {
            self.counts.dropped += 1;
            return;
        }
        let copies = if self.rng.gen_bool(self.cfg.duplicate) {
            self.counts.duplicated += 1;
            2
        } else {
            1
        };
        for _ in 0..copies {
            if self.rng.gen_bool(self.cfg.reorder) {
                self.counts.reordered += 1;
                let delay = self.rng.gen_range(1..=self.cfg.reorder_max.max(1)) as u64;
                self.held.push((now + delay, host, p));
            } else {
                out.push(p);
            }
        }
    }

    /// Packets held back whose time has come, with their hosts.
    pub fn release(&mut self, now: u64, out: &mut Vec<(u32, Packet)>) {
        let mut i = 0;
        while i < self.held.len() {
            if self.held[i].0 <= now {
                let (_, h, p) = self.held.swap_remove(i);
                out.push((h, p));
            } else {
                i += 1;
            }
        }
    }

    pub fn holding(&self) -> bool {
        !self.held.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_shuffle::proto::Kind;

    fn pkt(seq: u32) -> Packet {
        Packet {
            kind: Kind::Data,
            src: 0,
            dst: 1,
            seq,
            total: 1000,
            unsched: 1000,
            seed: 0,
        }
    }

    #[test]
    fn rates_match_the_probabilities_and_held_packets_come_back() {
        let cfg = Loss {
            drop: 0.1,
            duplicate: 0.2,
            reorder: 0.3,
            reorder_max: 4,
        };
        let mut im = Impair::new(cfg, 7);
        let mut out = Vec::new();
        let mut back = Vec::new();
        for t in 0..10_000u64 {
            im.send(t, 0, pkt(t as u32), &mut out);
            im.release(t, &mut back);
        }
        im.release(10_004, &mut back);
        let c = im.counts;
        let near = |x: u64, p: f64, n: f64| ((x as f64) / n - p).abs() < 0.02;
        assert!(near(c.dropped, 0.1, 10_000.0), "{c:?}");
        assert!(near(c.duplicated, 0.2, 9_000.0), "{c:?}");
        // Every packet not dropped arrives, duplicates twice.
        assert_eq!(
            (out.len() + back.len()) as u64,
            10_000 - c.dropped + c.duplicated
        );
        assert_eq!(back.len() as u64, c.reordered);
        assert!(!im.holding());
    }

    #[test]
    fn off_leaves_everything_alone() {
        let mut im = Impair::new(Loss::OFF, 1);
        let mut out = Vec::new();
        for t in 0..100 {
            im.send(t, 0, pkt(t as u32), &mut out);
        }
        assert_eq!(out, (0..100).map(pkt).collect::<Vec<_>>());
        assert_eq!(im.counts, LossCounts::default());
    }
}

//! A Cornet receiver's choice of what to ask whom (spec §2.3 items 4-5), sans-IO: the same
//! decision for a `coflowkit broadcast` node ([`crate::node`]) and a runtime daemon taking part
//! in a `client.broadcast`. The caller keeps the bookkeeping (who has what, what is asked) and
//! applies the asks it gets back.
//!
//! Up to the receive slots outstanding, at most [`PER_PEER`] at one peer; a random block the
//! peer has and nobody was asked for; peers in random order, the source (host 0, which picks
//! the block itself, round robin first) after the others. Rack-aware: peers of the receiver's
//! rack first; from outside it only blocks no peer of its rack has, [`CROSS_RACK`] at a time.

use rand::seq::SliceRandom;
use rand::Rng;

/// Requests a Cornet receiver keeps at one peer: one behind the one arriving.
pub const PER_PEER: u32 = 2;
/// Blocks a rack-aware receiver fetches from outside its rack at once.
pub const CROSS_RACK: u32 = 2;

/// What the receiver knows of one connected peer.
#[derive(Debug, Clone)]
pub struct Peer<'a> {
    pub host: u32,
    pub rack: u32,
    /// `have[b]`: the peer announced block `b`.
    pub have: &'a [bool],
    /// Requests outstanding at this peer (specific blocks and "any block").
    pub outstanding: u32,
}

/// One request to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    /// `Get { block }` of a peer that announced it.
    Block { peer: u32, block: u32 },
    /// `GetAny` of the source, with the receiver's have-map (held or asked: 1).
    Any { peer: u32, have: Vec<u8> },
}

/// The receiver's side of the decision.
#[derive(Debug)]
pub struct Receiver<'a> {
    pub rack: u32,
    pub rack_aware: bool,
    pub receive_slots: u32,
    pub held: &'a [bool],
    /// `requested[b]`: asked of some peer and not answered yet; updated with the new asks.
    pub requested: &'a mut [bool],
}

/// The asks to send now. `peers` is every connected peer; their `outstanding` counts are
/// raised by the asks made here.
pub fn schedule(me: &mut Receiver<'_>, peers: &mut [Peer<'_>], rng: &mut impl Rng) -> Vec<Ask> {
    let n = me.held.len();
    let mut asks = Vec::new();
    if n == 0 || me.held.iter().all(|&h| h) {
        return asks;
    }
    let mut outstanding: u32 = peers.iter().map(|p| p.outstanding).sum();
    peers.sort_by_key(|p| p.host);
    peers.shuffle(rng);
    // Ours first, then the others, the source last.
    let far = |rack: u32| me.rack_aware && rack != me.rack;
    peers.sort_by_key(|p| (p.host == 0, far(p.rack)));
    // Some connected peer of our rack (not the source) holds block b.
    let rack_has: Vec<bool> = (0..n)
        .map(|b| {
            peers
                .iter()
                .any(|p| p.host != 0 && p.rack == me.rack && p.have.get(b) == Some(&true))
        })
        .collect();
    let mut far_out: u32 = peers
        .iter()
        .filter(|p| far(p.rack))
        .map(|p| p.outstanding)
        .sum();
    let mut progress = true;
    while progress && outstanding < me.receive_slots {
        progress = false;
        for p in peers.iter_mut() {
            if outstanding >= me.receive_slots {
                break;
            }
            let is_far = far(p.rack);
            if (is_far && far_out >= CROSS_RACK) || p.outstanding >= PER_PEER {
                continue;
            }
            let pick = if p.host == 0 {
                let have: Vec<u8> = (0..n)
                    .map(|b| (me.held[b] || me.requested[b]) as u8)
                    .collect();
                let wanted = (0..n).any(|b| have[b] == 0 && !(is_far && rack_has[b]));
                wanted.then_some(Ask::Any { peer: 0, have })
            } else {
                let start = rng.gen_range(0..n);
                (0..n).map(|i| (start + i) % n).find_map(|b| {
                    let useful = p.have.get(b) == Some(&true) && !me.held[b] && !me.requested[b];
                    (useful && !(is_far && rack_has[b])).then(|| {
                        me.requested[b] = true;
                        Ask::Block {
                            peer: p.host,
                            block: b as u32,
                        }
                    })
                })
            };
            if let Some(a) = pick {
                asks.push(a);
                p.outstanding += 1;
                outstanding += 1;
                if is_far {
                    far_out += 1;
                }
                progress = true;
            }
        }
    }
    asks
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn slots_per_peer_caps_and_the_source_last() {
        let all = vec![true; 20];
        let held = vec![false; 20];
        let mut requested = vec![false; 20];
        let mut me = Receiver {
            rack: 0,
            rack_aware: false,
            receive_slots: 8,
            held: &held,
            requested: &mut requested,
        };
        let mut peers: Vec<Peer> = (0..3)
            .map(|h| Peer {
                host: h,
                rack: 0,
                have: &all,
                outstanding: 0,
            })
            .collect();
        let asks = schedule(&mut me, &mut peers, &mut ChaCha8Rng::seed_from_u64(1));
        // 3 peers x 2 per peer = 6 < 8 slots.
        assert_eq!(asks.len(), 6);
        let to_source = asks
            .iter()
            .filter(|a| matches!(a, Ask::Any { peer: 0, .. }))
            .count();
        assert_eq!(to_source, 2);
        // Specific blocks are distinct and marked requested.
        let blocks: std::collections::HashSet<u32> = asks
            .iter()
            .filter_map(|a| match a {
                Ask::Block { block, .. } => Some(*block),
                _ => None,
            })
            .collect();
        assert_eq!(blocks.len(), 4);
        assert_eq!(me.requested.iter().filter(|&&r| r).count(), 4);
        // Nothing more while the peers are at their caps.
        assert!(schedule(&mut me, &mut peers, &mut ChaCha8Rng::seed_from_u64(2)).is_empty());
    }

    #[test]
    fn rack_aware_receivers_take_from_outside_only_what_the_rack_lacks() {
        // Peer 1 (our rack) has blocks 0-4; peer 2 (far) has all 10.
        let near: Vec<bool> = (0..10).map(|b| b < 5).collect();
        let all = vec![true; 10];
        let held = vec![false; 10];
        let mut requested = vec![false; 10];
        let mut me = Receiver {
            rack: 0,
            rack_aware: true,
            receive_slots: 8,
            held: &held,
            requested: &mut requested,
        };
        let mut peers = vec![
            Peer {
                host: 1,
                rack: 0,
                have: &near,
                outstanding: 0,
            },
            Peer {
                host: 2,
                rack: 1,
                have: &all,
                outstanding: 0,
            },
        ];
        let asks = schedule(&mut me, &mut peers, &mut ChaCha8Rng::seed_from_u64(3));
        for a in &asks {
            match a {
                Ask::Block { peer: 2, block } => assert!(*block >= 5, "{asks:?}"),
                Ask::Block { peer: 1, block } => assert!(*block < 5),
                a => panic!("{a:?}"),
            }
        }
        assert_eq!(asks.len(), 4, "{asks:?}");
    }

    proptest! {
        /// Whatever the state: never more than the slots outstanding, never more than two at a
        /// peer, never a held block or one asked twice, and only blocks the peer has.
        #[test]
        fn asks_respect_every_cap(
            n in 1usize..30,
            seed in 0u64..1000,
            peers_n in 1u32..8,
            slots in 1u32..12,
        ) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let held: Vec<bool> = (0..n).map(|_| rng.gen_bool(0.3)).collect();
            let mut requested: Vec<bool> = (0..n).map(|b| !held[b] && rng.gen_bool(0.2)).collect();
            let before = requested.clone();
            let haves: Vec<Vec<bool>> = (0..peers_n)
                .map(|h| (0..n).map(|_| h == 0 || rng.gen_bool(0.5)).collect())
                .collect();
            let mut peers: Vec<Peer> = haves
                .iter()
                .enumerate()
                .map(|(h, have)| Peer {
                    host: h as u32,
                    rack: (h % 2) as u32,
                    have,
                    outstanding: rng.gen_range(0..3),
                })
                .collect();
            let start: u32 = peers.iter().map(|p| p.outstanding).sum();
            let caps: Vec<u32> = peers.iter().map(|p| p.outstanding.max(PER_PEER)).collect();
            let mut me = Receiver {
                rack: 0,
                rack_aware: seed % 2 == 0,
                receive_slots: slots,
                held: &held,
                requested: &mut requested,
            };
            let asks = schedule(&mut me, &mut peers, &mut rng);
            prop_assert!(asks.is_empty() || start + asks.len() as u32 <= slots);
            let mut seen = std::collections::HashSet::new();
            for a in &asks {
                if let Ask::Block { peer, block } = a {
                    let b = *block as usize;
                    prop_assert!(!held[b] && !before[b] && seen.insert(b));
                    prop_assert!(haves[*peer as usize][b]);
                }
            }
            for p in &peers {
                prop_assert!(p.outstanding <= caps[p.host as usize]);
            }
        }
    }
}

//! Loss recovery (thesis §3.5, in Homa's manner): a periodic timer per node that asks for
//! missing data with RESEND, probes peers whose messages make no progress, and declares a peer
//! dead after a bounded number of unanswered probes. Only the bookkeeping lives here; `Node`
//! decides what each probe is, because only it knows both halves.

use serde::{Deserialize, Serialize};

/// Loss-recovery settings, in the driver's time unit (the packet simulator's timestep, a real
/// transport's nanosecond). Off unless given: in a loss-free network it only adds packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovery {
    /// The timer period. A message that made no progress over one whole period is probed at
    /// the period's end, so a loss is acted on between one and two periods after it. Make it
    /// well above the longest queueing delay, or queued packets are asked for again (which is
    /// harmless but wastes bandwidth).
    pub timeout: u64,
    /// Consecutive periods with a probe to a peer and nothing heard from it after which the
    /// peer is declared dead (`Node::dead_peer`).
    pub dead_after: u32,
}

/// What the timer wants done for one peer at the end of a period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// Nothing: progress, or nothing owed either way.
    None,
    /// Our incoming message from the peer is missing granted packets (or was never heard of):
    /// send a RESEND.
    Resend,
    /// Our outgoing message to the peer is unacknowledged and did not move: retransmit its
    /// last packet if it is fully sent, else announce it again.
    Sender,
}

/// Per-peer timer state.
#[derive(Debug, Clone)]
pub struct Watch {
    pub cfg: Recovery,
    pub next: u64,
    /// Since the last tick: anything arrived from the peer.
    heard: Vec<bool>,
    /// Since the last tick: the peer's message to us moved (its first news, or its first
    /// missing packet arrived: packets beyond a gap do not count, so a gap is noticed even
    /// while the rest of the message flows).
    rx_moved: Vec<bool>,
    /// Since the last tick: our message to the peer moved (a packet sent, a grant, an ACK).
    tx_moved: Vec<bool>,
    probed: Vec<bool>,
    unanswered: Vec<u32>,
    pub dead: Option<u32>,
    /// RESENDs and sender probes sent, for statistics.
    pub probes: u64,
}

impl Watch {
    pub fn new(cfg: Recovery, n: usize, start: u64) -> Self {
        Watch {
            cfg,
            next: start.saturating_add(cfg.timeout.max(1)),
            heard: vec![false; n],
            rx_moved: vec![false; n],
            tx_moved: vec![false; n],
            probed: vec![false; n],
            unanswered: vec![0; n],
            dead: None,
            probes: 0,
        }
    }

    pub fn heard(&mut self, j: usize) {
        self.heard[j] = true;
    }

    pub fn rx_moved(&mut self, j: usize) {
        self.rx_moved[j] = true;
    }

    pub fn tx_moved(&mut self, j: usize) {
        self.tx_moved[j] = true;
    }

    /// Starts a tick at `now` if one is due: returns false otherwise.
    pub fn due(&mut self, now: u64) -> bool {
        if now < self.next {
            return false;
        }
        self.next = now.saturating_add(self.cfg.timeout.max(1));
        true
    }

    /// Ends the period for peer `j`: `rx_owed` (we wait for packets from it, or for its
    /// message's first news) and `tx_owed` (our message to it is unacknowledged) say what we
    /// still need. Returns the probe to send, and counts the unanswered ones.
    pub fn tick(&mut self, j: usize, rx_owed: bool, tx_owed: bool) -> Probe {
        if self.heard[j] {
            self.unanswered[j] = 0;
        } else if self.probed[j] {
            self.unanswered[j] += 1;
            if self.unanswered[j] >= self.cfg.dead_after && self.dead.is_none() {
                self.dead = Some(j as u32);
            }
        }
        let probe = if rx_owed && !self.rx_moved[j] {
            Probe::Resend
        } else if tx_owed && !self.tx_moved[j] {
            Probe::Sender
        } else {
            Probe::None
        };
        self.probed[j] = probe != Probe::None;
        self.probes += self.probed[j] as u64;
        self.heard[j] = false;
        self.rx_moved[j] = false;
        self.tx_moved[j] = false;
        probe
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_silent_peer_is_dead_after_the_bound_and_an_answer_resets_the_count() {
        let cfg = Recovery {
            timeout: 10,
            dead_after: 3,
        };
        let mut w = Watch::new(cfg, 2, 0);
        assert!(!w.due(9));
        assert!(w.due(10));
        assert_eq!(w.next, 20);
        for _ in 0..2 {
            assert_eq!(w.tick(1, true, false), Probe::Resend);
        }
        w.heard(1); // an answer
        assert_eq!(w.tick(1, true, false), Probe::Resend);
        for _ in 0..2 {
            assert_eq!(w.tick(1, true, false), Probe::Resend);
        }
        assert_eq!(w.dead, None);
        w.tick(1, true, false);
        assert_eq!(w.dead, Some(1));
    }

    #[test]
    fn progress_in_a_period_means_no_probe() {
        let cfg = Recovery {
            timeout: 10,
            dead_after: 3,
        };
        let mut w = Watch::new(cfg, 2, 0);
        w.rx_moved(1);
        w.tx_moved(1);
        assert_eq!(w.tick(1, true, true), Probe::None);
        w.rx_moved(1);
        assert_eq!(w.tick(1, true, true), Probe::Sender);
        assert_eq!(w.tick(1, false, false), Probe::None);
        assert_eq!(w.probes, 1);
    }
}

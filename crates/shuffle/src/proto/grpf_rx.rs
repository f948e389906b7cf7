//! The receiver of the GRPF family (Listing 3's `try_grant` with §3.4's windows): keep up to
//! `max_out_grants` grants outstanding, each to the eligible message ranked first by the
//! policy, where eligible means below its window. Messages at their window wait in a second
//! heap keyed by the backlog at which their window grows (see `window::threshold`).

use super::config::Window;
use super::config::{GrantOptions, GrantStart, RxBasis};
use super::heap::{rotated, IndexedHeap};
use super::inbox::{Arrival, Inbox};
use super::packet::{push_grant, Packet};
use super::priority::packet_priority;
use super::window::{global_threshold, global_window, threshold};

#[derive(Debug, Clone)]
pub struct GrpfReceiver {
    pub inbox: Inbox,
    opts: GrantOptions,
    max_out: u64,
    eligible: IndexedHeap,
    blocked: IndexedHeap,
    /// Outstanding grants over all messages, unscheduled credit included (§3.4).
    total_out: u64,
    /// Packets still to receive over the messages heard of (`rx_pkts_left`).
    rx_left: u64,
    /// GlobalSched: the last all-reduced maximum of the receivers' `rx_left`.
    global: u64,
}

impl GrpfReceiver {
    /// `expected`: incoming messages that carry data (used only with `GrantStart::AllSenders`).
    pub fn new(id: usize, n: usize, expected: u32, opts: GrantOptions) -> Self {
        GrpfReceiver {
            inbox: Inbox::new(id, n, expected),
            max_out: opts.max_out_grants(),
            opts,
            eligible: IndexedHeap::new(n),
            blocked: IndexedHeap::new(n),
            total_out: 0,
            rx_left: 0,
            global: 0,
        }
    }

    /// Pro rata overcommitment (Eq. 3.11): this receiver has `own` packets to receive in all,
    /// the busiest receiver `max`. Call before any packet arrives.
    pub fn set_overcommit_share(&mut self, own: u64, max: u64) {
        if self.opts.pro_rata_overcommit && max > 0 {
            self.max_out = (self.opts.max_out_grants() * own / max).max(1);
        }
    }

    /// Packets still to receive over the messages heard of (what GlobalSched all-reduces).
    pub fn remaining(&self) -> u64 {
        self.rx_left
    }

    /// GlobalSched: a new all-reduced maximum of the receivers' remaining packets. Messages
    /// parked at their window wake in `poll_grants` once the maximum falls to their key.
    pub fn set_global_max(&mut self, g: u64) {
        if self.opts.global_exponent.is_some() {
            self.global = g;
        }
    }

    /// What thresholds are compared with: the backlog (Eq. 3.8), or with GlobalSched the
    /// global maximum as this receiver sees it (never below its own backlog).
    fn level(&self) -> u64 {
        match (self.opts.global_exponent, self.opts.window) {
            (Some(_), Window::ProRata) => self.global.max(self.rx_left),
            _ => self.rx_left,
        }
    }

    pub fn outstanding(&self) -> u64 {
        self.total_out
    }

    pub fn max_outstanding(&self) -> u64 {
        self.max_out
    }

    pub fn on_packet(&mut self, p: &Packet, out: &mut Vec<Packet>) -> Arrival {
        let j = p.src as usize;
        let arrival = self.inbox.arrive(p, out);
        match arrival {
            Arrival::Nothing | Arrival::Repeat => return arrival,
            Arrival::Announced => {
                self.rx_left += p.total as u64;
                self.total_out += p.unsched.min(p.total) as u64;
            }
            Arrival::Data { first } => {
                if first {
                    self.rx_left += p.total as u64;
                    self.total_out += p.unsched.min(p.total) as u64;
                }
                self.total_out = self.total_out.saturating_sub(1);
                self.rx_left -= 1;
            }
        }
        self.place(j);
        arrival
    }

    fn threshold(&self, j: usize) -> Option<u64> {
        let m = &self.inbox.msgs[j];
        let rem = (m.total - m.received) as u64;
        if let (Some(n), Window::ProRata) = (self.opts.global_exponent, self.opts.window) {
            // Eq. 3.14: eligible iff the global maximum is at most this (see `level`). The
            // window itself is cheaper than the root that inverts it: only parking needs it.
            let w = global_window(
                self.opts.rounding,
                self.max_out,
                rem,
                self.rx_left,
                self.global,
                n,
            );
            if (m.out as u64) < w {
                return Some(u64::MAX);
            }
            return Some(global_threshold(
                self.opts.rounding,
                self.max_out,
                rem,
                self.rx_left,
                m.out as u64,
                n,
            ));
        }
        threshold(
            self.opts.window,
            self.opts.rounding,
            self.max_out,
            rem,
            m.out as u64,
        )
    }

    fn priority(&self, j: usize) -> u64 {
        let m = &self.inbox.msgs[j];
        let k = match self.opts.rx_basis {
            RxBasis::Received => m.received,
            RxBasis::Granted => m.granted,
        };
        packet_priority(self.opts.policy, m.total, k, m.seed, self.opts.randomize)
    }

    /// Files message `j` under eligible, blocked, or neither (fully granted, or a constant
    /// window that only its own next packet can reopen). The blocked heap is lazy: a message
    /// that leaves it keeps a stale entry, which `poll_grants` re-files when it surfaces (the
    /// eligible heap, the only one grants are drawn from, is always exact). This saves a heap
    /// removal on nearly every data packet.
    fn place(&mut self, j: usize) {
        let m = &self.inbox.msgs[j];
        // Complete needs no grant either: a peer may send packets nobody granted.
        if m.granted >= m.total || m.complete() {
            self.eligible.remove(j);
            return;
        }
        match self.threshold(j) {
            Some(t) if self.level() <= t => {
                self.eligible.set_tie(
                    j,
                    self.priority(j),
                    rotated(self.inbox.id, j, self.inbox.msgs.len()),
                );
            }
            Some(t) => {
                self.eligible.remove(j);
                self.blocked.set(j, t);
            }
            None => {
                self.eligible.remove(j);
            }
        }
    }

    /// Issues grants while fewer than `max_out_grants` are outstanding; with grant batching
    /// (`grant_batch` K > 1), only in units of K that fit under the limit, grants to one
    /// message decided together folded into one packet.
    pub fn poll_grants(&mut self, out: &mut Vec<Packet>) {
        if self.opts.start == GrantStart::AllSenders && self.inbox.known < self.inbox.expected {
            return;
        }
        let unit = self.opts.grant_unit(self.max_out);
        let since = out.len();
        while self.total_out < self.max_out {
            while let Some((j, t)) = self.blocked.peek() {
                if self.level() > t {
                    break;
                }
                self.blocked.remove(j);
                self.place(j); // eligible now, or blocked again on a fresh threshold below rx_left
            }
            let Some((j, _)) = self.eligible.peek() else {
                return;
            };
            // rx_left grows when a new message is heard of, which can shrink windows.
            match self.threshold(j) {
                Some(t) if self.level() <= t => {}
                _ => {
                    self.place(j);
                    continue;
                }
            }
            let m = &mut self.inbox.msgs[j];
            // K = 1: always 1, and it always fits (the loop's condition).
            let g = unit.min((m.total - m.granted) as u64);
            if self.total_out + g > self.max_out {
                return; // wait until a whole unit fits
            }
            m.granted += g as u32;
            m.out += g as u32;
            self.total_out += g;
            push_grant(out, since, unit > 1, self.inbox.id, j, m.granted);
            // With priorities from packets received, a grant changes only eligibility.
            let still = m.granted < m.total && self.threshold(j).is_some_and(|t| self.level() <= t);
            if !(still && self.opts.rx_basis == RxBasis::Received) {
                self.place(j);
            }
        }
    }
}

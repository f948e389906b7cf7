//! The reference's Varys-style allocation for FIFO, SCF, NCF, LCF and SEBF
//! (`CoflowSimulator.updateRatesDynamicAlpha`), recomputed only when coflows are admitted or
//! leave; a flow that ends early leaves its bandwidth idle until then.
//!
//! 1. In priority order, each coflow's bottleneck time `alpha` = max over ports of its bytes
//!    left there over the port's *remaining* capacity; every flow gets `bytes × 8 / alpha`
//!    (capped by the free capacity of its ports, not reduced within the coflow). A coflow that
//!    needs a full port is *skipped*.
//! 2. The skipped coflows together share what is left, per flow `min(free_out / flows_out,
//!    free_in / flows_in)`.
//! 3. Work conservation: coflows by earliest deadline (`start + deadline - now`, as whole ms;
//!    the deadlines exist even with deadlines off, see `jobs`), reducer by reducer, each flow
//!    takes `min(free_out, free_in)` on top of its rate.

use super::book::Book;
use super::clock::{self, Engine};
use super::order;
use super::units::{PORT_BPS, ZERO};
use super::{Ablation, Algo};

pub struct Madd {
    algo: Algo,
    ablation: Ablation,
    sorted: Vec<u32>,
    send_free: Vec<f64>,
    recv_free: Vec<f64>,
    pub decisions: u64,
}

impl Madd {
    pub fn new(algo: Algo, ports: usize, ablation: Ablation) -> Self {
        Madd {
            algo,
            ablation,
            sorted: Vec::new(),
            send_free: vec![PORT_BPS; ports],
            recv_free: vec![PORT_BPS; ports],
            decisions: 0,
        }
    }

    /// `calcAlphaOnline`: seconds the coflow needs at the free capacity, or `None` if one of its
    /// ports is full.
    fn alpha(&self, book: &Book, job: u32, send: &mut [f64], recv: &mut [f64]) -> Option<f64> {
        send.fill(0.0);
        recv.fill(0.0);
        for r in book.reducers_of(job) {
            let red = &book.reducers[r];
            recv[red.port as usize] = red.bytes_left;
            for &f in &red.flows {
                let fl = &book.flows[f as usize];
                if !fl.done {
                    send[fl.src as usize] += fl.rem;
                }
            }
        }
        let mut max_send = f64::from_bits(1); // Double.MIN_VALUE
        let mut max_recv = max_send;
        for i in 0..send.len() {
            if (send[i] > 0.0 && self.send_free[i] <= ZERO)
                || (recv[i] > 0.0 && self.recv_free[i] <= ZERO)
            {
                return None;
            }
            let s = send[i] * 8.0 / self.send_free[i];
            let r = recv[i] * 8.0 / self.recv_free[i];
            // `Utils.max`: NaN (0 / 0) never wins.
            if s > max_send {
                max_send = s;
            }
            if r > max_recv {
                max_recv = r;
            }
        }
        Some(max_send.max(max_recv))
    }

    fn update_rates(&mut self, book: &mut Book, now_ms: i64) {
        self.decisions += 1;
        self.send_free.fill(PORT_BPS);
        self.recv_free.fill(PORT_BPS);
        let ports = self.send_free.len();
        let (mut send, mut recv) = (vec![0.0; ports], vec![0.0; ports]);
        let (mut send_used, mut recv_used) = (vec![0.0; ports], vec![0.0; ports]);
        let mut skipped = Vec::new();
        for &j in &self.sorted {
            let open: Vec<u32> = book.open_flows(j).collect();
            for &f in &open {
                book.flows[f as usize].bps = 0.0;
            }
            let Some(alpha) = self.alpha(book, j, &mut send, &mut recv) else {
                skipped.push(j);
                continue;
            };
            send_used.fill(0.0);
            recv_used.fill(0.0);
            for r in book.reducers_of(j) {
                let dst = book.reducers[r].port as usize;
                if self.recv_free[dst] <= ZERO {
                    continue;
                }
                for i in 0..book.reducers[r].flows.len() {
                    let f = book.reducers[r].flows[i] as usize;
                    if book.flows[f].done {
                        continue;
                    }
                    let src = book.flows[f].src as usize;
                    let mut bps = book.flows[f].rem * 8.0 / alpha;
                    if bps > self.send_free[src] || bps > self.recv_free[dst] {
                        bps = self.send_free[src].min(self.recv_free[dst]);
                    }
                    send_used[src] += bps;
                    recv_used[dst] += bps;
                    book.flows[f].bps = bps;
                }
            }
            for i in 0..ports {
                self.send_free[i] -= send_used[i];
                self.recv_free[i] -= recv_used[i];
            }
        }
        if !self.ablation.no_skipped_share {
            self.share_among_skipped(book, &skipped);
        }
        self.conserve_work(book, now_ms);
    }

    /// `updateRatesFairShare` over the skipped coflows, as one.
    fn share_among_skipped(&mut self, book: &mut Book, skipped: &[u32]) {
        if skipped.is_empty() {
            return;
        }
        let ports = self.send_free.len();
        let (mut n_out, mut n_in) = (vec![0usize; ports], vec![0usize; ports]);
        let usable = |s: &Self, f: &super::book::Flow| {
            s.recv_free[f.dst as usize] > ZERO && s.send_free[f.src as usize] > ZERO
        };
        for &j in skipped {
            for f in book.open_flows(j) {
                let fl = &book.flows[f as usize];
                if usable(self, fl) {
                    n_out[fl.src as usize] += 1;
                    n_in[fl.dst as usize] += 1;
                }
            }
        }
        let (mut send_used, mut recv_used) = (vec![0.0; ports], vec![0.0; ports]);
        for &j in skipped {
            let open: Vec<u32> = book.open_flows(j).collect();
            for f in open {
                let fl = &book.flows[f as usize];
                if !usable(self, fl) {
                    continue;
                }
                let (src, dst) = (fl.src as usize, fl.dst as usize);
                let mut bps = (self.send_free[src] / n_out[src] as f64)
                    .min(self.recv_free[dst] / n_in[dst] as f64);
                if bps <= ZERO {
                    bps = 0.0;
                }
                book.flows[f as usize].bps = bps;
                send_used[src] += bps;
                recv_used[dst] += bps;
            }
        }
        for i in 0..ports {
            self.send_free[i] -= send_used[i];
            self.recv_free[i] -= recv_used[i];
        }
    }

    fn conserve_work(&mut self, book: &mut Book, now_ms: i64) {
        let mut by_deadline = self.sorted.clone();
        // Java's `(int)` truncates toward zero; the sort is stable.
        let in_order = self.ablation.backfill_in_order;
        by_deadline.sort_by_key(|&j| {
            if in_order {
                return 0;
            }
            let start = book.state[j as usize].start_ms.unwrap_or(0) as f64;
            (start + book.jobs[j as usize].deadline_ms - now_ms as f64) as i32
        });
        for j in by_deadline {
            for r in book.reducers_of(j) {
                let dst = book.reducers[r].port as usize;
                if self.recv_free[dst] <= ZERO {
                    continue;
                }
                for i in 0..book.reducers[r].flows.len() {
                    let f = book.reducers[r].flows[i] as usize;
                    if book.flows[f].done {
                        continue;
                    }
                    let src = book.flows[f].src as usize;
                    let mut free = self.send_free[src].min(self.recv_free[dst]);
                    if free <= ZERO {
                        free = 0.0;
                    }
                    book.flows[f].bps += free;
                    self.send_free[src] -= free;
                    self.recv_free[dst] -= free;
                }
            }
        }
    }
}

impl Engine for Madd {
    fn admit(&mut self, book: &mut Book, job: u32, _now_ms: i64) {
        order::insert(self.algo, book, &mut self.sorted, job);
    }

    fn after_admission(&mut self, book: &mut Book, now_ms: i64) {
        self.update_rates(book, now_ms);
    }

    fn next_event(&mut self, book: &Book) -> Option<u64> {
        clock::steps_to_departure(book)
    }

    fn advance(&mut self, book: &mut Book, t0_ms: i64, steps: u64) -> Vec<u32> {
        clock::advance_at_rates(book, t0_ms, steps)
    }

    fn after_departure(&mut self, book: &mut Book, cur_ms: i64, departed: &[u32]) {
        self.sorted.retain(|j| !departed.contains(j));
        self.update_rates(book, cur_ms);
    }
}

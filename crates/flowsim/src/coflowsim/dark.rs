//! The reference's non-clairvoyant scheduler DARK (`CoflowSimulatorDark`, its Aalo): 10 queues,
//! the first up to 10 MB sent, each next one 10x larger. Unlike the thesis' D-CLAS (weighted
//! sharing between queues) it gives *strict priority* across queues and FIFO inside one, and
//! inside a coflow shares each port equally between its flows on that port. No work
//! conservation beyond that order. Queues and rates change only when coflows are admitted or
//! leave; a coflow moves down one queue per pass over the queues, and a pass visits the queue it
//! just moved into, so it can fall several queues at once.

use super::book::Book;
use super::clock::{self, Engine};
use super::units::{MB, PORT_BPS, ZERO};

pub const QUEUES: usize = 10;
pub const FIRST_LIMIT_BYTES: f64 = 10.0 * MB;
pub const SPACING: f64 = 10.0;

pub struct Dark {
    /// Number of queues (the reference's 10, [`QUEUES`], unless an ablation changes it).
    k: usize,
    queues: Vec<Vec<u32>>,
    current: Vec<usize>,
    send_free: Vec<f64>,
    recv_free: Vec<f64>,
    pub decisions: u64,
}

impl Dark {
    /// `k` queues (at least one).
    pub fn new(jobs: usize, ports: usize, k: usize) -> Self {
        let k = k.max(1);
        Dark {
            k,
            queues: vec![Vec::new(); k],
            current: vec![0; jobs],
            send_free: vec![PORT_BPS; ports],
            recv_free: vec![PORT_BPS; ports],
            decisions: 0,
        }
    }

    /// `updateJobOrder`.
    fn update_order(&mut self, book: &Book) {
        for i in 0..self.k {
            let mut moving = Vec::new();
            for &j in &self.queues[i] {
                let size = book.state[j as usize].bytes_done;
                let mut q = 0;
                let mut k = FIRST_LIMIT_BYTES;
                while k < size {
                    q += 1;
                    k *= SPACING;
                }
                if self.current[j as usize] < q {
                    self.current[j as usize] += 1;
                    moving.push(j);
                }
            }
            if i + 1 < self.k && !moving.is_empty() {
                self.queues[i].retain(|j| !moving.contains(j));
                self.queues[i + 1].extend(moving);
            }
        }
    }

    /// `updateRates`: queue by queue, coflow by coflow, each takes an equal share per port of
    /// what the ones before it left.
    fn update_rates(&mut self, book: &mut Book) {
        self.decisions += 1;
        self.send_free.fill(PORT_BPS);
        self.recv_free.fill(PORT_BPS);
        let ports = self.send_free.len();
        let (mut n_out, mut n_in) = (vec![0usize; ports], vec![0usize; ports]);
        let (mut send_used, mut recv_used) = (vec![0.0; ports], vec![0.0; ports]);
        for q in 0..self.k {
            for qi in 0..self.queues[q].len() {
                let j = self.queues[q][qi];
                n_out.fill(0);
                n_in.fill(0);
                let open: Vec<u32> = book.open_flows(j).collect();
                for &f in &open {
                    let fl = &mut book.flows[f as usize];
                    let (src, dst) = (fl.src as usize, fl.dst as usize);
                    if self.recv_free[dst] <= ZERO || self.send_free[src] <= ZERO {
                        fl.bps = 0.0;
                        continue;
                    }
                    n_out[src] += 1;
                    n_in[dst] += 1;
                }
                send_used.fill(0.0);
                recv_used.fill(0.0);
                for &f in &open {
                    let fl = &mut book.flows[f as usize];
                    let (src, dst) = (fl.src as usize, fl.dst as usize);
                    if self.recv_free[dst] <= ZERO
                        || n_in[dst] == 0
                        || self.send_free[src] <= ZERO
                        || n_out[src] == 0
                    {
                        continue;
                    }
                    let mut bps = (self.send_free[src] / n_out[src] as f64)
                        .min(self.recv_free[dst] / n_in[dst] as f64);
                    if bps <= ZERO {
                        bps = 0.0;
                    }
                    fl.bps = bps;
                    send_used[src] += bps;
                    recv_used[dst] += bps;
                }
                for i in 0..ports {
                    self.send_free[i] -= send_used[i];
                    self.recv_free[i] -= recv_used[i];
                }
            }
        }
    }

    fn reorder_and_rate(&mut self, book: &mut Book) {
        self.update_order(book);
        self.update_rates(book);
    }
}

impl Engine for Dark {
    fn admit(&mut self, _book: &mut Book, job: u32, _now_ms: i64) {
        if !self.queues[0].contains(&job) {
            self.queues[0].push(job);
            self.current[job as usize] = 0;
        }
    }

    fn after_admission(&mut self, book: &mut Book, _now_ms: i64) {
        self.reorder_and_rate(book);
    }

    fn next_event(&mut self, book: &Book) -> Option<u64> {
        clock::steps_to_departure(book)
    }

    fn advance(&mut self, book: &mut Book, t0_ms: i64, steps: u64) -> Vec<u32> {
        clock::advance_at_rates(book, t0_ms, steps)
    }

    fn after_departure(&mut self, book: &mut Book, _cur_ms: i64, departed: &[u32]) {
        for q in &mut self.queues {
            q.retain(|j| !departed.contains(j));
        }
        self.reorder_and_rate(book);
    }
}

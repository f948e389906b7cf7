//! The reference's PFP (`FlowSimulator.proceedFlowsInAllRacksInSortedOrder`): each reducer port
//! keeps its flows in the order they were inserted at admission (before the first flow with more
//! bytes *left* than the new flow's size); every step, reducer ports in index order each pick
//! their first flow whose mapper port no lower-numbered reducer port picked, and that flow moves
//! a full 1 MB. Flows are whole MB, so the picks change only when a picked flow ends or coflows
//! arrive.

use super::book::Book;
use super::clock::Engine;
use super::units::{MB, STEP_MS};

pub struct Pfp {
    lists: Vec<Vec<u32>>,
    picked: Vec<u32>,
}

impl Pfp {
    pub fn new(ports: usize) -> Self {
        Pfp {
            lists: vec![Vec::new(); ports],
            picked: Vec::new(),
        }
    }

    fn pick(&mut self, book: &Book) {
        let mut busy = vec![false; self.lists.len()];
        self.picked.clear();
        for list in &self.lists {
            for &f in list {
                let src = book.flows[f as usize].src as usize;
                if !busy[src] {
                    busy[src] = true;
                    self.picked.push(f);
                    break;
                }
            }
        }
    }
}

/// Whole steps a picked flow with `rem` bytes needs at 1 MB per step.
fn steps_left(rem: f64) -> u64 {
    (rem / MB).ceil().max(1.0) as u64
}

impl Engine for Pfp {
    fn admit(&mut self, book: &mut Book, job: u32, _now_ms: i64) {
        for r in book.reducers_of(job) {
            let red = &book.reducers[r];
            let list = &mut self.lists[red.port as usize];
            let size = book.flows[red.flows[0] as usize].size;
            // Flows of one reducer have one size, so each lands right after the one before.
            let at = list
                .iter()
                .position(|&f| book.flows[f as usize].rem > size)
                .unwrap_or(list.len());
            list.splice(at..at, red.flows.iter().copied());
        }
    }

    fn after_admission(&mut self, book: &mut Book, _now_ms: i64) {
        self.pick(book);
    }

    fn next_event(&mut self, book: &Book) -> Option<u64> {
        self.picked
            .iter()
            .map(|&f| steps_left(book.flows[f as usize].rem))
            .min()
    }

    fn advance(&mut self, book: &mut Book, t0_ms: i64, steps: u64) -> Vec<u32> {
        let mut departed = Vec::new();
        let mut ended = Vec::new();
        for i in 0..self.picked.len() {
            let f = self.picked[i];
            let k = steps_left(book.flows[f as usize].rem);
            if k <= steps {
                let rem = book.flows[f as usize].rem;
                book.moved(f, rem);
                ended.push((k, f));
            } else {
                book.moved(f, steps as f64 * MB);
            }
        }
        if ended.is_empty() {
            return departed;
        }
        ended.sort_unstable();
        for &(k, f) in &ended {
            let dst = book.flows[f as usize].dst as usize;
            self.lists[dst].retain(|&g| g != f);
            if book.finish_flow(f, t0_ms + k as i64 * STEP_MS) {
                departed.push(book.flows[f as usize].job);
            }
        }
        self.pick(book);
        departed
    }

    fn after_departure(&mut self, _book: &mut Book, _cur_ms: i64, _departed: &[u32]) {}
}

//! The reference's event loop (`Simulator.simulate`), run event to event instead of step by step:
//!
//! - every 10.24 s epoch starts by admitting every coflow that arrives before the epoch *ends*
//!   (`arrival <= start + 10240`); its CCT counts from the epoch start;
//! - then 8 ms steps; a coflow finishes at the end of the step in which its last byte moves;
//! - with nothing active the rest of the epoch idles.
//!
//! Between two events (an admission, or whatever the engine says changes rates) every flow
//! moves the same bytes each step, so the engine jumps over the steps in between.

use super::book::Book;
use super::units::{END_MS, EPOCH_MS, STEP_MS};

/// One of the reference's simulators, as hooks of the loop.
pub trait Engine {
    /// `uponJobAdmission`.
    fn admit(&mut self, book: &mut Book, job: u32, now_ms: i64);
    /// `afterJobAdmission`, once per epoch that admitted something.
    fn after_admission(&mut self, book: &mut Book, now_ms: i64);
    /// Steps from now until the engine must act again (the step it ends in included), `None`
    /// if nothing will happen by itself.
    fn next_event(&mut self, book: &Book) -> Option<u64>;
    /// Move `steps` steps from `t0_ms`; returns the jobs that finished.
    fn advance(&mut self, book: &mut Book, t0_ms: i64, steps: u64) -> Vec<u32>;
    /// `afterJobDeparture`, with `cur_ms` the start of the step in which `departed` finished.
    fn after_departure(&mut self, book: &mut Book, cur_ms: i64, departed: &[u32]);
}

/// The epoch whose start admits a coflow arriving at `arrival_ms`.
pub fn admission_epoch_ms(arrival_ms: i64) -> i64 {
    ((arrival_ms + EPOCH_MS - 1).div_euclid(EPOCH_MS) - 1).max(0) * EPOCH_MS
}

/// Events handled (admissions and engine events), for the run's statistics.
pub struct Run {
    pub events: u64,
}

/// Run `engine` over every job of `book` (sorted by arrival).
pub fn run(book: &mut Book, engine: &mut dyn Engine) -> Run {
    let n = book.jobs.len();
    let mut next = 0usize;
    let mut t = 0i64;
    let mut events = 0u64;
    while t < END_MS && (next < n || !book.active.is_empty()) {
        if t % EPOCH_MS == 0 {
            let mut added = 0;
            while next < n && book.jobs[next].arrival_ms <= t + EPOCH_MS {
                book.admit(next as u32, t);
                engine.admit(book, next as u32, t);
                next += 1;
                added += 1;
            }
            if added > 0 {
                engine.after_admission(book, t);
                events += 1;
            }
        }
        let admission = (next < n).then(|| admission_epoch_ms(book.jobs[next].arrival_ms));
        if book.active.is_empty() {
            match admission {
                Some(at) => {
                    t = at;
                    continue;
                }
                None => break,
            }
        }
        let until_admission = admission.map(|at| ((at - t) / STEP_MS) as u64);
        let until_end = ((END_MS - t) / STEP_MS).max(1) as u64;
        let steps = match (engine.next_event(book), until_admission) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or(until_end),
        }
        .min(until_end);
        let departed = engine.advance(book, t, steps);
        t += steps as i64 * STEP_MS;
        if !departed.is_empty() {
            engine.after_departure(book, t - STEP_MS, &departed);
            events += 1;
        }
    }
    Run { events }
}

/// Advance every open flow of the active jobs at its fixed rate (`bps`) for `steps` steps: the
/// step loop of the rate-based simulators (`proceedFlowsInAllRacks`).
pub fn advance_at_rates(book: &mut Book, t0_ms: i64, steps: u64) -> Vec<u32> {
    use super::units::{bytes_per_step, steps_to_finish};
    let mut departed = Vec::new();
    let mut finishing: Vec<(u64, u32)> = Vec::new();
    let active = book.active.clone();
    for &j in &active {
        let open: Vec<u32> = book.open_flows(j).collect();
        for f in open {
            let fl = &book.flows[f as usize];
            let per_step = bytes_per_step(fl.bps);
            match steps_to_finish(fl.rem, per_step) {
                Some(k) if k <= steps => {
                    let rem = fl.rem;
                    book.moved(f, rem);
                    finishing.push((k, f));
                }
                _ if per_step > 0.0 => book.moved(f, per_step * steps as f64),
                _ => {}
            }
        }
    }
    finishing.sort_unstable();
    for (k, f) in finishing {
        if book.finish_flow(f, Book::step_end(t0_ms, k)) {
            departed.push(book.flows[f as usize].job);
        }
    }
    departed
}

/// Steps until the first active job's last flow ends at the current rates.
pub fn steps_to_departure(book: &Book) -> Option<u64> {
    use super::units::{bytes_per_step, steps_to_finish};
    book.active
        .iter()
        .filter_map(|&j| {
            book.open_flows(j)
                .map(|f| {
                    let fl = &book.flows[f as usize];
                    steps_to_finish(fl.rem, bytes_per_step(fl.bps))
                })
                .try_fold(0u64, |acc, k| k.map(|k| acc.max(k)))
        })
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arrival_waits_for_the_epoch_that_ends_after_it() {
        assert_eq!(admission_epoch_ms(0), 0);
        assert_eq!(admission_epoch_ms(5000), 0);
        assert_eq!(admission_epoch_ms(10240), 0);
        assert_eq!(admission_epoch_ms(10241), 10240);
        assert_eq!(admission_epoch_ms(20480), 10240);
        assert_eq!(admission_epoch_ms(20481), 20480);
    }
}

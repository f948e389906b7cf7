//! Per-flow token bucket: a flow may send `n` bytes once its bucket holds them. The rate comes
//! from a watch channel the daemon updates whenever the coordinator (or the local fallback)
//! decides; a rate change takes effect at once, even for a sender that is waiting.

use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// Credit a bucket keeps beyond the next send, in seconds of its rate. It absorbs timer
/// overshoot (a sleep that wakes a millisecond late is paid back by the next send, so a slow
/// flow does not lose a millisecond per block), while idle time is not banked beyond it.
const BURST_S: f64 = 0.005;

pub struct Pacer {
    rate: watch::Receiver<f64>,
    tokens: f64,
    last: Instant,
}

impl Pacer {
    pub fn new(rate: watch::Receiver<f64>) -> Self {
        Pacer {
            rate,
            tokens: 0.0,
            last: Instant::now(),
        }
    }

    /// Wait until `n` bytes may be sent at the current rate, then spend them. Returns `false`
    /// if the rate's sender is gone (the flow was cancelled).
    pub async fn take(&mut self, n: usize) -> bool {
        let n = n as f64;
        loop {
            let rate = *self.rate.borrow_and_update();
            let now = Instant::now();
            if rate.is_infinite() {
                self.last = now;
                return true;
            }
            let dt = now.duration_since(self.last).as_secs_f64();
            self.last = now;
            let cap = n + rate * BURST_S;
            self.tokens = (self.tokens + rate * dt).min(cap);
            if self.tokens >= n {
                self.tokens -= n;
                return true;
            }
            if rate > 0.0 {
                let wait = Duration::from_secs_f64((n - self.tokens) / rate);
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    r = self.rate.changed() => if r.is_err() { return false },
                }
            } else if self.rate.changed().await.is_err() {
                return false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn paced_bytes_take_bytes_over_rate() {
        let (tx, rx) = watch::channel(1000.0);
        let mut p = Pacer::new(rx);
        let start = Instant::now();
        for _ in 0..10 {
            assert!(p.take(100).await);
        }
        let took = start.elapsed().as_secs_f64();
        // 1000 bytes at 1000 B/s: one second, minus at most the first burst.
        assert!((0.85..=1.05).contains(&took), "took {took}");
        // Paused flow resumes when the rate is raised.
        tx.send(0.0).unwrap();
        let tx2 = tx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            tx2.send(1e6).unwrap();
        });
        let t = Instant::now();
        assert!(p.take(100).await);
        assert!(t.elapsed().as_secs_f64() >= 5.0);
        drop(tx);
    }
}

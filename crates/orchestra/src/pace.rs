//! A host's uplink in user space: what a node sends, on all its connections together, at most
//! at its rate (on loopback, where nothing else limits it; in the emulated cluster tbf does).

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

#[derive(Debug)]
pub struct Pacer {
    byte_s: f64,
    next: Mutex<Option<Instant>>,
}

/// Bytes sent between two waits: small enough that concurrent uploads interleave.
pub const PACE_PIECE: usize = 64 * 1024;

impl Pacer {
    pub fn new(rate_bps: f64) -> Pacer {
        Pacer {
            byte_s: 8.0 / rate_bps,
            next: Mutex::new(None),
        }
    }

    /// Wait until `bytes` more may leave: reservations are back to back at the rate, never
    /// earlier than now (an idle link saves up no credit beyond one piece).
    pub async fn wait(&self, bytes: usize) {
        let at = {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            let start = next.map_or(now, |n| n.max(now));
            *next = Some(start + Duration::from_secs_f64(bytes as f64 * self.byte_s));
            start
        };
        tokio::time::sleep_until(at).await;
    }

    /// As [`Pacer::wait`], but until the reserved time of these `bytes` has passed, so what
    /// is sent after it takes its time at the rate even when it is the first: a broadcast of
    /// one block otherwise left at once, unpaced (pass 33, B16).
    pub async fn wait_through(&self, bytes: usize) {
        let end = {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            let start = next.map_or(now, |n| n.max(now));
            let end = start + Duration::from_secs_f64(bytes as f64 * self.byte_s);
            *next = Some(end);
            end
        };
        tokio::time::sleep_until(end).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn reservations_follow_the_rate() {
        let p = Pacer::new(8e6); // 1 MB/s
        let t0 = Instant::now();
        for _ in 0..4 {
            p.wait(250_000).await;
        }
        // The fourth waits for the three before it: 0.75 s.
        let e = t0.elapsed().as_secs_f64();
        assert!((0.74..0.76).contains(&e), "{e}");
    }

    #[tokio::test(start_paused = true)]
    async fn wait_through_paces_the_first_piece_too() {
        let p = Pacer::new(8e6); // 1 MB/s
        let t0 = Instant::now();
        p.wait_through(250_000).await;
        let e = t0.elapsed().as_secs_f64();
        assert!((0.24..0.26).contains(&e), "{e}");
        for _ in 0..3 {
            p.wait_through(250_000).await;
        }
        let e = t0.elapsed().as_secs_f64();
        assert!((0.99..1.01).contains(&e), "{e}");
    }
}

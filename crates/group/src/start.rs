//! A synchronised start for a timed burst (MilliSort and MilliQuery, spec millisort.md §8.3):
//! rank 0 picks a wall-clock instant `margin` in the future and broadcasts it; every member
//! waits until its clock reads that instant, so the burst starts together and its time can be
//! measured from one start to the last member's end.
//!
//! Clock assumption: the members' wall clocks (`SystemTime`) agree, as they do for processes on
//! one host, or to within the synchronisation of the hosts' clocks (PTP, NTP) across hosts; any
//! offset shows up as start skew. A member that hears of the start only after it has passed
//! starts at once and reports how late it was (`Start::late`): raise the margin then.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::schedule::gather::BCAST_K;
use crate::{Group, GroupError};

/// Nanoseconds since the Unix epoch on this host's wall clock.
pub fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// The agreed start, as seen by one member.
#[derive(Clone, Copy, Debug)]
pub struct Start {
    /// The agreed instant, wall clock (ns since the Unix epoch): the same at every member.
    pub unix_ns: u64,
    /// This member's monotonic clock when it started.
    pub instant: Instant,
    /// How long after the agreed instant this member started (zero unless the broadcast
    /// arrived late, or the wake-up was).
    pub late: Duration,
}

impl Start {
    /// Wall-clock nanoseconds from the agreed start to now (to compare across members).
    pub fn elapsed_ns(&self) -> u64 {
        unix_ns().saturating_sub(self.unix_ns)
    }
}

/// Sleep until ~1 ms before the deadline, then yield-spin (many members may share few cores).
fn wait_until(at: u64) {
    loop {
        let now = unix_ns();
        if now >= at {
            return;
        }
        let left = at - now;
        if left > 2_000_000 {
            std::thread::sleep(Duration::from_nanos(left - 1_000_000));
        } else {
            std::thread::yield_now();
        }
    }
}

impl Group {
    /// Agree on a start `margin` after rank 0 calls this (one broadcast) and wait for it. Every
    /// member must call it, as any collective.
    pub fn start_at(&mut self, margin: Duration) -> Result<Start, GroupError> {
        let pick = if self.rank() == 0 {
            (unix_ns() + margin.as_nanos() as u64)
                .to_le_bytes()
                .to_vec()
        } else {
            Vec::new()
        };
        let got = self.bcast(0, pick, BCAST_K)?;
        let at = u64::from_le_bytes(got.try_into().map_err(|_| GroupError::Malformed {
            from: 0,
            what: "start time",
        })?);
        wait_until(at);
        let instant = Instant::now();
        Ok(Start {
            unix_ns: at,
            instant,
            late: Duration::from_nanos(unix_ns().saturating_sub(at)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::run;

    #[test]
    fn every_member_agrees_on_the_start_and_none_starts_before_it() {
        let margin = Duration::from_millis(30);
        let t0 = unix_ns();
        let (res, _) = run(5, |mut g| {
            let s = g.start_at(margin).unwrap();
            (s.unix_ns, unix_ns())
        });
        let at = res[0].0;
        assert!(at >= t0 + margin.as_nanos() as u64);
        for (a, woke) in res {
            assert_eq!(a, at);
            assert!(woke >= at);
        }
    }
}

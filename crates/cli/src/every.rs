//! The pace of progress lines on stderr: long runs say how far they have come at most once
//! every few seconds, so short runs say nothing.

use std::time::{Duration, Instant};

/// One line every [`Every::EVERY`], the first after that long.
pub struct Every {
    start: Instant,
    next: Duration,
}

impl Every {
    pub const EVERY: Duration = Duration::from_secs(3);

    pub fn new() -> Every {
        Every {
            start: Instant::now(),
            next: Self::EVERY,
        }
    }

    /// The time since the start when a line is due now (the next one is due a period later).
    pub fn due(&mut self) -> Option<Duration> {
        let t = self.start.elapsed();
        if t < self.next {
            return None;
        }
        self.next = t + Self::EVERY;
        Some(t)
    }
}

//! The driver's time unit. Nodes never read a clock: every call carries `now` as a plain
//! `u64` in the driver's unit (the packet simulator's timestep, a transport's nanosecond), and
//! the few rules that are paced in packet times (MADD) convert through this.

/// How the driver's time maps to packet times (one full packet at line rate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    /// The driver's time when the operation starts (MADD's time 0).
    pub start: u64,
    /// Driver time units per packet time (at least 1).
    pub per_packet: u64,
}

impl Default for Clock {
    /// The packet simulator's: time 0, one timestep per packet.
    fn default() -> Self {
        Clock {
            start: 0,
            per_packet: 1,
        }
    }
}

impl Clock {
    /// Whole packet times elapsed at driver time `now`.
    pub fn packets(&self, now: u64) -> u64 {
        now.saturating_sub(self.start) / self.per_packet.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanoseconds_become_packet_times() {
        // 1500 B at 10 Gbit/s: 1200 ns per packet, starting at 5 us.
        let c = Clock {
            start: 5_000,
            per_packet: 1_200,
        };
        assert_eq!(c.packets(0), 0);
        assert_eq!(c.packets(6_199), 0);
        assert_eq!(c.packets(6_200), 1);
        assert_eq!(Clock::default().packets(42), 42);
    }
}

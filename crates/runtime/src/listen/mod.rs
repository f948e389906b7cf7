//! Listeners that cannot be knocked over: an accept loop that backs off on errors such as
//! EMFILE instead of ending the server, a connection limit per server and per peer address,
//! handshake and idle timeouts on every accepted connection, and counters of each for
//! `/metrics`. Shared by the coordinator's gRPC and metrics listeners and the daemon's data
//! port.

mod gate;
mod guarded;
mod stats;

pub use gate::{Gate, Permit};
pub use guarded::Guarded;
pub use stats::{render, ListenStats};

use std::time::Duration;

/// How many connections a listener takes and how long it waits for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Open connections at once; more are closed at accept and counted.
    pub max_connections: usize,
    /// Open connections at once from one peer IP address.
    pub max_per_peer: usize,
    /// A new connection must complete its handshake within this time.
    pub handshake: Duration,
    /// A connection whose read or write makes no progress for this long is closed.
    pub idle: Duration,
}

impl Default for Limits {
    /// Three quarters of the process's descriptor limit (the rest for files and outgoing
    /// connections), half of that per peer; 10 s to shake hands, 60 s idle.
    fn default() -> Self {
        let max = (nofile_soft_limit().saturating_mul(3) / 4).clamp(64, 1 << 20) as usize;
        Limits {
            max_connections: max,
            max_per_peer: (max / 2).max(1),
            handshake: Duration::from_secs(10),
            idle: Duration::from_secs(60),
        }
    }
}

impl Limits {
    pub fn check(&self) -> Result<(), String> {
        if self.max_connections == 0 || self.max_per_peer == 0 {
            return Err("connection limits must be at least 1".into());
        }
        if self.handshake.is_zero() || self.idle.is_zero() {
            return Err("handshake and idle timeouts must be above zero".into());
        }
        Ok(())
    }
}

/// The soft RLIMIT_NOFILE of this process (1024 if it cannot be read).
pub fn nofile_soft_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return 1024;
    }
    if r.rlim_cur == libc::RLIM_INFINITY {
        return 1 << 20;
    }
    r.rlim_cur
}

/// Raise the soft descriptor limit to the hard one (what servers usually do at start), and
/// return the new soft limit.
pub fn raise_nofile_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write a struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            let want = libc::rlimit {
                rlim_cur: r.rlim_max,
                rlim_max: r.rlim_max,
            };
            libc::setrlimit(libc::RLIMIT_NOFILE, &want);
        }
    }
    nofile_soft_limit()
}

//! The endpoint's counters: written by its I/O thread, read by anyone.

use std::sync::atomic::{AtomicU64, Ordering};

/// A snapshot of an endpoint's counters since it was bound.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndpointStats {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub packets_received: u64,
    pub bytes_received: u64,
    /// DATA packets sent again (answers to RESENDs and probes).
    pub retransmissions: u64,
    /// Datagrams that were not well-formed for this endpoint (garbage, bad version, impossible
    /// fields), dropped.
    pub malformed: u64,
    /// Intact datagrams of another session, dropped.
    pub foreign: u64,
    /// Datagrams kept for an operation not yet started here.
    pub staged: u64,
    /// Staged datagrams that no operation claimed in time (or that did not fit), dropped.
    pub expired: u64,
    /// ACKs sent again for operations already completed here (their sender missed the ACK).
    pub reacks: u64,
    /// Datagrams dropped, duplicated and held back by loss injection.
    pub injected_drops: u64,
    pub injected_duplicates: u64,
    pub injected_reorders: u64,
    /// "Alive, not started" answers sent to peers probing an operation not started here, and
    /// received from busy peers.
    pub alive_sent: u64,
    pub alive_received: u64,
    /// Datagrams of this session whose keyed tag was wrong (forged, or sent with another
    /// job's secret), dropped before they changed anything.
    pub unauthenticated: u64,
}

macro_rules! counters {
    ($($f:ident),*) => {
        #[derive(Debug, Default)]
        pub(crate) struct Counters { $(pub $f: AtomicU64,)* }
        impl Counters {
            pub fn snapshot(&self) -> EndpointStats {
                EndpointStats { $($f: self.$f.load(Ordering::Relaxed),)* }
            }
        }
    };
}

counters!(
    packets_sent,
    bytes_sent,
    packets_received,
    bytes_received,
    retransmissions,
    malformed,
    foreign,
    staged,
    expired,
    reacks,
    injected_drops,
    injected_duplicates,
    injected_reorders,
    alive_sent,
    alive_received,
    unauthenticated
);

impl Counters {
    pub fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    pub fn set(c: &AtomicU64, n: u64) {
        c.store(n, Ordering::Relaxed);
    }
}

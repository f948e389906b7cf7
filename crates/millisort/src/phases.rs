//! The ten timed phases (spec §2.10, issue 20) and what each costs one rank: time, messages
//! and bytes sent.

use std::time::Instant;

use coflowkit_group::Counted;

pub const PHASES: [&str; 10] = [
    "local_sort",
    "pivot_gather",
    "super_pivots",
    "pivot_bucket_sort",
    "pivot_shuffle",
    "splitter_selection",
    "splitter_broadcast",
    "record_shuffle",
    "merge",
    "value_rearrangement",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    LocalSort,
    PivotGather,
    SuperPivots,
    PivotBucketSort,
    PivotShuffle,
    SplitterSelection,
    SplitterBroadcast,
    RecordShuffle,
    Merge,
    ValueRearrangement,
}

/// One rank's cost of each phase (index = `Phase as usize`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PhaseStats {
    pub ns: [u64; 10],
    pub messages: [u64; 10],
    pub bytes: [u64; 10],
}

impl PhaseStats {
    pub fn encode(&self) -> Vec<u8> {
        self.ns
            .iter()
            .chain(&self.messages)
            .chain(&self.bytes)
            .flat_map(|v| v.to_le_bytes())
            .collect()
    }

    pub const ENCODED_LEN: usize = 240;

    pub fn decode(b: &[u8]) -> Option<PhaseStats> {
        if b.len() != Self::ENCODED_LEN {
            return None;
        }
        let v: Vec<u64> = b
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        let mut s = PhaseStats::default();
        s.ns.copy_from_slice(&v[0..10]);
        s.messages.copy_from_slice(&v[10..20]);
        s.bytes.copy_from_slice(&v[20..30]);
        Some(s)
    }

    pub fn total_ns(&self) -> u64 {
        self.ns.iter().sum()
    }
}

/// Charges the time and traffic since the previous mark to a phase.
pub struct Recorder<'a> {
    counted: &'a Counted,
    last: Instant,
    sent: (u64, u64),
    pub stats: PhaseStats,
}

impl<'a> Recorder<'a> {
    pub fn start(counted: &'a Counted) -> Recorder<'a> {
        Recorder {
            counted,
            last: Instant::now(),
            sent: counted.sent(),
            stats: PhaseStats::default(),
        }
    }

    pub fn mark(&mut self, phase: Phase) {
        let now = Instant::now();
        let sent = self.counted.sent();
        let i = phase as usize;
        self.stats.ns[i] += (now - self.last).as_nanos() as u64;
        self.stats.messages[i] += sent.0 - self.sent.0;
        self.stats.bytes[i] += sent.1 - self.sent.1;
        self.last = now;
        self.sent = sent;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_round_trip() {
        let mut s = PhaseStats::default();
        s.ns[3] = 7;
        s.messages[9] = 1;
        s.bytes[0] = u64::MAX;
        assert_eq!(PhaseStats::decode(&s.encode()).unwrap(), s);
        assert!(PhaseStats::decode(&[0; 8]).is_none());
        assert_eq!(
            PHASES[Phase::ValueRearrangement as usize],
            "value_rearrangement"
        );
    }
}

//! A broadcast receiver's share of its NIC under the coordinator's inter-transfer controller:
//! Cornet receivers pull (they ask for each block), so pacing the asks paces every peer's
//! uploads to this receiver for this broadcast. A token bucket in bytes, sans-IO (times in
//! seconds): credit accrues at share x NIC rate, each asked block spends its size, and at most
//! `cap` bytes are saved up (so a held broadcast resumes without a burst beyond its slots).

#[derive(Debug, Clone)]
pub struct Allowance {
    /// Bytes per second (None: not shared, no limit).
    rate: Option<f64>,
    credit: f64,
    at_s: f64,
    cap: f64,
}

impl Allowance {
    pub fn new(cap_bytes: f64, now_s: f64) -> Allowance {
        Allowance {
            rate: None,
            credit: 0.0,
            at_s: now_s,
            cap: cap_bytes,
        }
    }

    fn refill(&mut self, now_s: f64) {
        if let Some(r) = self.rate {
            self.credit = (self.credit + r * (now_s - self.at_s).max(0.0)).min(self.cap);
        }
        self.at_s = now_s;
    }

    /// The controller's word: `share` of `nic_bytes_per_s` (None: not shared).
    pub fn set(&mut self, share: Option<f64>, nic_bytes_per_s: f64, now_s: f64) {
        self.refill(now_s);
        self.rate = share.map(|s| s.clamp(0.0, 1.0) * nic_bytes_per_s);
    }

    /// How many blocks of `block` bytes may be asked for now.
    pub fn blocks(&mut self, block: f64, now_s: f64) -> usize {
        if self.rate.is_none() {
            return usize::MAX;
        }
        self.refill(now_s);
        (self.credit / block.max(1.0)).floor() as usize
    }

    pub fn spend(&mut self, bytes: f64) {
        if self.rate.is_some() {
            self.credit -= bytes;
        }
    }

    /// When the next block of `block` bytes may be asked for, if it is waiting on credit
    /// (None: unlimited, or held until the share changes).
    pub fn next_s(&self, block: f64) -> Option<f64> {
        match self.rate {
            Some(r) if r > 0.0 && self.credit < block => {
                Some(self.at_s + (block - self.credit) / r)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unshared_is_unlimited_and_held_asks_nothing() {
        let mut a = Allowance::new(8.0, 0.0);
        assert_eq!(a.blocks(1.0, 0.0), usize::MAX);
        assert_eq!(a.next_s(1.0), None);
        a.set(Some(0.0), 100.0, 0.0);
        assert_eq!(a.blocks(1.0, 50.0), 0, "held");
        assert_eq!(a.next_s(1.0), None, "held until the share changes");
    }

    #[test]
    fn a_share_paces_the_asks_and_saves_up_at_most_the_cap() {
        let mut a = Allowance::new(4.0, 0.0);
        // Half of a NIC of 2 bytes/s: one block of 1 byte per second.
        a.set(Some(0.5), 2.0, 0.0);
        assert_eq!(a.blocks(1.0, 0.0), 0);
        assert_eq!(a.next_s(1.0), Some(1.0));
        assert_eq!(a.blocks(1.0, 2.5), 2);
        a.spend(2.0);
        assert_eq!(a.blocks(1.0, 2.5), 0);
        assert_eq!(a.next_s(1.0), Some(3.0));
        // Idle for long: no more than the cap at once.
        assert_eq!(a.blocks(1.0, 100.0), 4);
        // Held: the credit stays, none accrues.
        a.set(Some(0.0), 2.0, 100.0);
        a.spend(4.0);
        assert_eq!(a.blocks(1.0, 200.0), 0);
        // A share above 1 is the whole NIC.
        a.set(Some(3.0), 2.0, 200.0);
        assert_eq!(a.blocks(1.0, 201.0), 2);
    }
}

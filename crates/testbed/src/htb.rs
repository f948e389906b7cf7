//! HUG's per-tenant caps as kernel classes on a host's NIC (issue 22, "tc/htb classes in the
//! emulated cluster, as the thesis did"). The uplink's tbf is replaced by an htb tree:
//!
//! ```text
//! 1:    htb, unclassified packets to 1:fffe
//! 1:1   the NIC: rate = ceil = its rate on the wire
//! 1:fffe  everything not in a tenant's class (TCP ACKs of the host's gets, other coflows):
//!         prio 0 (spare goes to it first), rate DEFAULT_SHARE of the NIC
//! 1:m   one per capped coflow: rate = its reservation, ceil = its cap, prio 1
//! ```
//!
//! A socket is put in its coflow's class by `SO_PRIORITY` = `1:m` (htb reads `skb->priority`
//! before any filter), so no filter per flow is needed. Reservations are scaled by
//! `1 - DEFAULT_SHARE` so that, with the default class's rate, they never oversubscribe the
//! NIC (a full bottleneck's reservations sum to its rate, and ACKs starved at the default
//! class's minimum would stall every get into the host).
//!
//! Commands run in the calling thread's network namespace (a daemon started in a host).

use std::collections::HashMap;

use crate::cluster::WIRE_PER_PAYLOAD;
use crate::error::Result;

/// The default class's guaranteed part of the NIC.
pub const DEFAULT_SHARE: f64 = 0.04;
/// The default class's minor number.
pub const DEFAULT_MINOR: u16 = 0xfffe;
/// Smallest rate tc's htb takes sensibly, bits/s.
const MIN_BITS: u64 = 8_000;

/// The class of coflow `id`: minors 2..=0xfff1 (1 is the NIC, 0xfffe the default). Two
/// coflows whose ids differ by a multiple of 0xfff0 share a class (documented in docs/hug.md).
pub fn minor_of(coflow: u64) -> u16 {
    (coflow % 0xfff0) as u16 + 2
}

/// The `SO_PRIORITY` that puts a socket in class `1:minor`.
pub fn priority_of(minor: u16) -> u32 {
    (1 << 16) | minor as u32
}

/// One capped coflow on this NIC, bytes/s of payload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Class {
    pub minor: u16,
    pub guarantee: f64,
    pub cap: f64,
    pub weight: f64,
}

/// The htb tree of one device, kept in step with the caps pushed to it.
#[derive(Debug)]
pub struct Htb {
    dev: String,
    nic_bytes_per_s: f64,
    /// The classes made, with their tc arguments (a class unchanged is not rewritten).
    made: HashMap<u16, Vec<String>>,
}

fn wire_bits(bytes_per_s: f64) -> u64 {
    ((bytes_per_s * WIRE_PER_PAYLOAD * 8.0).round() as u64).max(MIN_BITS)
}

impl Htb {
    pub fn new(dev: &str, nic_bytes_per_s: f64) -> Htb {
        Htb {
            dev: dev.to_string(),
            nic_bytes_per_s,
            made: HashMap::new(),
        }
    }

    /// The commands that make the tree's fixed part (`tc` arguments).
    pub fn setup_commands(&self) -> Vec<Vec<String>> {
        let nic = wire_bits(self.nic_bytes_per_s);
        let d = &self.dev;
        let default = wire_bits(self.nic_bytes_per_s * DEFAULT_SHARE);
        [
            format!("qdisc replace dev {d} root handle 1: htb default {DEFAULT_MINOR:x}"),
            format!("class replace dev {d} parent 1: classid 1:1 htb rate {nic}bit ceil {nic}bit"),
            format!(
                "class replace dev {d} parent 1:1 classid 1:{DEFAULT_MINOR:x} htb rate {default}bit \
                 ceil {nic}bit prio 0"
            ),
        ]
        .iter()
        .map(|c| c.split_whitespace().map(String::from).collect())
        .collect()
    }

    /// The commands that bring the classes to `wanted`: changed or new classes replaced, gone
    /// ones deleted. Spare is shared among borrowing classes by their quantum, here in
    /// proportion to the coflow's weight.
    pub fn update_commands(&mut self, wanted: &[Class]) -> Vec<Vec<String>> {
        let nic = self.nic_bytes_per_s;
        let scale = 1.0 - DEFAULT_SHARE;
        let mut out = Vec::new();
        let mut keep = HashMap::new();
        for c in wanted {
            let rate = wire_bits((c.guarantee.max(0.0) * scale).min(nic));
            let ceil = wire_bits(c.cap.max(c.guarantee).min(nic)).max(rate);
            let weight = if c.weight.is_finite() && c.weight > 0.0 {
                c.weight.min(100.0)
            } else {
                1.0
            };
            let quantum = ((1514.0 * 4.0 * weight).round() as u64).max(1514);
            let args: Vec<String> = format!(
                "class replace dev {} parent 1:1 classid 1:{:x} htb rate {rate}bit ceil {ceil}bit \
                 prio 1 quantum {quantum}",
                self.dev, c.minor
            )
            .split_whitespace()
            .map(String::from)
            .collect();
            if self.made.get(&c.minor) != Some(&args) {
                out.push(args.clone());
            }
            keep.insert(c.minor, args);
        }
        for minor in self.made.keys() {
            if !keep.contains_key(minor) {
                out.push(
                    format!("class del dev {} classid 1:{minor:x}", self.dev)
                        .split_whitespace()
                        .map(String::from)
                        .collect(),
                );
            }
        }
        self.made = keep;
        out
    }

    /// Make the tree.
    pub fn setup(&mut self) -> Result<()> {
        self.made.clear();
        for c in self.setup_commands() {
            run_tc(&c)?;
        }
        Ok(())
    }

    /// Bring the classes to `wanted`. A class deleted while a socket still sends with its
    /// priority sends through the default class.
    pub fn update(&mut self, wanted: &[Class]) -> Result<()> {
        for c in self.update_commands(wanted) {
            run_tc(&c)?;
        }
        Ok(())
    }
}

/// `tc` with this class tree's arguments (the cluster's command runner: a failure names the
/// command line and carries its stderr).
fn run_tc(args: &[String]) -> Result<()> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    crate::cluster::exec("tc", &args).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_the_caps_and_only_changes_are_written() {
        let mut h = Htb::new("eth0", 1_000_000.0);
        let setup = h.setup_commands();
        assert_eq!(setup.len(), 3);
        assert_eq!(
            setup[0].join(" "),
            "qdisc replace dev eth0 root handle 1: htb default fffe"
        );
        let nic = (1e6 * WIRE_PER_PAYLOAD * 8.0).round() as u64;
        assert!(setup[1]
            .join(" ")
            .ends_with(&format!("rate {nic}bit ceil {nic}bit")));
        let a = Class {
            minor: minor_of(7),
            guarantee: 400_000.0,
            cap: 400_000.0,
            weight: 1.0,
        };
        let b = Class {
            minor: minor_of(8),
            guarantee: 66_667.0,
            cap: 400_000.0,
            weight: 2.0,
        };
        let first = h.update_commands(&[a, b]);
        assert_eq!(first.len(), 2);
        let rate = (400_000.0 * (1.0 - DEFAULT_SHARE) * WIRE_PER_PAYLOAD * 8.0).round() as u64;
        let ceil = (400_000.0 * WIRE_PER_PAYLOAD * 8.0).round() as u64;
        assert_eq!(
            first[0].join(" "),
            format!(
                "class replace dev eth0 parent 1:1 classid 1:9 htb rate {rate}bit ceil {ceil}bit \
                 prio 1 quantum 6056"
            )
        );
        assert!(first[1].join(" ").ends_with("quantum 12112"), "{first:?}");
        // The same caps again: nothing to write. A gone: deleted; B's cap changed: replaced.
        assert!(h.update_commands(&[a, b]).is_empty());
        let b2 = Class {
            cap: 500_000.0,
            ..b
        };
        let next = h.update_commands(&[b2]);
        assert_eq!(next.len(), 2, "{next:?}");
        assert!(next[0].join(" ").contains("classid 1:a "));
        assert_eq!(next[1].join(" "), "class del dev eth0 classid 1:9");
        // A cap above the NIC is the NIC; a cap below the guarantee is the guarantee.
        let c = Class {
            minor: 3,
            guarantee: 2e6,
            cap: 1.0,
            weight: 0.0,
        };
        let cmd = h.update_commands(&[c]).remove(0).join(" ");
        assert!(cmd.contains(&format!("ceil {nic}bit")), "{cmd}");
    }

    #[test]
    fn coflow_classes_avoid_the_nic_and_default_minors() {
        for id in [0u64, 1, 0xffef, 0xfff0, 0xfff1, u64::MAX] {
            let m = minor_of(id);
            assert!((2..=0xfff1).contains(&m), "{id} -> {m}");
        }
        assert_eq!(priority_of(9), 0x10009);
    }
}

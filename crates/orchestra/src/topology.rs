//! Racks: which host is in which rack (the configured topology of CornetTopology), and the
//! emulated cluster the broadcast runs on.

use coflowkit_testbed::NetnsCluster;

use crate::OrchestraError;

/// Receivers split evenly over `count` racks in host order; the source sits in the middle
/// rack, as the controller did in rack B of the thesis' three racks in a line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Racks {
    pub count: u32,
    /// The rate of each rack's link to the core, bits per second, each way (None: as fast as
    /// the hosts' links together, i.e. not oversubscribed).
    pub core_rate_bps: Option<f64>,
}

impl Default for Racks {
    fn default() -> Self {
        Racks {
            count: 1,
            core_rate_bps: None,
        }
    }
}

impl Racks {
    /// Rack of each of `hosts` hosts (host 0 the source).
    pub fn of_hosts(&self, hosts: u32) -> Vec<u32> {
        let k = self.count.max(1);
        let receivers = hosts.saturating_sub(1).max(1);
        let mut v = vec![k / 2];
        v.extend(
            (0..hosts.saturating_sub(1)).map(|i| (i as u64 * k as u64 / receivers as u64) as u32),
        );
        v
    }
}

/// The emulated cluster: one namespace per host at `rate_bps`; with racks, the testbed's
/// rack bridges behind core links shaped to the core rate each way
/// ([`coflowkit_testbed::Racks`]), so cross-rack traffic shares that link.
pub struct Cluster {
    net: NetnsCluster,
}

impl Cluster {
    pub fn net(&self) -> &NetnsCluster {
        &self.net
    }

    pub fn teardown(self) -> Result<(), OrchestraError> {
        self.net
            .teardown()
            .map_err(|e| OrchestraError::Netns(format!("tearing the cluster down: {e}")))
    }
}

pub fn build_cluster(hosts: u32, rate_bps: f64, racks: &Racks) -> Result<Cluster, OrchestraError> {
    let rates = vec![rate_bps / 8.0; hosts as usize];
    let net = if racks.count <= 1 {
        NetnsCluster::create(&rates)
    } else {
        let core_bps = racks.core_rate_bps.unwrap_or(rate_bps * hosts as f64);
        NetnsCluster::create_racked(
            &rates,
            &Default::default(),
            &coflowkit_testbed::Racks {
                of_host: racks.of_hosts(hosts),
                core_bytes_per_s: core_bps / 8.0,
            },
        )
    };
    let net = net.map_err(|e| OrchestraError::Netns(e.to_string()))?;
    Ok(Cluster { net })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receivers_fill_racks_in_order_and_the_source_is_in_the_middle() {
        let r = Racks {
            count: 3,
            core_rate_bps: None,
        };
        assert_eq!(
            r.of_hosts(16),
            [1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2]
        );
        assert_eq!(Racks::default().of_hosts(4), [0, 0, 0, 0]);
        assert_eq!(
            Racks {
                count: 2,
                core_rate_bps: None
            }
            .of_hosts(2),
            [1, 0]
        );
    }
}

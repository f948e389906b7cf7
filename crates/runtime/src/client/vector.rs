//! `report_vector`: a tenant tells the coordinator its correlation vector (HUG's public API,
//! coflow thesis §7.6.1). hug, drf and psp use it for a coflow registered non-clairvoyant; a
//! coflow that never reports counts one unit per unfinished flow on each end, the all-ones
//! default per flow. A tenant may lie: under HUG that gains it nothing (docs/hug.md).

use super::{Client, CoflowId};
use crate::error::{Error, Result};
use crate::proto::{VectorEntry, VectorReport};

/// How much a coflow sends from (`up`) and receives at (`down`) one host per unit of
/// progress, in bytes or any unit that is the same for every entry.
#[derive(Debug, Clone, PartialEq)]
pub struct HostDemand {
    /// Data address of the host's daemon.
    pub daemon: String,
    pub up: f64,
    pub down: f64,
}

impl HostDemand {
    pub fn new(daemon: &str, up: f64, down: f64) -> Self {
        HostDemand {
            daemon: daemon.to_string(),
            up,
            down,
        }
    }
}

impl Client {
    /// Report `coflow`'s correlation vector (hosts not named: 0); uplink and downlink totals
    /// must match. An empty vector withdraws the report. Refused with a message naming the
    /// entry when an entry is negative or not finite, a daemon is unknown or named twice, all
    /// are zero or the totals differ, and under schedulers other than hug, drf and psp.
    pub async fn report_vector(&self, coflow: CoflowId, vector: &[HostDemand]) -> Result<()> {
        let entries = vector
            .iter()
            .map(|h| VectorEntry {
                daemon: h.daemon.clone(),
                up: h.up,
                down: h.down,
            })
            .collect();
        self.rpc
            .clone()
            .report_vector(VectorReport { coflow, entries })
            .await
            .map_err(|s| Error::rpc(&self.cfg.coordinator, s))?;
        Ok(())
    }
}

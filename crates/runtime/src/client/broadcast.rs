//! `client.broadcast(coflow, data_id, bytes)`: one sender, many receivers (Cornet, coflow
//! thesis §4.4.2). The data is put on this host's daemon and the coordinator told to
//! broadcast it; every receiver then calls the ordinary `client.get(coflow, data_id)`, which
//! its own daemon serves once it holds the whole data, swapped in blocks with the other
//! receivers' daemons and checked against the sender's SHA-256.
//!
//! ```no_run
//! use coflowkit_runtime::{Client, CoflowOptions};
//! # async fn demo(driver: Client, receivers: Vec<Client>) -> Result<(), coflowkit_runtime::Error> {
//! let coflow = driver.register(CoflowOptions::default().name("model-v3")).await?;
//! driver.broadcast(coflow, "weights", &vec![7u8; 64 << 20]).await?;   // on the sender's host
//! for r in &receivers {                                               // on each receiver's host
//!     let bytes = r.get(coflow, "weights").await?;
//!     assert_eq!(bytes.len(), 64 << 20);
//! }
//! driver.unregister(coflow).await?;                                   // when all are done
//! # Ok(()) }
//! ```

use super::{Client, ClientConfig, CoflowId};
use crate::error::{Error, Result};
use crate::proto::{data_request, BroadcastGetRequest, StartBroadcastRequest};

/// Cornet's knobs for one broadcast (0 = the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct BroadcastOptions {
    /// Block size in bytes (default 4 MiB, the thesis'; about 1 MiB suits ~100 MB).
    pub block_bytes: u32,
    /// Peers the controller hands a receiver per request (default 10).
    pub peer_set: u32,
    /// Cornet (None: the default), CornetTopology (racks from the coordinator's
    /// configuration, `CoordinatorConfig::racks`) or CornetClustering (racks learned from the
    /// coordinator's earlier broadcasts); other mechanisms are refused by name.
    pub mechanism: Option<coflowkit_orchestra::Mechanism>,
    /// Its class under the coordinator's inter-transfer controller
    /// (`CoordinatorConfig::broadcast_policy`): larger is more urgent.
    pub priority: u32,
    /// Its weighted fair share there (0: 1).
    pub weight: f64,
}

impl Client {
    /// Put `bytes` as `data_id` of `coflow` on this host's daemon and broadcast it: receivers
    /// get it with [`Client::get`]. Returns the size.
    pub async fn broadcast(&self, coflow: CoflowId, data_id: &str, bytes: &[u8]) -> Result<u64> {
        self.broadcast_with(coflow, data_id, bytes, BroadcastOptions::default())
            .await
    }

    /// [`Client::broadcast`] with its knobs.
    pub async fn broadcast_with(
        &self,
        coflow: CoflowId,
        data_id: &str,
        bytes: &[u8],
        opts: BroadcastOptions,
    ) -> Result<u64> {
        let n = self.put(coflow, data_id, bytes).await?;
        let digest = coflowkit_orchestra::data::digest([bytes]);
        self.rpc
            .clone()
            .start_broadcast(StartBroadcastRequest {
                coflow,
                data_id: data_id.to_string(),
                block_bytes: opts.block_bytes,
                digest,
                peer_set: opts.peer_set,
                mechanism: opts.mechanism.map(|m| m.to_string()).unwrap_or_default(),
                priority: opts.priority,
                weight: opts.weight,
            })
            .await
            .map_err(|s| Error::rpc(&self.cfg.coordinator, s))?;
        Ok(n)
    }
}

/// Where a get of a broadcast object goes: this host's daemon, asked to fetch it.
pub(super) fn get_op(cfg: &ClientConfig) -> (String, data_request::Op) {
    (
        cfg.local_daemon.clone(),
        data_request::Op::BroadcastGet(BroadcastGetRequest {}),
    )
}

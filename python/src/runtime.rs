//! A client of the real system (`coflowkit coordinator` / `coflowkit daemon`): register,
//! put, broadcast, get, unregister, as `coflowkit_runtime::Client` does (the runtime's own
//! client on a tokio runtime of its own; every call releases the GIL).

use coflowkit_runtime::{BroadcastOptions, Client, ClientConfig, CoflowOptions, Token};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

fn rt_err(e: coflowkit_runtime::Error) -> PyErr {
    crate::CoflowkitError::new_err(e.to_string())
}

/// `Client(coordinator, daemon, token)`: the coordinator's address, this host's daemon's
/// data address, the cluster's token.
#[pyclass(name = "Client", module = "coflowkit._native", frozen)]
pub struct PyClient {
    rt: tokio::runtime::Runtime,
    client: Client,
}

#[pymethods]
impl PyClient {
    #[new]
    fn new(py: Python<'_>, coordinator: &str, daemon: &str, token: &str) -> PyResult<Self> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| crate::CoflowkitError::new_err(format!("tokio runtime: {e}")))?;
        let cfg = ClientConfig::new(coordinator, daemon, Token::new(token).map_err(rt_err)?);
        let client = py
            .allow_threads(|| rt.block_on(Client::connect(cfg)))
            .map_err(rt_err)?;
        Ok(PyClient { rt, client })
    }

    /// Register a coflow; returns its id. `priority` is its class under the coordinator's
    /// inter-transfer controller (larger is more urgent).
    #[pyo3(signature = (name = "", priority = 0, weight = 0.0))]
    fn register(&self, py: Python<'_>, name: &str, priority: u32, weight: f64) -> PyResult<u64> {
        let opts = CoflowOptions {
            priority,
            weight,
            ..CoflowOptions::default().name(name)
        };
        py.allow_threads(|| self.rt.block_on(self.client.register(opts)))
            .map_err(rt_err)
    }

    /// Put `data` as `data_id` of `coflow` on this host's daemon; returns its size.
    fn put(&self, py: Python<'_>, coflow: u64, data_id: &str, data: &[u8]) -> PyResult<u64> {
        py.allow_threads(|| self.rt.block_on(self.client.put(coflow, data_id, data)))
            .map_err(rt_err)
    }

    /// Broadcast `data` to every receiver that gets it (Cornet; `block_bytes` 0 = 4 MiB,
    /// `mechanism` "" = cornet, or cornet-topology, cornet-clustering); returns its size.
    #[pyo3(signature = (coflow, data_id, data, block_bytes = 0, priority = 0, mechanism = ""))]
    #[allow(clippy::too_many_arguments)] // Python keywords
    fn broadcast(
        &self,
        py: Python<'_>,
        coflow: u64,
        data_id: &str,
        data: &[u8],
        block_bytes: u32,
        priority: u32,
        mechanism: &str,
    ) -> PyResult<u64> {
        let mechanism = match mechanism {
            "" => None,
            m => Some(
                (m.parse::<coflowkit_orchestra::Mechanism>())
                    .map_err(|e| crate::CoflowkitError::new_err(e.to_string()))?,
            ),
        };
        let opts = BroadcastOptions {
            block_bytes,
            priority,
            mechanism,
            ..Default::default()
        };
        py.allow_threads(|| {
            (self.rt).block_on(self.client.broadcast_with(coflow, data_id, data, opts))
        })
        .map_err(rt_err)
    }

    /// The bytes of `data_id` of `coflow` (a put object, or a broadcast's copy fetched by
    /// this host's daemon from its peers).
    fn get<'py>(
        &self,
        py: Python<'py>,
        coflow: u64,
        data_id: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let v = py
            .allow_threads(|| self.rt.block_on(self.client.get(coflow, data_id)))
            .map_err(rt_err)?;
        Ok(PyBytes::new(py, &v))
    }

    fn unregister(&self, py: Python<'_>, coflow: u64) -> PyResult<()> {
        py.allow_threads(|| self.rt.block_on(self.client.unregister(coflow)))
            .map_err(rt_err)
    }
}

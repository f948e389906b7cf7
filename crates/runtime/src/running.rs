//! A component running on its own tokio runtime, ended by dropping the handle: its tasks stop
//! and its sockets close at once, as if the process had been killed.

use std::future::Future;
use std::net::SocketAddr;

use crate::error::{Error, Result};

/// A listener for `what`, bound now rather than on the runtime it will serve on, so that
/// port 0 works and its address is known before anyone connects; nonblocking, ready for
/// `tokio::net::TcpListener::from_std`.
pub(crate) fn bind_now(
    addr: SocketAddr,
    what: &str,
) -> Result<(std::net::TcpListener, SocketAddr)> {
    let l = std::net::TcpListener::bind(addr)
        .map_err(|e| Error::io(format!("binding the {what} to {addr}"), e))?;
    let local = l
        .local_addr()
        .map_err(|e| Error::io(format!("{what} address"), e))?;
    l.set_nonblocking(true)
        .map_err(|e| Error::io(format!("{what} socket"), e))?;
    Ok((l, local))
}

pub struct Running {
    addr: SocketAddr,
    metrics: Option<SocketAddr>,
    rt: Option<tokio::runtime::Runtime>,
}

impl Running {
    pub(crate) fn start<F>(addr: SocketAddr, what: &'static str, fut: F) -> Result<Running>
    where
        F: Future<Output = Result<()>> + Send + 'static,
    {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(what)
            .enable_all()
            .build()
            .map_err(|e| Error::io(format!("starting the {what} runtime"), e))?;
        rt.spawn(async move {
            if let Err(e) = fut.await {
                tracing::error!("{what} stopped: {e}");
                crate::trouble::note(format!("{what} stopped: {e}"));
            }
        });
        Ok(Running {
            addr,
            metrics: None,
            rt: Some(rt),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Where its metrics endpoint listens, if it has one.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics
    }

    pub(crate) fn with_metrics(mut self, metrics: Option<SocketAddr>) -> Running {
        self.metrics = metrics;
        self
    }

    /// Stop it now (no goodbye to peers).
    pub fn kill(mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

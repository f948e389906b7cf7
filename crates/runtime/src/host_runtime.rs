//! A tokio runtime whose threads live inside one host of an emulated cluster
//! (`coflowkit_testbed`): its sockets are the host's.

use coflowkit_testbed::{NetnsCluster, NetnsError};

/// A tokio runtime inside a host, shut down without blocking when dropped (it may be dropped
/// inside another runtime).
pub struct HostRuntime(Option<tokio::runtime::Runtime>);

impl HostRuntime {
    /// A runtime whose threads are inside host `h` of `net` (one worker: the hosts share the
    /// machine's cores).
    pub fn new(net: &NetnsCluster, h: usize) -> Result<HostRuntime, NetnsError> {
        let ns = net.host_ns(h)?;
        let rt = ns.run(|| {
            let again = ns.clone();
            // Threads inherit the namespace; entering again on start makes that explicit.
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("netns-host")
                .on_thread_start(move || {
                    if let Err(e) = again.enter() {
                        tracing::error!("{e}");
                    }
                })
                .enable_all()
                .build()
        })?;
        let rt = rt.map_err(|e| NetnsError::Config(format!("starting a host runtime: {e}")))?;
        Ok(HostRuntime(Some(rt)))
    }

    pub fn handle(&self) -> &tokio::runtime::Handle {
        self.0.as_ref().expect("runtime lives until drop").handle()
    }
}

impl Drop for HostRuntime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

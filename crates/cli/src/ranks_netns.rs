//! `--local M --netns`: M ranks, each a process in its own network namespace of the emulated
//! cluster (crate `coflowkit-testbed`), both directions of its NIC shaped to `--rate` by tbf.
//! The rendezvous runs on rank 0's shaped NIC, so every rank's UDP socket binds to its own
//! shaped NIC (the launcher binds towards the rendezvous).

use std::time::Duration;

use anyhow::{bail, Context, Result};
use coflowkit_launch::{local, run_ranks};
use coflowkit_testbed::{ClusterOptions, NetnsCluster};

/// Rendezvous port inside rank 0's fresh namespace (nothing else listens there).
const RENDEZVOUS_PORT: u16 = 47000;

/// IPv4 + UDP headers and the transport's own header, beyond the payload.
const DATAGRAM_OVERHEAD: usize = 20 + 8 + 64;

pub fn run(
    m: u32,
    session: u32,
    rate_bps: Option<f64>,
    payload: usize,
    timeout: Duration,
    args: &[std::ffi::OsString],
) -> Result<()> {
    let Some(bps) = rate_bps else {
        bail!("--netns needs --rate (the namespaces' links are shaped to it)");
    };
    coflowkit_testbed::available().context("--netns")?;
    // Datagrams larger than a 1500-byte frame get jumbo NICs rather than IP fragments.
    let mtu = (payload + DATAGRAM_OVERHEAD > 1500).then_some((payload + DATAGRAM_OVERHEAD) as u32);
    let cluster = NetnsCluster::create_with(&vec![bps / 8.0; m as usize], &ClusterOptions { mtu })
        .context("building the emulated cluster")?;
    let at = format!("{}:{RENDEZVOUS_PORT}", cluster.hosts()[0].ip);
    let exe = std::env::current_exe().context("the current executable")?;
    let result = run_ranks(m, Some(timeout), |rank| {
        let mut c = cluster
            .command(rank as usize, &exe)
            .map_err(|e| coflowkit_launch::LaunchError::Bad(e.to_string()))?;
        c.args(args);
        c.envs(local::child_env(rank, m, &at, session));
        Ok(c)
    });
    cluster.teardown().context("removing the emulated cluster")?;
    Ok(result?)
}

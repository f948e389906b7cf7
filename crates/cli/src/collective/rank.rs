//! Becoming a rank: either launch `--local M` copies of this very command and wait for them,
//! or (in each copy, or under mpirun/srun) meet the others and open the UDP endpoint.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use coflowkit_group::Group;
use coflowkit_launch::local::{is_launched, self_command};
use coflowkit_model::units::parse_rate_bps;
use coflowkit_testbed::ClusterOptions;
use coflowkit_transport::{Endpoint, EndpointConfig};

#[derive(Args, Clone)]
pub struct LaunchArgs {
    /// Start this many ranks as local processes on loopback, each running this same command.
    /// Without it the rank and size come from the environment (mpirun, srun: docs/launch.md).
    #[arg(long)]
    pub local: Option<u32>,
    /// With --local: each rank in its own network namespace, its link shaped both ways to
    /// --rate by tbf (needs root, `ip` and `tc`).
    #[arg(long, requires = "local")]
    pub netns: bool,
    /// With --netns: MTU of the data links (9000 for jumbo frames); the UDP payload follows.
    #[arg(long, requires = "netns")]
    pub mtu: Option<u32>,
    /// Per-rank link rate paced in user space, e.g. 200mbit (default: unpaced).
    #[arg(long)]
    pub rate: Option<String>,
    /// Seconds to wait for the ranks to meet, and for a local launch to finish.
    #[arg(long, default_value_t = 120.0)]
    pub timeout_s: f64,
}

/// `None` in a launcher (the ranks ran and succeeded); the world group in a rank.
pub fn launch_or_join(a: &LaunchArgs) -> anyhow::Result<Option<Group>> {
    let timeout = Duration::from_secs_f64(a.timeout_s.max(0.001));
    let rate_bps = a
        .rate
        .as_deref()
        .map(parse_rate_bps)
        .transpose()
        .context("--rate")?;
    if let Some(m) = a.local {
        if !is_launched() {
            let args: Vec<_> = std::env::args_os().skip(1).collect();
            let session = coflowkit_launch::world::session_from(&|k| std::env::var(k).ok())?;
            if a.netns {
                let bps = rate_bps.context("--netns needs --rate (the links' tbf rate)")?;
                let opts = ClusterOptions { mtu: a.mtu };
                let exe = std::env::current_exe().context("the current executable")?;
                coflowkit_launch::run_netns(
                    m,
                    bps / 8.0,
                    &opts,
                    session,
                    Some(timeout),
                    exe.as_os_str(),
                    &args,
                )?;
            } else {
                coflowkit_launch::run_local(m, session, Some(timeout), |_| self_command(&args))?;
            }
            return Ok(None);
        }
    }
    let w = coflowkit_launch::bootstrap(timeout)?;
    let mut cfg = EndpointConfig::new(w.rank, w.peers.clone(), w.session);
    cfg.rate_bps = rate_bps;
    if let Some(mtu) = a.mtu {
        // IP (20) + UDP (8) + the transport's header.
        cfg.payload = (mtu as usize).saturating_sub(28 + coflowkit_transport::wire::HEADER_LEN);
    }
    let ep = Endpoint::bind(w.socket, cfg).context("opening the UDP endpoint")?;
    Ok(Some(Group::world(Arc::new(ep))?))
}

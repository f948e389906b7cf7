//! `coflowkit testbed --hosts M --rate R -- CMD ...`: builds the emulated cluster our ranks run
//! on (one network namespace per host, both directions shaped by tbf), runs any command with
//! its layout in the environment, and removes the cluster after. It lets other tools, MPI
//! first, run on exactly the hosts coflowkit's own ranks use (bench/mpi/in-netns.sh).
//!
//! The command sees `COFLOWKIT_NETNS` (the namespaces, comma-separated, host i at index i),
//! `COFLOWKIT_NETNS_IPS` (their data addresses), `COFLOWKIT_DATA_SUBNET` (a.b.c.0/24, the
//! shaped network), `COFLOWKIT_DATA_BRIDGE` and `COFLOWKIT_CONTROL_BRIDGE` (the root
//! namespace's bridges: the control one is unshaped and reachable from every host).

use std::process::Command;

use anyhow::{bail, Context, Result};
use clap::Args;
use coflowkit_model::units::parse_rate_bps;
use coflowkit_testbed::{ClusterOptions, NetnsCluster};

#[derive(Args, Debug)]
pub struct TestbedArgs {
    /// Hosts (network namespaces) to build.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=253))]
    pub hosts: u32,
    /// Rate of every host's NIC, each way (bits per second: 200mbit, 1gbit).
    #[arg(long, value_name = "RATE")]
    pub rate: String,
    /// MTU of the data NICs (9000 for jumbo frames).
    #[arg(long)]
    pub mtu: Option<u32>,
    /// The command and its arguments.
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

pub fn run(a: TestbedArgs) -> Result<()> {
    let bps = parse_rate_bps(&a.rate).context("--rate")?;
    coflowkit_testbed::available()?;
    let cluster = NetnsCluster::create_with(
        &vec![bps / 8.0; a.hosts as usize],
        &ClusterOptions { mtu: a.mtu },
    )?;
    let hosts = cluster.hosts();
    let join = |f: &dyn Fn(usize) -> String| (0..hosts.len()).map(f).collect::<Vec<_>>().join(",");
    let ip = hosts[0].ip.octets();
    let status = Command::new(&a.command[0])
        .args(&a.command[1..])
        .env("COFLOWKIT_NETNS", join(&|i| hosts[i].namespace.clone()))
        .env("COFLOWKIT_NETNS_IPS", join(&|i| hosts[i].ip.to_string()))
        .env(
            "COFLOWKIT_DATA_SUBNET",
            format!("{}.{}.{}.0/24", ip[0], ip[1], ip[2]),
        )
        .env("COFLOWKIT_DATA_BRIDGE", cluster.bridge())
        .env("COFLOWKIT_CONTROL_BRIDGE", cluster.control_bridge())
        .status()
        .with_context(|| format!("running {}", a.command[0]));
    cluster.teardown()?;
    let status = status?;
    if !status.success() {
        bail!("{} exited with {status}", a.command[0]);
    }
    Ok(())
}

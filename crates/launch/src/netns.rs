//! `--local M --netns`: each rank in its own network namespace of the emulated cluster
//! (`coflowkit-testbed`), both directions of its link shaped by tbf to the given rate. Rank 0's
//! rendezvous is on its data address, so every rank's UDP socket lands on the shaped link.

use std::ffi::{OsStr, OsString};
use std::time::Duration;

use coflowkit_testbed::{ClusterOptions, NetnsCluster};

use crate::local::{child_env, launcher_secret, run_ranks};
use crate::world::DEFAULT_PORT;
use crate::LaunchError;

/// Build a cluster of `size` hosts at `rate_bytes_per_s` each (bytes of payload per second,
/// each way, as `NetnsCluster` counts them), run `program args` as rank r in
/// host r, wait for all (as `run_ranks`), and tear the cluster down whatever happened.
pub fn run_netns(
    size: u32,
    rate_bytes_per_s: f64,
    opts: &ClusterOptions,
    session: u32,
    timeout: Option<Duration>,
    program: &OsStr,
    args: &[OsString],
) -> Result<(), LaunchError> {
    if size == 0 {
        return Err(LaunchError::Bad("--netns needs at least 1 rank".into()));
    }
    coflowkit_testbed::available().map_err(|e| LaunchError::Netns(e.to_string()))?;
    let secret = launcher_secret()?;
    let cluster = NetnsCluster::create_with(&vec![rate_bytes_per_s; size as usize], opts)
        .map_err(|e| LaunchError::Netns(e.to_string()))?;
    let at = format!("{}:{DEFAULT_PORT}", cluster.hosts()[0].ip);
    let ran = run_ranks(size, timeout, |rank| {
        let mut c = cluster
            .command(rank as usize, program)
            .map_err(|e| LaunchError::Netns(e.to_string()))?;
        c.args(args);
        c.envs(child_env(rank, size, &at, session, secret.as_deref()));
        Ok(c)
    });
    let torn = cluster
        .teardown()
        .map_err(|e| LaunchError::Netns(format!("tearing the cluster down: {e}")));
    ran?;
    torn
}

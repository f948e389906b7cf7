//! `client.broadcast` across racks in the emulated cluster (coflow thesis row 2, Fig 4.9):
//! the runtime's coordinator, daemons and clients in network namespaces, hosts in racks
//! behind shaped core links, one broadcast per mechanism on the same cluster and coordinator
//! (so CornetClustering learns from the broadcasts before it). Needs root and `ip`/`tc`.
//!
//! ```text
//! cargo run -p coflowkit-runtime --example broadcast_racks -- --receivers 15 --racks 3 \
//!     --rate-mbit 200 --core-mbit 100 --mib 64 --block-kib 1024 \
//!     --mechanisms cornet,cornet-topology,cornet,cornet-clustering
//! ```
//!
//! Prints one line per broadcast: completion (the last receiver's get), mean receiver time,
//! and the bytes that crossed the core links.

use std::sync::Arc;

use coflowkit_orchestra::topology::Racks as RackLayout;
use coflowkit_orchestra::{data, Mechanism};
use coflowkit_testbed::Racks;

#[path = "../tests/netns_world/mod.rs"]
mod netns_world;

struct Args {
    receivers: u32,
    racks: u32,
    rate_mbit: f64,
    core_mbit: f64,
    mib: u64,
    block_kib: u32,
    mechanisms: Vec<Mechanism>,
    seed: u64,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        receivers: 15,
        racks: 3,
        rate_mbit: 200.0,
        core_mbit: 100.0,
        mib: 64,
        block_kib: 1024,
        mechanisms: Mechanism::parse_list("cornet,cornet-topology,cornet,cornet-clustering")
            .map_err(|e| e.to_string())?,
        seed: 1,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it
            .next()
            .ok_or_else(|| format!("{flag}: expected a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {v}: {e}");
        match flag.as_str() {
            "--receivers" => a.receivers = v.parse().map_err(|e| bad(&e))?,
            "--racks" => a.racks = v.parse().map_err(|e| bad(&e))?,
            "--rate-mbit" => a.rate_mbit = v.parse().map_err(|e| bad(&e))?,
            "--core-mbit" => a.core_mbit = v.parse().map_err(|e| bad(&e))?,
            "--mib" => a.mib = v.parse().map_err(|e| bad(&e))?,
            "--block-kib" => a.block_kib = v.parse().map_err(|e| bad(&e))?,
            "--seed" => a.seed = v.parse().map_err(|e| bad(&e))?,
            "--mechanisms" => a.mechanisms = Mechanism::parse_list(&v).map_err(|e| bad(&e))?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if a.receivers == 0 || a.racks == 0 || a.mib == 0 || a.block_kib == 0 {
        return Err("--receivers, --racks, --mib and --block-kib must be at least 1".into());
    }
    Ok(a)
}

fn main() {
    let a = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("broadcast_racks: {e}");
            std::process::exit(2);
        }
    };
    let hosts = a.receivers + 1;
    let of_host = RackLayout {
        count: a.racks,
        core_rate_bps: None,
    }
    .of_hosts(hosts);
    let racks = (a.racks > 1).then(|| Racks {
        of_host: of_host.clone(),
        core_bytes_per_s: a.core_mbit * 1e6 / 8.0,
    });
    let w = match netns_world::World::start(hosts as usize, a.rate_mbit * 1e6 / 8.0, racks) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("broadcast_racks: building the cluster: {e}");
            std::process::exit(1);
        }
    };
    let bytes = Arc::new(data::make(a.seed, a.mib << 20));
    println!(
        "{} MiB to {} receivers in {} racks {of_host:?}, hosts {} Mbit/s, core links {} Mbit/s, blocks {} KiB",
        a.mib, a.receivers, a.racks, a.rate_mbit, a.core_mbit, a.block_kib
    );
    println!(
        "{:<18} {:>12} {:>8} {:>14}  receivers s",
        "mechanism", "completion s", "mean s", "core MiB out"
    );
    for &m in &a.mechanisms {
        let before: u64 = w.core_bytes().iter().map(|c| c.0).sum();
        match w.broadcast(bytes.clone(), m, a.block_kib << 10) {
            Ok(o) => {
                let after: u64 = w.core_bytes().iter().map(|c| c.0).sum();
                let times: Vec<String> = o.receiver_s.iter().map(|s| format!("{s:.1}")).collect();
                println!(
                    "{:<18} {:>12.2} {:>8.2} {:>14.1}  [{}]{}",
                    m.to_string(),
                    o.completion_s(),
                    o.mean_s(),
                    (after - before) as f64 / (1 << 20) as f64,
                    times.join(" "),
                    if o.exact { "" } else { "  NOT BYTE-EXACT" }
                );
            }
            Err(e) => println!("{m:<18} failed: {e}"),
        }
    }
}

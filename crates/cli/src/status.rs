//! `coflowkit status`: what a coordinator knows (daemons, coflows, flows and their rates).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{anyhow, Result};
use clap::Args;
use coflowkit_runtime::proto::Empty;
use coflowkit_runtime::{rpc, Token};
use serde_json::json;

use crate::tls_args::TlsClientArgs;

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Coordinator address
    #[arg(long, value_name = "HOST:PORT")]
    pub coordinator: String,
    /// File holding the shared token
    #[arg(long, value_name = "FILE")]
    pub token_file: PathBuf,
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub tls: TlsClientArgs,
}

pub fn run(args: StatusArgs) -> Result<()> {
    let text = render(args)?;
    // `status | head` closes the pipe early: `main` ends quietly (see `out`).
    Ok(out!("{text}")?)
}

/// What `status` prints.
fn render(args: StatusArgs) -> Result<String> {
    let mut out = String::new();
    let token = Token::from_file(&args.token_file)?;
    let tls = args.tls.load()?;
    // A plaintext call to a TLS coordinator only sees its stream cancelled: say what may be wrong.
    let hint = if tls.is_none() {
        " (if the coordinator serves TLS, pass --tls-ca)"
    } else {
        ""
    };
    let rt = crate::async_rt::new()?;
    let s = rt.block_on(async {
        let mut c = rpc::connect_with(&args.coordinator, &token, tls.as_ref()).await?;
        c.status(Empty {})
            .await
            .map(|r| r.into_inner())
            .map_err(|e| {
                let line = coflowkit_runtime::error::status_line(&e);
                anyhow!("coordinator {}: {line}{hint}", args.coordinator)
            })
    })?;
    if args.json {
        let doc = json!({
            "protocol_version": s.protocol_version,
            "scheduler": s.scheduler,
            "rounds": s.rounds,
            "uptime_s": s.uptime_s,
            "last_decision_s": s.last_decision_s,
            "daemons_omitted": s.daemons_omitted,
            "coflows_omitted": s.coflows_omitted,
            "flows_omitted": s.flows_omitted,
            "daemons": s.daemons.iter().map(|d| json!({
                "addr": d.addr, "port": d.port, "nic_bytes_per_s": d.nic_bytes_per_s,
                "connected": d.connected, "objects": d.objects,
            })).collect::<Vec<_>>(),
            "coflows": s.coflows.iter().map(|c| json!({
                "id": c.id, "name": c.name, "ready": c.ready, "age_s": c.age_s,
                "sent_bytes": c.sent_bytes, "flows_omitted": c.flows_omitted,
                "dag": format!("{}.{}", c.dag_external, c.dag_internal), "parents": c.parents,
                "flows": c.flows.iter().map(|f| json!({
                    "src": f.src, "dst": f.dst, "data_id": f.data_id, "size_bytes": f.size_bytes,
                    "sent_bytes": f.sent_bytes, "bytes_per_s": f.bytes_per_s,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        });
        return Ok(serde_json::to_string_pretty(&doc)? + "\n");
    }
    writeln!(
        out,
        "coordinator {} (protocol v{}), scheduler {}, up {:.1} s, {} rounds, last round {:.3} ms",
        args.coordinator,
        s.protocol_version,
        s.scheduler,
        s.uptime_s,
        s.rounds,
        s.last_decision_s * 1e3
    )?;
    writeln!(out, "daemons:")?;
    for d in &s.daemons {
        writeln!(
            out,
            "  {:>3}  {:<24} {:>10.1} Mbit/s  {:<12} {} objects",
            d.port,
            d.addr,
            d.nic_bytes_per_s * 8.0 / 1e6,
            if d.connected {
                "connected"
            } else {
                "disconnected"
            },
            d.objects
        )?;
    }
    writeln!(out, "coflows:")?;
    for c in &s.coflows {
        writeln!(
            out,
            "  {} {:<12} dag {}.{} {:<9} age {:>8.2} s, {} bytes sent, {} flows",
            c.id,
            c.name,
            c.dag_external,
            c.dag_internal,
            if c.ready { "ready" } else { "not ready" },
            c.age_s,
            c.sent_bytes,
            c.flows.len() as u64 + c.flows_omitted as u64
        )?;
        for f in &c.flows {
            writeln!(
                out,
                "      {} -> {}  `{}`  {}/{} bytes  {:.1} Mbit/s",
                f.src,
                if f.dst.is_empty() { "outside" } else { &f.dst },
                f.data_id,
                f.sent_bytes,
                f.size_bytes,
                f.bytes_per_s * 8.0 / 1e6
            )?;
        }
        if c.flows_omitted > 0 {
            writeln!(out, "      ... and {} more flows", c.flows_omitted)?;
        }
    }
    if s.daemons_omitted > 0 || s.coflows_omitted > 0 || s.flows_omitted > 0 {
        writeln!(
            out,
            "not listed (the reply is bounded to 3 MiB): {} daemons, {} coflows, {} flows; \
             /metrics on the coordinator's --metrics-listen has the totals",
            s.daemons_omitted, s.coflows_omitted, s.flows_omitted
        )?;
    }
    Ok(out)
}

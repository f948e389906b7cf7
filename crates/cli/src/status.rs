//! `coflowkit status`: what a coordinator knows (daemons, coflows, flows and their rates).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{anyhow, Result};
use clap::Args;
use coflowkit_model::echo::visible;
use coflowkit_runtime::proto::{Empty, StatusReply};
use coflowkit_runtime::{rpc, Token};
use coflowkit_simcmd::flag_range::timeout_s;
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
    /// Give up when the coordinator has not answered within this many seconds
    #[arg(long, default_value_t = 15.0, value_name = "S", value_parser = timeout_s())]
    pub timeout_s: f64,
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
    let token = Token::from_file(&args.token_file)?;
    let tls = args.tls.load()?;
    // A plaintext call to a TLS coordinator only sees its stream cancelled: say what may be wrong.
    let hint = if tls.is_none() {
        " (if the coordinator serves TLS, pass --tls-ca)"
    } else {
        ""
    };
    let rt = crate::async_rt::new()?;
    // A peer that keeps the connection alive (it answers HTTP/2 pings) but never the call
    // waited for ever (adversarial pass 33, B5).
    let deadline = std::time::Duration::from_secs_f64(args.timeout_s);
    let s = rt.block_on(async {
        let call = async {
            let mut c = rpc::connect_with(&args.coordinator, &token, tls.as_ref()).await?;
            c.status(Empty {})
                .await
                .map(|r| r.into_inner())
                .map_err(|e| {
                    let line = coflowkit_runtime::error::status_line(&e);
                    anyhow!("coordinator {}: {line}{hint}", args.coordinator)
                })
        };
        tokio::time::timeout(deadline, call)
            .await
            .unwrap_or_else(|_| {
                Err(anyhow!(
                    "coordinator {} did not answer within {} s (--timeout-s)",
                    args.coordinator,
                    args.timeout_s
                ))
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
    table(&args.coordinator, &s)
}

/// The table `status` prints.
fn table(coordinator: &str, s: &StatusReply) -> Result<String> {
    let mut out = String::new();
    writeln!(
        out,
        "coordinator {} (protocol v{}), scheduler {}, up {:.1} s, {} rounds, last round {:.3} ms",
        visible(coordinator),
        s.protocol_version,
        visible(&s.scheduler),
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
            visible(&d.addr),
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
            visible(&c.name),
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
                if f.dst.is_empty() {
                    "outside".into()
                } else {
                    visible(&f.dst)
                },
                visible(&f.data_id),
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

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_runtime::proto::{status_reply, StatusReply};

    /// Adversarial pass 33, B10: a coflow name, a daemon address and a data id with ESC
    /// sequences and newlines are printed with them escaped: no raw control character, no
    /// forged line.
    #[test]
    fn names_addresses_and_data_ids_print_their_control_characters_escaped() {
        let evil = "\x1b[2J\x1b]0;PWNED\x07 evil\nfake line: daemons:";
        let s = StatusReply {
            daemons: vec![status_reply::Daemon {
                addr: "\x1b[31mred\x1b[0m\n:1".into(),
                ..Default::default()
            }],
            coflows: vec![status_reply::Coflow {
                name: evil.into(),
                flows: vec![status_reply::Flow {
                    data_id: "id\r\x1b[1A".into(),
                    dst: "d\n".into(),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let out = table("c:1", &s).unwrap();
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
        assert!(!out.lines().any(|l| l.starts_with("fake line")), "{out}");
        assert_eq!(out.lines().count(), 6, "{out}");
        assert!(out.contains("\\x1b[2J"), "{out}");
        assert_eq!(visible("plain é"), "plain é");
    }

    /// Adversarial pass 33, B5: a peer that completes the HTTP/2 handshake and answers pings
    /// but never the call: `status` gives up after `--timeout-s` (it waited for ever).
    #[test]
    fn status_gives_up_on_a_peer_that_never_answers() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let l = (rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))).unwrap();
        let addr = l.local_addr().unwrap();
        rt.spawn(async move {
            while let Ok((sock, _)) = l.accept().await {
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(|_req| {
                        std::future::pending::<
                            Result<hyper::Response<String>, std::convert::Infallible>,
                        >()
                    });
                    let http2 = hyper::server::conn::http2::Builder::new(
                        hyper_util::rt::TokioExecutor::new(),
                    );
                    let io = hyper_util::rt::TokioIo::new(sock);
                    let _ = http2.serve_connection(io, svc).await;
                });
            }
        });
        let dir = tempfile::tempdir().unwrap();
        let token_file = dir.path().join("token");
        std::fs::write(&token_file, "test-token-1234").unwrap();
        let args = StatusArgs {
            coordinator: addr.to_string(),
            token_file,
            json: false,
            timeout_s: 1.0,
            tls: TlsClientArgs {
                tls_ca: None,
                tls_domain: None,
            },
        };
        let t0 = std::time::Instant::now();
        let e = render(args).unwrap_err().to_string();
        assert!(t0.elapsed() < std::time::Duration::from_secs(10));
        assert!(e.contains("did not answer within 1 s (--timeout-s)"), "{e}");
    }
}

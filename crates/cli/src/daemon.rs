//! `coflowkit daemon`: run the daemon of one host.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use coflowkit_model::units::parse_rate_bps;
use coflowkit_runtime::{daemon, DaemonConfig, Token};

use crate::tls_args::{TlsClientArgs, TlsServerArgs};

#[derive(Args, Debug)]
pub struct DaemonArgs {
    /// Coordinator address
    #[arg(long, value_name = "HOST:PORT")]
    pub coordinator: String,
    /// Address to serve data on
    #[arg(long, default_value = "0.0.0.0:7401", value_name = "HOST:PORT")]
    pub listen: SocketAddr,
    /// Address other hosts reach this daemon at [default: --listen, unless it is 0.0.0.0]
    #[arg(long, value_name = "HOST:PORT")]
    pub advertise: Option<String>,
    /// NIC rate each way, enforced by pacing and told to the scheduler: 1gbit, 500mbit, 1e9
    #[arg(long, default_value = "1gbit", value_name = "RATE")]
    pub nic_rate: String,
    /// Most put data kept in memory, in MiB; the rest spills to --data-dir (or waits)
    #[arg(long, default_value_t = 1024, value_name = "MIB")]
    pub mem_limit_mib: u64,
    /// Where put data spills when memory is full; a daemon restarted on the same directory
    /// serves its spilled objects again (after checking their checksums)
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Write every put to --data-dir, none kept in memory, so a restart recovers every
    /// completed put
    #[arg(long, requires = "data_dir")]
    pub persist_all: bool,
    /// File holding the shared token
    #[arg(long, value_name = "FILE")]
    pub token_file: PathBuf,
    /// Data port over TLS (--tls-cert, --tls-key)
    #[command(flatten)]
    pub tls: TlsServerArgs,
    /// Coordinator over TLS (--tls-ca, --tls-domain)
    #[command(flatten)]
    pub tls_client: TlsClientArgs,
}

pub fn run(args: DaemonArgs) -> Result<()> {
    crate::logs();
    // Servers take as many descriptors as the hard limit allows (the limits scale with it).
    coflowkit_runtime::listen::raise_nofile_limit();
    let nic_bps = parse_rate_bps(&args.nic_rate).context("--nic-rate")?;
    let token = Token::from_file(&args.token_file)?;
    let advertise = match &args.advertise {
        Some(a) => a.clone(),
        None if args.listen.ip().is_unspecified() => {
            bail!("--listen {} is a wildcard: say with --advertise HOST:PORT how other hosts reach this daemon", args.listen)
        }
        // A fixed port is advertised as given; port 0 (any free port) as the port bound below.
        None if args.listen.port() == 0 => String::new(),
        None => args.listen.to_string(),
    };
    // Settings are refused before the daemon says it serves, naming the flag.
    if nic_bps / 8.0 < daemon::MIN_NIC_BYTES_PER_S {
        bail!(
            "--nic-rate {}: a daemon's NIC must be at least 8 kbit/s ({} bytes/s)",
            args.nic_rate,
            daemon::MIN_NIC_BYTES_PER_S
        );
    }
    let mem_limit_bytes = args.mem_limit_mib.saturating_mul(1 << 20);
    if mem_limit_bytes < daemon::MIN_MEM_LIMIT_BYTES {
        bail!(
            "--mem-limit-mib {}: a daemon needs at least {} bytes (two blocks), so at least 1 MiB",
            args.mem_limit_mib,
            daemon::MIN_MEM_LIMIT_BYTES
        );
    }
    let mut cfg = DaemonConfig::new(args.coordinator.clone(), token, nic_bps / 8.0);
    cfg.advertise = advertise;
    cfg.mem_limit_bytes = mem_limit_bytes;
    cfg.data_dir = args.data_dir.clone();
    cfg.persist_all = args.persist_all;
    cfg.tls = args.tls.load()?;
    cfg.coordinator_tls = args.tls_client.load()?;
    cfg.validate()?;
    let rt = crate::async_rt::new()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("binding {}", args.listen))?;
        if cfg.advertise.is_empty() {
            cfg.advertise = listener.local_addr()?.to_string();
        }
        errln!(
            "daemon {} (NIC {}) serving data on {} ({}), coordinator {} ({})",
            cfg.advertise,
            args.nic_rate,
            listener.local_addr()?,
            if cfg.tls.is_some() {
                "TLS"
            } else {
                "plaintext"
            },
            cfg.coordinator,
            if cfg.coordinator_tls.is_some() {
                "TLS"
            } else {
                "plaintext"
            }
        );
        daemon::serve(cfg, listener).await?;
        Ok(())
    })
}

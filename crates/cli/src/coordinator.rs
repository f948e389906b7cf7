//! `coflowkit coordinator`: run the coordinator of a real cluster.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use coflowkit_runtime::{coordinator, CoordinatorConfig, Token};
use coflowkit_simcmd::flag_range::{f64_in, wait};

use crate::sched_args::SchedArgs;
use crate::tls_args::TlsServerArgs;

#[derive(Args, Debug)]
#[command(mut_arg("scheduler", |a| a.default_value("varys").help("The scheduler (one name)")))]
pub struct CoordinatorArgs {
    /// Address to serve the control protocol on
    #[arg(long, default_value = "0.0.0.0:7400", value_name = "HOST:PORT")]
    pub listen: SocketAddr,
    /// File holding the shared token every client and daemon must present
    #[arg(long, value_name = "FILE")]
    pub token_file: PathBuf,
    #[command(flatten)]
    pub sched: SchedArgs,
    /// Δ: milliseconds between the daemons' progress reports (1 to 10,000)
    #[arg(long, default_value_t = 10.0, value_name = "MS",
          value_parser = f64_in(wait::REPORT_INTERVAL_MS.0, wait::REPORT_INTERVAL_MS.1))]
    pub report_interval_ms: f64,
    /// Decide at least every this many milliseconds while flows are active (0 = only on events
    /// and scheduler wake-ups; at most 60,000)
    #[arg(long, default_value_t = 100.0, value_name = "MS",
          value_parser = f64_in(wait::TICK_MS.0, wait::TICK_MS.1))]
    pub tick_ms: f64,
    /// Forget a daemon that has stayed disconnected this many seconds (its flows end as
    /// failed, its port is reused; it registers anew if it comes back). 0 = never
    #[arg(long, default_value_t = 300.0, value_name = "SECONDS", value_parser = f64_in(0.0, 1e9))]
    pub forget_daemons_after_s: f64,
    /// Also serve GET /metrics (Prometheus) and GET /status (JSON) over HTTP on this address
    /// (read-only, no token: bind it to a private address)
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_listen: Option<SocketAddr>,
    #[command(flatten)]
    pub tls: TlsServerArgs,
    /// hug, drf, psp: the daemons share their NICs by local max-min under the pushed P*,
    /// guarantees and caps (the thesis' enforcement) instead of pacing per-flow rates
    #[arg(long)]
    pub tenant_local: bool,
    /// Most coflows registered at once (those rebuilt from daemons' reports included); more
    /// are refused with RESOURCE_EXHAUSTED
    #[arg(long, default_value_t = 8192, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=16_777_216))]
    pub max_coflows: u32,
    /// Most flows (gets started) one coflow may have
    #[arg(long, default_value_t = 65_536, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=16_777_216))]
    pub max_flows_per_coflow: u32,
    /// Most flows one daemon may send that the coordinator records at once (until their
    /// coflows are unregistered)
    #[arg(long, default_value_t = 65_536, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=16_777_216))]
    pub max_flows_per_daemon: u32,
    /// Most put objects one coflow may have recorded, across all daemons
    #[arg(long, default_value_t = 65_536, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=16_777_216))]
    pub max_objects_per_coflow: u32,
    /// Most put objects one daemon may have recorded at once (until their coflows are
    /// unregistered)
    #[arg(long, default_value_t = 65_536, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=16_777_216))]
    pub max_objects_per_daemon: u32,
}

pub fn config(args: &CoordinatorArgs) -> Result<CoordinatorConfig> {
    let kinds = args.sched.kinds()?;
    if kinds.len() != 1 {
        bail!("--scheduler: a coordinator runs exactly one scheduler");
    }
    let token = Token::from_file(&args.token_file)?;
    let mut cfg = CoordinatorConfig::new(token, kinds[0]);
    cfg.options = args.sched.options()?;
    cfg.report_interval = Duration::from_secs_f64(args.report_interval_ms / 1000.0);
    cfg.metrics = args.metrics_listen;
    cfg.tls = args.tls.load()?;
    cfg.tick = (args.tick_ms > 0.0).then(|| Duration::from_secs_f64(args.tick_ms / 1000.0));
    cfg.forget_daemons_after = (args.forget_daemons_after_s > 0.0)
        .then(|| Duration::from_secs_f64(args.forget_daemons_after_s));
    if args.tenant_local && !coflowkit_sched::SchedulerKind::TENANT.contains(&cfg.scheduler) {
        bail!("--tenant-local: only hug, drf and psp push guarantees and caps");
    }
    cfg.tenant_local = args.tenant_local;
    cfg.registry = coflowkit_runtime::coordinator::state::RegistryLimits {
        max_coflows: args.max_coflows as usize,
        max_flows_per_coflow: args.max_flows_per_coflow as usize,
        max_flows_per_daemon: args.max_flows_per_daemon as usize,
        max_objects_per_coflow: args.max_objects_per_coflow as usize,
        max_objects_per_daemon: args.max_objects_per_daemon as usize,
    };
    Ok(cfg)
}

pub fn run(args: CoordinatorArgs) -> Result<()> {
    crate::logs();
    // Servers take as many descriptors as the hard limit allows (the limits scale with it).
    coflowkit_runtime::listen::raise_nofile_limit();
    let cfg = config(&args)?;
    let rt = crate::async_rt::new()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("binding {}", args.listen))?;
        errln!(
            "coordinator ({}) listening on {} (protocol v{}, {})",
            cfg.scheduler,
            listener.local_addr()?,
            coflowkit_runtime::PROTOCOL_VERSION,
            if cfg.tls.is_some() {
                "TLS"
            } else {
                "plaintext"
            }
        );
        coordinator::serve(cfg, listener).await?;
        Ok(())
    })
}

//! `coflowkit hug distribute`: how long a new allocation takes to reach every machine, the
//! second half of row 32 (thesis §7.7.2: under 10 ms to 100 machines, about 1 s to 100,000
//! emulated ones, 1000 on each real machine).
//!
//! A real coordinator (`hug`) and N emulated daemons on loopback. Each daemon registers and
//! subscribes to its rate table exactly as `coflowkit daemon` does; the subscriptions share
//! `--per-connection` of them per HTTP/2 connection, as the thesis' emulated machines shared
//! real ones. One round: a client registers a coflow (an arrival: the policy decides anew and
//! pushes every daemon a new table carrying P*), and the round ends when the last daemon has
//! received a table of the new decision. The time includes the registration RPC and the
//! decision, so it bounds the distribution from above. The coordinator runs on its own runtime
//! and the emulated daemons on a second one of two threads, all on this machine's cores, so on
//! a loaded machine the times are inflated.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use coflowkit_runtime::proto::{RegisterCoflowRequest, RegisterDaemonRequest, Subscribe};
use coflowkit_runtime::{coordinator, rpc, CoordinatorConfig, Token, PROTOCOL_VERSION};
use coflowkit_sched::SchedulerKind;
use serde::Serialize;
use tokio::sync::Notify;

#[derive(Args)]
pub struct DistributeArgs {
    /// Emulated machines (daemons), one measurement each (1 to 100000 each).
    #[arg(long, value_delimiter = ',', default_value = "100,1000,10000",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub daemons: Vec<usize>,
    /// Daemon subscriptions per HTTP/2 connection (1 to 1000).
    #[arg(long, default_value_t = 100,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub per_connection: usize,
    /// Rounds per measurement; the median and the largest are reported (1 to 1000).
    #[arg(long, default_value_t = 11,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub rounds: usize,
    /// Give up on a round after this many seconds (an error: some daemon never got it; 1 to
    /// 86400).
    #[arg(long, default_value_t = 60,
          value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..=86_400))]
    pub timeout_s: u64,
    /// Write the rows here as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

#[derive(Serialize, Debug)]
struct Row {
    daemons: usize,
    connections: usize,
    rounds: usize,
    /// From the arrival's RPC to the last daemon holding the new table: median and largest.
    median_ms: f64,
    max_ms: f64,
    /// The same to the median daemon (half of them hold it by then), median over rounds.
    half_ms: f64,
}

/// Per daemon the newest decision round it holds; `wake` when one changes.
struct Seen {
    round: Mutex<Vec<(u64, Instant)>>,
    wake: Notify,
}

pub fn run(a: DistributeArgs) -> Result<()> {
    crate::out::check_outputs(&[crate::out::Out::file("--json", a.json.as_deref())])?;
    crate::async_rt::reserve()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    outln!(
        "{:>8} {:>6} {:>7} {:>12} {:>10} {:>10}",
        "daemons",
        "conns",
        "rounds",
        "median ms",
        "max ms",
        "half ms"
    )?;
    let mut rows = Vec::new();
    for &n in &a.daemons {
        let r = rt.block_on(measure(n, &a))?;
        outln!(
            "{:>8} {:>6} {:>7} {:>12.3} {:>10.3} {:>10.3}",
            r.daemons,
            r.connections,
            r.rounds,
            r.median_ms,
            r.max_ms,
            r.half_ms
        )?;
        rows.push(r);
    }
    if let Some(p) = &a.json {
        std::fs::write(p, serde_json::to_string_pretty(&rows)?)
            .with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}

fn daemon_addr(i: usize) -> String {
    // Identities only: nothing connects to them.
    format!("10.{}.{}.{}:7000", (i >> 16) & 255, (i >> 8) & 255, i & 255)
}

/// One measurement of `n` emulated daemons (see the module docs).
async fn measure(n: usize, a: &DistributeArgs) -> Result<Row> {
    let token = Token::new("hug-distribute-bench")?;
    let mut config = CoordinatorConfig::new(token.clone(), SchedulerKind::Hug);
    config.max_daemons = n;
    config.tick = None;
    config.forget_daemons_after = None;
    let coord = coordinator::spawn(config, "127.0.0.1:0".parse()?)?;
    let addr = coord.addr().to_string();
    let conns = n.div_ceil(a.per_connection);
    let mut clients = Vec::with_capacity(conns);
    for _ in 0..conns {
        clients.push(rpc::connect(&addr, &token).await?);
    }
    let seen = Arc::new(Seen {
        round: Mutex::new(vec![(0, Instant::now()); n]),
        wake: Notify::new(),
    });
    // One task per connection registers and subscribes its daemons, so registrations arrive
    // together and the coordinator's decisions on them batch (one at a time would cost a
    // decision and a push to every daemon each: quadratic).
    let mut joins = Vec::with_capacity(conns);
    for (k, c) in clients.iter().enumerate() {
        let (c, seen) = (c.clone(), seen.clone());
        let ids = k * a.per_connection..((k + 1) * a.per_connection).min(n);
        joins.push(tokio::spawn(subscribe_all(c, ids, seen)));
    }
    for j in joins {
        j.await??;
    }
    let timeout = Duration::from_secs(a.timeout_s);
    let mut client = clients[0].clone();
    let (mut lasts, mut halves) = (Vec::new(), Vec::new());
    for round in 0..=a.rounds {
        // Quiet first: no decision in flight (the registrations' own rounds have landed).
        let before = settle(&seen).await;
        let t0 = Instant::now();
        client
            .register_coflow(RegisterCoflowRequest {
                clairvoyant: true,
                weight: 1.0,
                ..Default::default()
            })
            .await?;
        let times = tokio::time::timeout(timeout, all_past(&seen, before))
            .await
            .with_context(|| format!("round {round}: not every daemon got the new table"))?;
        if round == 0 {
            continue; // warm-up
        }
        let mut ms: Vec<f64> = (times.iter())
            .map(|t| t.saturating_duration_since(t0).as_secs_f64() * 1e3)
            .collect();
        ms.sort_by(f64::total_cmp);
        lasts.push(ms[n - 1]);
        halves.push(ms[(n - 1) / 2]);
    }
    coord.kill();
    lasts.sort_by(f64::total_cmp);
    halves.sort_by(f64::total_cmp);
    Ok(Row {
        daemons: n,
        connections: conns,
        rounds: a.rounds,
        median_ms: lasts[lasts.len() / 2],
        max_ms: lasts[lasts.len() - 1],
        half_ms: halves[halves.len() / 2],
    })
}

/// Register daemons `ids` over `c` and record every table each receives in `seen`.
async fn subscribe_all(c: rpc::Client, ids: std::ops::Range<usize>, seen: Arc<Seen>) -> Result<()> {
    for i in ids {
        let mut c = c.clone();
        c.register_daemon(RegisterDaemonRequest {
            protocol_version: PROTOCOL_VERSION,
            addr: daemon_addr(i),
            nic_bytes_per_s: 125e6,
            objects: Vec::new(),
            flows: Vec::new(),
        })
        .await
        .with_context(|| format!("registering emulated daemon {i}"))?;
        let mut stream = c
            .subscribe_rates(Subscribe {
                daemon: daemon_addr(i),
            })
            .await?
            .into_inner();
        let seen = seen.clone();
        tokio::spawn(async move {
            while let Ok(Some(u)) = stream.message().await {
                seen.round.lock().unwrap()[i] = (u.round, Instant::now());
                seen.wake.notify_one();
            }
        });
    }
    Ok(())
}

/// The newest round any daemon holds, once 50 ms pass without a new table.
async fn settle(seen: &Seen) -> u64 {
    loop {
        let notified = seen.wake.notified();
        if tokio::time::timeout(Duration::from_millis(50), notified)
            .await
            .is_err()
        {
            let r = seen.round.lock().unwrap();
            return r.iter().map(|x| x.0).max().unwrap_or(0);
        }
    }
}

/// When each daemon first held a round after `before` (waits until all do).
async fn all_past(seen: &Seen, before: u64) -> Vec<Instant> {
    loop {
        let notified = seen.wake.notified();
        {
            let r = seen.round.lock().unwrap();
            if r.iter().all(|x| x.0 > before) {
                return r.iter().map(|x| x.1).collect();
            }
        }
        notified.await;
    }
}

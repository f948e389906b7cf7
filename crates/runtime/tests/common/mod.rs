//! A cluster on loopback: a coordinator and daemons on real sockets, each on its own runtime so
//! killing one closes its sockets like a dead process.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::Duration;

use coflowkit_runtime::{
    coordinator, daemon, Client, ClientConfig, CoordinatorConfig, DaemonConfig, Running, Token,
};
use coflowkit_sched::SchedulerKind;

pub fn token() -> Token {
    Token::new("test-token-1234").unwrap()
}

pub fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

pub struct Cluster {
    pub coordinator: Option<Running>,
    pub coordinator_addr: SocketAddr,
    pub scheduler: SchedulerKind,
    pub daemons: Vec<Option<Running>>,
    pub daemon_addrs: Vec<String>,
}

impl Cluster {
    pub fn start(scheduler: SchedulerKind, nics: &[f64]) -> Cluster {
        Cluster::start_with(scheduler, nics, |_| {})
    }

    pub fn start_with(
        scheduler: SchedulerKind,
        nics: &[f64],
        tweak: impl Fn(&mut DaemonConfig),
    ) -> Cluster {
        Cluster::start_configured(CoordinatorConfig::new(token(), scheduler), nics, tweak)
    }

    /// A cluster whose coordinator runs with `config` (its token must be [`token`]).
    pub fn start_configured(
        config: CoordinatorConfig,
        nics: &[f64],
        tweak: impl Fn(&mut DaemonConfig),
    ) -> Cluster {
        let scheduler = config.scheduler;
        let c = coordinator::spawn(config, loopback()).unwrap();
        let addr = c.addr();
        let mut daemons = Vec::new();
        let mut daemon_addrs = Vec::new();
        for &nic in nics {
            let mut cfg = DaemonConfig::new(addr.to_string(), token(), nic);
            tweak(&mut cfg);
            let d = daemon::spawn(cfg, loopback()).unwrap();
            daemon_addrs.push(d.addr().to_string());
            daemons.push(Some(d));
        }
        Cluster {
            coordinator: Some(c),
            coordinator_addr: addr,
            scheduler,
            daemons,
            daemon_addrs,
        }
    }

    /// A client on host `i` (its puts go to daemon `i`).
    pub async fn client(&self, i: usize) -> Client {
        Client::connect(ClientConfig::new(
            &self.coordinator_addr.to_string(),
            &self.daemon_addrs[i],
            token(),
        ))
        .await
        .unwrap()
    }

    /// Wait until the coordinator lists every daemon as connected.
    pub async fn ready(&self) {
        let n = self.daemons.iter().filter(|d| d.is_some()).count();
        for _ in 0..200 {
            if let Ok(mut c) =
                coflowkit_runtime::rpc::connect(&self.coordinator_addr.to_string(), &token()).await
            {
                if let Ok(s) = c.status(coflowkit_runtime::proto::Empty {}).await {
                    if s.into_inner()
                        .daemons
                        .iter()
                        .filter(|d| d.connected)
                        .count()
                        >= n
                    {
                        return;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("daemons did not connect");
    }

    pub fn restart_coordinator(&mut self) {
        let config = CoordinatorConfig::new(token(), self.scheduler);
        self.restart_coordinator_with(config);
    }

    /// Kill the coordinator and start one with `config` on the same address.
    pub fn restart_coordinator_with(&mut self, config: CoordinatorConfig) {
        if let Some(c) = self.coordinator.take() {
            c.kill();
        }
        let mut last = None;
        // The old runtime may need a moment to release the port.
        for _ in 0..100 {
            match coordinator::spawn(config.clone(), self.coordinator_addr) {
                Ok(c) => {
                    self.coordinator = Some(c);
                    return;
                }
                Err(e) => last = Some(e),
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("coordinator did not restart: {last:?}");
    }
}

/// The coordinator's (or a daemon's) `/metrics` page at `addr`, whole.
pub async fn metrics(addr: SocketAddr) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

/// Deterministic bytes (xorshift from a seed).
pub fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

//! The runtime in the emulated cluster, for broadcasts: hosts are network namespaces (racks
//! optional) whose NICs `tc` limits, a coordinator on the unshaped control bridge (Cornet's
//! controller), one daemon, one tokio runtime and one client per host. Shared by the netns
//! broadcast tests and the `broadcast_racks` example (`#[path]`).
#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use coflowkit_orchestra::Mechanism;
use coflowkit_runtime::proto::Empty;
use coflowkit_runtime::{
    coordinator, daemon, BroadcastOptions, Client, ClientConfig, CoflowOptions, CoordinatorConfig,
    DaemonConfig, HostRuntime, Running, Token,
};
use coflowkit_sched::SchedulerKind;
use coflowkit_testbed::{NetnsCluster, Racks};

pub fn token() -> Token {
    Token::new("netns-broadcast-token").unwrap()
}

/// Fields drop in order: clients and runtimes, then daemons, coordinator, and the namespaces.
pub struct World {
    pub clients: Vec<Client>,
    pub runtimes: Vec<HostRuntime>,
    pub daemons: Vec<Running>,
    pub coordinator: Running,
    pub net: NetnsCluster,
    rt: tokio::runtime::Runtime,
}

/// One broadcast's outcome: each receiver's seconds from the start of the broadcast to the
/// end of its get (host order, host 0 the sender), and whether every copy was byte-exact.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub receiver_s: Vec<f64>,
    pub exact: bool,
}

impl Outcome {
    pub fn completion_s(&self) -> f64 {
        self.receiver_s.iter().copied().fold(0.0, f64::max)
    }

    pub fn mean_s(&self) -> f64 {
        self.receiver_s.iter().sum::<f64>() / self.receiver_s.len().max(1) as f64
    }
}

impl World {
    /// `hosts` hosts at `bytes_per_s` each way; with `racks`, the coordinator is configured
    /// with each host's rack (by its data address) for CornetTopology.
    pub fn start(hosts: usize, bytes_per_s: f64, racks: Option<Racks>) -> Result<World, String> {
        let rates = vec![bytes_per_s; hosts];
        let net = match &racks {
            Some(r) => NetnsCluster::create_racked(&rates, &Default::default(), r),
            None => NetnsCluster::create(&rates),
        }
        .map_err(|e| e.to_string())?;
        let mut cfg = CoordinatorConfig::new(token(), SchedulerKind::Fair);
        if let Some(r) = &racks {
            cfg.racks = (net.hosts().iter().zip(&r.of_host))
                .map(|(h, &k)| (h.ip.to_string(), k))
                .collect::<HashMap<_, _>>();
        }
        let coordinator = coordinator::spawn(cfg, SocketAddr::new(net.control_ip().into(), 0))
            .map_err(|e| e.to_string())?;
        let caddr = coordinator.addr().to_string();
        // The daemons tell the scheduler 1 GB/s: only tc holds them back.
        let mut daemons = Vec::new();
        for h in 0..hosts {
            let cfg = DaemonConfig::new(caddr.clone(), token(), 1e9);
            let addr = SocketAddr::new(net.hosts()[h].ip.into(), 0);
            let d = net
                .in_host(h, || daemon::spawn(cfg, addr))
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
            daemons.push(d);
        }
        let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
        rt.block_on(async {
            let mut c = coflowkit_runtime::rpc::connect(&caddr, &token())
                .await
                .map_err(|e| e.to_string())?;
            for _ in 0..1000 {
                let s = c.status(Empty {}).await.map_err(|e| e.to_string())?;
                if s.into_inner()
                    .daemons
                    .iter()
                    .filter(|d| d.connected)
                    .count()
                    >= hosts
                {
                    return Ok(());
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err("the daemons did not connect within 10 s".to_string())
        })?;
        let runtimes = (0..hosts)
            .map(|h| HostRuntime::new(&net, h).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut clients = Vec::new();
        for h in 0..hosts {
            let c = ClientConfig::new(&caddr, &daemons[h].addr().to_string(), token());
            clients.push(on(&runtimes[h], Client::connect(c)).map_err(|e| e.to_string())?);
        }
        Ok(World {
            clients,
            runtimes,
            daemons,
            coordinator,
            net,
            rt,
        })
    }

    /// Host 0 broadcasts `data` with `mechanism` in `block_bytes` blocks; every other host
    /// gets it. The coflow is unregistered at the end (the swarms' memory freed; the
    /// coordinator keeps the block times for CornetClustering).
    pub fn broadcast(
        &self,
        data: Arc<Vec<u8>>,
        mechanism: Mechanism,
        block_bytes: u32,
    ) -> Result<Outcome, String> {
        let c0 = self.clients[0].clone();
        let d = data.clone();
        let coflow = on(&self.runtimes[0], async move {
            let id = c0.register(CoflowOptions::default()).await?;
            let opts = BroadcastOptions {
                block_bytes,
                mechanism: Some(mechanism),
                ..Default::default()
            };
            c0.broadcast_with(id, "b", &d, opts).await?;
            Ok::<_, coflowkit_runtime::Error>(id)
        })
        .map_err(|e| format!("{mechanism}: starting the broadcast: {e}"))?;
        let t = Instant::now();
        let gets: Vec<_> = (1..self.clients.len())
            .map(|h| {
                let c = self.clients[h].clone();
                self.runtimes[h]
                    .handle()
                    .spawn(async move { (c.get(coflow, "b").await, Instant::now()) })
            })
            .collect();
        let mut out = Outcome {
            receiver_s: Vec::new(),
            exact: true,
        };
        let mut error = None;
        for (i, g) in gets.into_iter().enumerate() {
            let (got, at) = self.rt.block_on(g).map_err(|e| e.to_string())?;
            match got {
                Ok(got) => out.exact &= got == *data,
                Err(e) => {
                    error.get_or_insert(format!("{mechanism}: receiver {}: {e}", i + 1));
                }
            }
            out.receiver_s.push(at.duration_since(t).as_secs_f64());
        }
        let c0 = self.clients[0].clone();
        on(
            &self.runtimes[0],
            async move { c0.unregister(coflow).await },
        )
        .map_err(|e| e.to_string())?;
        match error {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// Bytes that crossed each rack's core link (out, in) so far, as tc counts them.
    pub fn core_bytes(&self) -> Vec<(u64, u64)> {
        (0..self.net.racks())
            .map(|k| self.net.core_bytes(k).unwrap())
            .collect()
    }
}

pub fn on<F>(rt: &HostRuntime, fut: F) -> F::Output
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    rt.handle().block_on(rt.handle().spawn(fut)).unwrap()
}

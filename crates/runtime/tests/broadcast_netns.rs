//! `client.broadcast` in the emulated cluster: hosts are network namespaces whose NICs `tc`
//! limits, the coordinator on the control bridge is Cornet's controller, daemons swap blocks
//! over the data NICs. Needs root and `ip`/`tc`; elsewhere it says on stderr it did not run.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use coflowkit_runtime::proto::Empty;
use coflowkit_runtime::{
    coordinator, daemon, BroadcastOptions, Client, ClientConfig, CoflowOptions, CoordinatorConfig,
    DaemonConfig, HostRuntime, Token,
};
use coflowkit_sched::SchedulerKind;
use coflowkit_testbed::{self as netns, NetnsCluster};

mod common;
use common::bytes;

const MBIT: f64 = 1e6 / 8.0;

fn token() -> Token {
    Token::new("netns-broadcast-token").unwrap()
}

fn on<F>(rt: &HostRuntime, fut: F) -> F::Output
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    rt.handle().block_on(rt.handle().spawn(fut)).unwrap()
}

#[test]
fn a_broadcast_in_namespaces_reaches_every_receiver_byte_exact_no_faster_than_tc() {
    if let Err(why) = netns::available() {
        eprintln!("NOT RUN: a_broadcast_in_namespaces_reaches_every_receiver_byte_exact: {why}");
        return;
    }
    let hosts = 6;
    let rate = 40.0 * MBIT;
    let net = NetnsCluster::create(&vec![rate; hosts]).unwrap();
    let coord = coordinator::spawn(
        CoordinatorConfig::new(token(), SchedulerKind::Fair),
        SocketAddr::new(net.control_ip().into(), 0),
    )
    .unwrap();
    let caddr = coord.addr().to_string();
    // The daemons tell the scheduler 1 GB/s: only tc holds them back.
    let daemons: Vec<_> = (0..hosts)
        .map(|h| {
            let cfg = DaemonConfig::new(caddr.clone(), token(), 1e9);
            let addr = SocketAddr::new(net.hosts()[h].ip.into(), 0);
            net.in_host(h, || daemon::spawn(cfg, addr))
                .unwrap()
                .unwrap()
        })
        .collect();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = coflowkit_runtime::rpc::connect(&caddr, &token())
            .await
            .unwrap();
        for _ in 0..500 {
            let s = c.status(Empty {}).await.unwrap().into_inner();
            if s.daemons.iter().filter(|d| d.connected).count() >= hosts {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the daemons did not connect");
    });
    let runtimes: Vec<_> = (0..hosts)
        .map(|h| HostRuntime::new(&net, h).unwrap())
        .collect();
    let clients: Vec<Client> = (0..hosts)
        .map(|h| {
            let c = ClientConfig::new(&caddr, &daemons[h].addr().to_string(), token());
            on(&runtimes[h], Client::connect(c)).unwrap()
        })
        .collect();
    let data = bytes(23, 2 << 20);
    let (c0, d) = (clients[0].clone(), data.clone());
    let coflow = on(&runtimes[0], async move {
        let id = c0.register(CoflowOptions::default()).await?;
        let opts = BroadcastOptions {
            block_bytes: 256 << 10,
            peer_set: 0,
        };
        c0.broadcast_with(id, "b", &d, opts).await?;
        Ok::<_, coflowkit_runtime::Error>(id)
    })
    .unwrap();
    let t = Instant::now();
    let gets: Vec<_> = (1..hosts)
        .map(|h| {
            let c = clients[h].clone();
            runtimes[h]
                .handle()
                .spawn(async move { (c.get(coflow, "b").await, Instant::now()) })
        })
        .collect();
    let mut times = Vec::new();
    for (i, g) in gets.into_iter().enumerate() {
        let (got, at) = rt.block_on(g).unwrap();
        let got = got.unwrap_or_else(|e| panic!("receiver {}: {e}", i + 1));
        assert!(
            got == data,
            "receiver {}: {} bytes, not the data",
            i + 1,
            got.len()
        );
        times.push(at.duration_since(t).as_secs_f64());
    }
    let floor = 0.9 * data.len() as f64 / rate;
    let alone = (hosts - 1) as f64 * data.len() as f64 / rate;
    eprintln!(
        "2 MiB to {} receivers at 40 Mbit/s: {times:.2?} s (one link's time {floor:.2} s, the source alone {alone:.2} s)",
        hosts - 1
    );
    for (i, s) in times.iter().enumerate() {
        assert!(
            *s >= floor,
            "receiver {} finished in {s} s, faster than its NIC",
            i + 1
        );
    }
    drop(clients);
    drop(runtimes);
    drop(daemons);
    drop(coord);
    let prefix = net.prefix().to_string();
    drop(net);
    assert_eq!(netns::leftovers(&prefix).unwrap(), Vec::<String>::new());
}

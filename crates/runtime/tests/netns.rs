//! The emulated cluster of network namespaces: `tc` really limits each host's NIC (both ways,
//! per host), sockets of a host's daemon and client live in the host, a replay runs on it, and
//! nothing is left behind. These need root and `ip`/`tc` (CI runs as root); elsewhere each test
//! says on stderr that it did not run.

use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use coflowkit_model::{Coflow, Flow, Trace};
use coflowkit_runtime::proto::Empty;
use coflowkit_runtime::replay::{replay, ReplayConfig};
use coflowkit_runtime::{
    coordinator, daemon, Client, ClientConfig, CoflowOptions, CoordinatorConfig, DaemonConfig,
    HostRuntime, Token,
};
use coflowkit_sched::{SchedOptions, SchedulerKind};
use coflowkit_testbed::{self as netns, can_run, NetnsCluster};

mod common;
use common::bytes;

/// One cluster at a time, so "nothing of this process is left" is checkable between tests.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn ours() -> String {
    format!("ck{:x}-", std::process::id())
}

fn token() -> Token {
    Token::new("netns-test-token").unwrap()
}

/// Run `fut` on a host's runtime and wait (spawned there: `Handle::block_on` would poll it on
/// this thread, outside the host).
fn on<F>(rt: &HostRuntime, fut: F) -> F::Output
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    rt.handle().block_on(rt.handle().spawn(fut)).unwrap()
}

/// Until `n` daemons are connected to the coordinator at `addr`.
fn wait_connected(addr: &str, n: usize) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = coflowkit_runtime::rpc::connect(addr, &token())
            .await
            .unwrap();
        for _ in 0..500 {
            let s = c.status(Empty {}).await.unwrap().into_inner();
            if s.daemons.iter().filter(|d| d.connected).count() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the daemons did not connect");
    });
}

const MBIT: f64 = 1e6 / 8.0;

/// `tc qdisc show dev LINK` (a link of the root namespace).
fn qdisc(link: &str) -> String {
    let out = std::process::Command::new("tc")
        .args(["qdisc", "show", "dev", link])
        .output()
        .unwrap();
    assert!(out.status.success(), "tc qdisc show dev {link}");
    String::from_utf8(out.stdout).unwrap()
}

/// Bytes a root-namespace link received: what the host at its other end sent.
fn rx_bytes(link: &str) -> u64 {
    std::fs::read_to_string(format!("/sys/class/net/{link}/statistics/rx_bytes"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn tc_limits_each_hosts_uplink_and_downlink_and_nothing_is_left() {
    if !can_run("tc_limits_each_hosts_uplink_and_downlink_and_nothing_is_left") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // Host 1 is slow; the daemons tell the scheduler 1 GB/s, so only tc can hold them back.
    let rates = [40.0 * MBIT, 8.0 * MBIT, 40.0 * MBIT];
    let net = NetnsCluster::create(&rates).unwrap();
    let prefix = net.prefix().to_string();
    assert!(prefix.starts_with(&ours()));
    assert_eq!(net.hosts().len(), 3);
    // Per host a namespace, a data veth and a control veth; two bridges.
    let made = netns::leftovers(&prefix).unwrap();
    for link in ["b", "k", "h0", "c0", "h2", "c2"] {
        let name = format!("link {prefix}{link}");
        assert!(made.contains(&name), "{name} not in {made:?}");
    }
    assert_eq!(made.len(), 3 * 3 + 2, "{made:?}");
    assert_ne!(
        net.control_ip().octets()[..3],
        net.bridge_ip().octets()[..3],
        "control and data on one /24"
    );
    // Only the data veths are shaped.
    for h in 0..3 {
        assert!(qdisc(&format!("{prefix}h{h}")).contains("tbf"));
        assert!(!qdisc(&format!("{prefix}c{h}")).contains("tbf"));
    }

    // The coordinator on the control bridge: the daemons and clients reach it over ctl0.
    let coord = coordinator::spawn(
        CoordinatorConfig::new(token(), SchedulerKind::Fair),
        SocketAddr::new(net.control_ip().into(), 0),
    )
    .unwrap();
    let caddr = coord.addr().to_string();
    let mut daemons = Vec::new();
    for h in 0..3 {
        let cfg = DaemonConfig::new(caddr.clone(), token(), 1e9);
        let addr = SocketAddr::new(net.hosts()[h].ip.into(), 0);
        // Binding a host's address works only inside the host.
        assert!(std::net::TcpListener::bind(addr).is_err());
        daemons.push(
            net.in_host(h, || daemon::spawn(cfg, addr))
                .unwrap()
                .unwrap(),
        );
    }
    wait_connected(&caddr, 3);
    // What each host sent over its control NIC: its daemon's registration, at least.
    for h in 0..3 {
        let sent = rx_bytes(&format!("{prefix}c{h}"));
        assert!(sent > 0, "host {h} sent nothing over its control NIC");
    }
    let runtimes: Vec<_> = (0..3).map(|h| HostRuntime::new(&net, h).unwrap()).collect();
    let clients: Vec<Client> = (0..3)
        .map(|h| {
            let c = ClientConfig::new(&caddr, &daemons[h].addr().to_string(), token());
            on(&runtimes[h], Client::connect(c)).unwrap()
        })
        .collect();

    let size = 600_000usize;
    // One flow at a time from `src` to `dst`: its seconds.
    let transfer = |src: usize, dst: usize, seed: u64| -> f64 {
        let data = bytes(seed, size);
        let (c, d) = (clients[src].clone(), data.clone());
        let coflow = on(&runtimes[src], async move {
            let id = c.register(CoflowOptions::flows(1)).await?;
            c.put(id, "x", &d).await?;
            Ok::<_, coflowkit_runtime::Error>(id)
        })
        .unwrap();
        let t = Instant::now();
        let c = clients[dst].clone();
        let got = on(&runtimes[dst], async move { c.get(coflow, "x").await }).unwrap();
        let took = t.elapsed().as_secs_f64();
        assert!(got == data, "{src} -> {dst}: bytes differ");
        let c = clients[src].clone();
        on(&runtimes[src], async move { c.unregister(coflow).await }).unwrap();
        took
    };
    let floor = |rate: f64| 0.9 * size as f64 / rate;
    // Into the slow host: its downlink (the bridge end of its veth) holds the flow.
    let down = transfer(0, 1, 1);
    assert!(down >= floor(rates[1]), "0 -> 1 took {down} s");
    // Out of the slow host: its uplink (eth0 inside it).
    let up = transfer(1, 2, 2);
    assert!(up >= floor(rates[1]), "1 -> 2 took {up} s");
    // Between two fast hosts: their own limit, not the slow host's.
    let fast = transfer(2, 0, 3);
    eprintln!(
        "600 kB: 0 -> 1 {down:.3} s, 1 -> 2 {up:.3} s (8 Mbit/s), 2 -> 0 {fast:.3} s (40 Mbit/s)"
    );
    assert!(fast >= floor(rates[0]), "2 -> 0 took {fast} s");
    assert!(
        fast < 0.5 * down.min(up),
        "fast hosts are limited per host: 2 -> 0 took {fast} s, the slow host's flows {down} s and {up} s"
    );

    // Each host sent one flow: over its data NIC, not its control NIC.
    for h in 0..3 {
        let (data, control) = (
            rx_bytes(&format!("{prefix}h{h}")),
            rx_bytes(&format!("{prefix}c{h}")),
        );
        assert!(data >= size as u64, "host {h} sent {data} bytes of data");
        assert!(
            control < size as u64 / 4,
            "host {h} sent {control} bytes over its control NIC"
        );
    }

    // Removing the cluster while its daemons still hold sockets leaves nothing either.
    drop(net);
    assert_eq!(netns::leftovers(&prefix).unwrap(), Vec::<String>::new());
    drop(clients);
    drop(runtimes);
    drop(daemons);
}

#[test]
fn replay_on_netns_moves_every_coflow_no_faster_than_tc_and_cleans_up() {
    if !can_run("replay_on_netns_moves_every_coflow_no_faster_than_tc_and_cleans_up") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // Coflow 0: an incast into host 3 (its downlink is the bottleneck); coflow 1: host 2 sends.
    let trace = Trace {
        ports: 4,
        coflows: vec![
            Coflow::new(
                1,
                0.0,
                vec![
                    Flow {
                        src: 0,
                        dst: 3,
                        bytes: 300_000.0,
                    },
                    Flow {
                        src: 1,
                        dst: 3,
                        bytes: 300_000.0,
                    },
                    Flow {
                        src: 2,
                        dst: 3,
                        bytes: 300_000.0,
                    },
                ],
            ),
            Coflow::new(
                2,
                0.05,
                vec![Flow {
                    src: 2,
                    dst: 0,
                    bytes: 200_000.0,
                }],
            ),
        ],
    };
    let rates = vec![30.0 * MBIT, 30.0 * MBIT, 30.0 * MBIT, 20.0 * MBIT];
    let cfg = ReplayConfig {
        scheduler: SchedulerKind::Varys,
        options: SchedOptions::default(),
        nic_bytes_per_s: rates.clone(),
        netns: true,
        mem_limit_bytes: 64 << 20,
        data_dir: None,
        tick: Some(Duration::from_millis(100)),
        non_clairvoyant: false,
        htb: false,
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let out = rt.block_on(replay(&trace, &cfg)).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].fcts_s.len(), 3);
    // 900 kB through host 3's 20 Mbit/s downlink.
    let floor = 0.9 * 900_000.0 / rates[3];
    assert!(out[0].cct_s >= floor, "incast took {} s", out[0].cct_s);
    assert!(out[1].cct_s > 0.0);
    assert_eq!(netns::leftovers(&ours()).unwrap(), Vec::<String>::new());
}

#[test]
fn bad_clusters_are_refused_before_anything_is_made() {
    for (rates, says) in [
        (vec![], "1 to 253 hosts"),
        (vec![1e6; 254], "1 to 253 hosts"),
        (vec![1e6, f64::NAN], "host 1"),
        (vec![10.0], "host 0"),
    ] {
        let e = NetnsCluster::create(&rates).unwrap_err().to_string();
        assert!(e.contains(says), "{e}");
    }
}

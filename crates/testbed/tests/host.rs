//! Entering a host: threads and processes land in its namespace, jumbo MTU is set where asked.
//! These need root and `ip`/`tc`; elsewhere each test says on stderr that it did not run.

use std::sync::Mutex;

use coflowkit_testbed::{self as testbed, ClusterOptions, NetnsCluster};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn can_run(test: &str) -> bool {
    match testbed::available() {
        Ok(()) => true,
        Err(why) => {
            eprintln!("NOT RUN: {test}: {why}");
            false
        }
    }
}

/// `ip -o addr show` output of the namespace the caller is in, run as a process.
fn addrs(cmd: &mut std::process::Command) -> String {
    let out = cmd.args(["-o", "addr", "show"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn threads_and_processes_run_inside_their_host() {
    if !can_run("threads_and_processes_run_inside_their_host") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let net = NetnsCluster::create(&[1e6, 1e6]).unwrap();
    let prefix = net.prefix().to_string();
    for h in 0..2 {
        let ip = net.hosts()[h].ip;
        // A socket bound to the host's address works inside, not outside.
        assert!(std::net::UdpSocket::bind((ip, 0)).is_err());
        let bound = net
            .in_host(h, || std::net::UdpSocket::bind((ip, 0)).map(|_| ()))
            .unwrap();
        assert!(bound.is_ok(), "{bound:?}");
        // A process sees the host's NICs, and only those.
        let inside = addrs(&mut net.command(h, "ip").unwrap());
        assert!(inside.contains(&format!("{ip}/24")), "{inside}");
        let other = net.hosts()[1 - h].ip;
        assert!(!inside.contains(&format!("{other}/24")), "{inside}");
    }
    assert!(net.host_ns(2).is_err());
    net.teardown().unwrap();
    assert_eq!(testbed::leftovers(&prefix).unwrap(), Vec::<String>::new());
}

#[test]
fn jumbo_frames_on_the_data_nics_only() {
    if !can_run("jumbo_frames_on_the_data_nics_only") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    assert!(NetnsCluster::create_with(&[1e6], &ClusterOptions { mtu: Some(10) }).is_err());
    let net = NetnsCluster::create_with(&[1e6, 1e6], &ClusterOptions { mtu: Some(9000) }).unwrap();
    let mtu = |link: &str| {
        std::fs::read_to_string(format!("/sys/class/net/{link}/mtu"))
            .unwrap()
            .trim()
            .to_string()
    };
    let p = net.prefix().to_string();
    assert_eq!(mtu(&format!("{p}h0")), "9000");
    assert_eq!(mtu(net.bridge()), "9000");
    assert_eq!(mtu(&format!("{p}c0")), "1500");
    let inside = net
        .in_host(1, || {
            let out = std::process::Command::new("ip")
                .args(["-o", "link", "show", "eth0"])
                .output()
                .unwrap();
            String::from_utf8(out.stdout).unwrap()
        })
        .unwrap();
    assert!(inside.contains("mtu 9000"), "{inside}");
    // A 8000-byte datagram crosses from host 0 to host 1 unfragmented.
    let dst = net.hosts()[1].ip;
    let rx = net
        .in_host(1, || std::net::UdpSocket::bind((dst, 0)).unwrap())
        .unwrap();
    let to = rx.local_addr().unwrap();
    net.in_host(0, || {
        let tx = std::net::UdpSocket::bind((net.hosts()[0].ip, 0)).unwrap();
        tx.send_to(&[7u8; 8000], to).unwrap();
    })
    .unwrap();
    rx.set_read_timeout(Some(std::time::Duration::from_secs(2)))
        .unwrap();
    let mut buf = [0u8; 9000];
    let (n, _) = rx.recv_from(&mut buf).unwrap();
    assert_eq!(n, 8000);
}

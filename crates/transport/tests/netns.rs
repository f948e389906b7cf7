//! An exchange between ranks in separate network namespaces of the testbed, each NIC shaped by
//! `tc`: byte-exact, and no faster than the shaped links allow. Needs root and `ip`/`tc`;
//! elsewhere the test says on stderr that it did not run.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use coflowkit_testbed::NetnsCluster;
use coflowkit_transport::{Endpoint, EndpointConfig, ExchangeProtocol};

#[test]
fn an_all_to_all_across_shaped_namespaces_is_exact_and_no_faster_than_tc() {
    if let Err(why) = coflowkit_testbed::available() {
        eprintln!("NOT RUN: an_all_to_all_across_shaped_namespaces: {why}");
        return;
    }
    let n = 3;
    let rate_bytes = 2.5e6; // 20 Mbit/s each way
    let net = NetnsCluster::create(&vec![rate_bytes; n]).unwrap();
    // A socket belongs to the namespace it was made in; the endpoint's thread may run anywhere.
    let socks: Vec<UdpSocket> = (0..n)
        .map(|h| {
            let ip = net.hosts()[h].ip;
            net.in_host(h, || UdpSocket::bind((ip, 0)))
                .unwrap()
                .unwrap()
        })
        .collect();
    let peers: Vec<SocketAddr> = socks.iter().map(|s| s.local_addr().unwrap()).collect();
    let eps: Vec<Arc<Endpoint>> = socks
        .into_iter()
        .enumerate()
        .map(|(r, s)| {
            let mut cfg = EndpointConfig::new(r as u32, peers.clone(), 42);
            cfg.resend_timeout = Duration::from_millis(20);
            Arc::new(Endpoint::bind(s, cfg).unwrap())
        })
        .collect();
    let bytes = 300_000usize;
    let msg = |i: usize, j: usize| -> Vec<u8> {
        (0..bytes).map(|k| (k * 31 + i * 7 + j) as u8).collect()
    };
    let proto = ExchangeProtocol::parse("grpf").unwrap();
    let t = Instant::now();
    std::thread::scope(|s| {
        for (i, ep) in eps.iter().enumerate() {
            let (ep, proto, msg) = (ep.clone(), &proto, &msg);
            s.spawn(move || {
                let sends = (0..n)
                    .filter(|&j| j != i)
                    .map(|j| (j as u32, msg(i, j)))
                    .collect();
                let from: Vec<u32> = (0..n as u32).filter(|&j| j != i as u32).collect();
                let got = ep.exchange(1, proto, sends, &from).unwrap();
                for (j, b) in got {
                    assert!(b == msg(j as usize, i), "rank {i}: wrong bytes from {j}");
                }
            });
        }
    });
    let took = t.elapsed().as_secs_f64();
    eprintln!("netns all-to-all: {took:.3} s");
    // Each host sends 600 kB through its uplink at 2.5 MB/s of TCP payload (tc shapes
    // the wire a little faster, and the bucket starts full): at least about 0.2 s.
    let bound = (n - 1) as f64 * bytes as f64 / (rate_bytes * coflowkit_testbed::WIRE_PER_PAYLOAD);
    assert!(
        took > bound * 0.8,
        "{took:.3} s, faster than the shaped links ({bound:.3} s)"
    );
    assert!(took < 10.0, "{took:.3} s");
    let prefix = net.prefix().to_string();
    drop(eps);
    net.teardown().unwrap();
    assert!(coflowkit_testbed::leftovers(&prefix).unwrap().is_empty());
}

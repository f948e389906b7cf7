//! What TLS costs on the data plane: one put and one get of the same bytes through a daemon on
//! loopback, plaintext and TLS (a throwaway CA and certificate made here), NIC pacing set far
//! above what loopback carries so that only the wire protocol and the CPU limit the rate.
//!
//! ```text
//! cargo run --release -p coflowkit-runtime --example tls_cost [MB]
//! ```

use std::time::{Duration, Instant};

use coflowkit_runtime::{
    coordinator, daemon, rpc, Client, ClientConfig, CoflowOptions, CoordinatorConfig, DaemonConfig,
    TlsClient, TlsServer, Token,
};
use coflowkit_sched::SchedulerKind;
use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};

fn pki() -> (TlsClient, TlsServer) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&key, &ca_cert, &ca_key)
        .unwrap();
    (
        TlsClient::from_pem(ca_cert.pem().as_bytes()).unwrap(),
        TlsServer::from_pem(cert.pem().as_bytes(), key.serialize_pem().as_bytes()).unwrap(),
    )
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mb: usize = std::env::args()
        .nth(1)
        .map_or(200, |a| a.parse().expect("MB must be a number"));
    let data: Vec<u8> = (0..mb << 20).map(|i| (i * 31 % 251) as u8).collect();
    let token = Token::new("tls-cost-token").unwrap();
    let local = "127.0.0.1:0".parse().unwrap();
    println!(
        "{:<10} {:>8} {:>12} {:>12}",
        "data plane", "MB", "put MB/s", "get MB/s"
    );
    for tls in [false, true] {
        let (ca, cert) = pki();
        let mut cc = CoordinatorConfig::new(token.clone(), SchedulerKind::Fair);
        let mut dc = DaemonConfig::new(String::new(), token.clone(), 100e9);
        dc.mem_limit_bytes = 2 * data.len() as u64;
        if tls {
            cc.tls = Some(cert.clone());
            dc.tls = Some(cert);
            dc.coordinator_tls = Some(ca.clone());
        }
        let c = coordinator::spawn(cc, local).unwrap();
        dc.coordinator = c.addr().to_string();
        let d = daemon::spawn(dc, local).unwrap();
        let mut cfg =
            ClientConfig::new(&c.addr().to_string(), &d.addr().to_string(), token.clone());
        let tls_ca = tls.then_some(ca);
        if let Some(ca) = &tls_ca {
            cfg = cfg.with_tls(ca.clone());
        }
        // Wait for the daemon's registration.
        for _ in 0..200 {
            let mut r = rpc::connect_with(&cfg.coordinator, &token, tls_ca.as_ref())
                .await
                .unwrap();
            let s = r.status(coflowkit_runtime::proto::Empty {}).await.unwrap();
            if s.into_inner().daemons.iter().any(|d| d.connected) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let client = Client::connect(cfg).await.unwrap();
        let co = client.register(CoflowOptions::default()).await.unwrap();
        let t = Instant::now();
        client.put(co, "x", &data).await.unwrap();
        let put = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let back = client.get(co, "x").await.unwrap();
        let get = t.elapsed().as_secs_f64();
        assert!(back == data, "bytes differ");
        println!(
            "{:<10} {:>8} {:>12.0} {:>12.0}",
            if tls { "TLS" } else { "plaintext" },
            mb,
            mb as f64 / put,
            mb as f64 / get
        );
    }
}

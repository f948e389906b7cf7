//! TLS on both planes: a coordinator and daemons with certificates made here (rcgen) move data
//! end to end; plaintext and wrongly trusting clients are refused cleanly while the servers keep
//! serving.

mod common;

use std::time::Duration;

use coflowkit_runtime::frame::{self, Kind};
use coflowkit_runtime::proto::{
    data_request, DataHello, DataReply, DataRequest, Empty, GetRequest,
};
use coflowkit_runtime::{
    coordinator, daemon, rpc, Client, ClientConfig, CoflowOptions, CoordinatorConfig, DaemonConfig,
    Running, TlsClient, TlsServer, PROTOCOL_VERSION,
};
use coflowkit_sched::SchedulerKind;
use common::{bytes, loopback, token};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};

/// A CA and a server certificate it signed, for `names`, as PEM: (ca, cert, key).
fn pki(names: &[&str]) -> (String, String, String) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "coflowkit test CA");
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        .unwrap()
        .signed_by(&key, &ca_cert, &ca_key)
        .unwrap();
    (ca_cert.pem(), leaf.pem(), key.serialize_pem())
}

struct TlsCluster {
    _coordinator: Running,
    coordinator: String,
    _daemons: Vec<Running>,
    daemons: Vec<String>,
    ca: TlsClient,
}

impl TlsCluster {
    fn start(n: usize) -> TlsCluster {
        let (ca, cert, key) = pki(&["localhost", "127.0.0.1"]);
        let server = TlsServer::from_pem(cert.as_bytes(), key.as_bytes()).unwrap();
        let ca = TlsClient::from_pem(ca.as_bytes()).unwrap();
        let mut cfg = CoordinatorConfig::new(token(), SchedulerKind::Varys);
        cfg.tls = Some(server.clone());
        let c = coordinator::spawn(cfg, loopback()).unwrap();
        let coordinator = c.addr().to_string();
        let mut daemons = Vec::new();
        let mut addrs = Vec::new();
        for _ in 0..n {
            let mut d = DaemonConfig::new(coordinator.clone(), token(), 20e6);
            d.tls = Some(server.clone());
            d.coordinator_tls = Some(ca.clone());
            let d = daemon::spawn(d, loopback()).unwrap();
            addrs.push(d.addr().to_string());
            daemons.push(d);
        }
        TlsCluster {
            _coordinator: c,
            coordinator,
            _daemons: daemons,
            daemons: addrs,
            ca,
        }
    }

    async fn client(&self, i: usize) -> Client {
        Client::connect(
            ClientConfig::new(&self.coordinator, &self.daemons[i], token())
                .with_tls(self.ca.clone()),
        )
        .await
        .unwrap()
    }

    /// Wait until every daemon registered (over TLS) with the coordinator.
    async fn ready(&self) {
        for _ in 0..200 {
            if let Ok(mut c) = rpc::connect_with(&self.coordinator, &token(), Some(&self.ca)).await
            {
                if let Ok(s) = c.status(Empty {}).await {
                    let s = s.into_inner();
                    if s.daemons.iter().filter(|d| d.connected).count() == self.daemons.len() {
                        return;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("daemons did not connect over TLS");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_cluster_moves_data_end_to_end() {
    let cluster = TlsCluster::start(2);
    cluster.ready().await;
    let tx = cluster.client(0).await;
    let rx = cluster.client(1).await;
    let c = tx.register(CoflowOptions::flows(2)).await.unwrap();
    let a = bytes(11, 300_000);
    let b = bytes(12, 1);
    tx.put(c, "a", &a).await.unwrap();
    tx.put(c, "b", &b).await.unwrap();
    let (ga, gb) = tokio::join!(rx.get(c, "a"), rx.get(c, "b"));
    assert_eq!(ga.unwrap(), a);
    assert_eq!(gb.unwrap(), b);
    tx.unregister(c).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plaintext_and_untrusting_clients_are_refused_and_servers_keep_serving() {
    let cluster = TlsCluster::start(1);
    cluster.ready().await;
    let good = cluster.client(0).await;
    let c = good.register(CoflowOptions::flows(1)).await.unwrap();
    let data = bytes(13, 50_000);
    good.put(c, "x", &data).await.unwrap();

    // Control plane, plaintext: the TCP connection opens, the first call fails; no crash.
    let plain = Client::connect(ClientConfig::new(
        &cluster.coordinator,
        &cluster.daemons[0],
        token(),
    ))
    .await;
    let refused = match plain {
        Err(e) => e,
        Ok(p) => p
            .register(CoflowOptions::flows(1))
            .await
            .expect_err("a plaintext client registered with a TLS coordinator"),
    };
    assert!(
        refused.to_string().contains(&cluster.coordinator),
        "{refused}"
    );

    // Control plane, trusting another CA: the certificate is refused.
    let (other_ca, _, _) = pki(&["localhost", "127.0.0.1"]);
    let other = TlsClient::from_pem(other_ca.as_bytes()).unwrap();
    let e = rpc::connect_with(&cluster.coordinator, &token(), Some(&other)).await;
    assert!(
        e.is_err(),
        "a client trusting another CA accepted the coordinator"
    );

    // Data plane, plaintext: the daemon answers with a readable refusal frame.
    let mut sock = tokio::net::TcpStream::connect(&cluster.daemons[0])
        .await
        .unwrap();
    let hello = DataHello {
        protocol_version: PROTOCOL_VERSION,
        token: token().as_str().to_string(),
    };
    frame::write_msg(&mut sock, Kind::Hello, &hello)
        .await
        .unwrap();
    let req = DataRequest {
        coflow: c,
        data_id: "x".into(),
        op: Some(data_request::Op::Get(GetRequest { dst: String::new() })),
    };
    frame::write_msg(&mut sock, Kind::Request, &req)
        .await
        .unwrap();
    let mut buf = Vec::new();
    let reply: DataReply = frame::read_msg(&mut sock, &mut buf, Kind::Reply)
        .await
        .unwrap();
    assert!(reply.error.contains("requires TLS"), "{}", reply.error);

    // Data plane, trusting another CA: the handshake fails with the daemon named.
    let e = coflowkit_runtime::tls::connect_data(&cluster.daemons[0], Some(&other))
        .await
        .err()
        .expect("a client trusting another CA accepted the daemon");
    let msg = e.to_string();
    assert!(
        msg.contains(&cluster.daemons[0]) && msg.contains("TLS"),
        "{msg}"
    );

    // Data plane, garbage instead of a TLS hello: dropped.
    let mut sock = tokio::net::TcpStream::connect(&cluster.daemons[0])
        .await
        .unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    sock.write_all(&[0x16, 3, 1, 0, 5, 1, 2, 3, 4, 5, 6, 7])
        .await
        .unwrap();
    let mut sink = Vec::new();
    let _ = sock.read_to_end(&mut sink).await;

    // Everything still works for the right client.
    assert_eq!(good.get(c, "x").await.unwrap(), data);
    let c2 = good.register(CoflowOptions::flows(1)).await.unwrap();
    good.put(c2, "y", b"still serving").await.unwrap();
    assert_eq!(good.get(c2, "y").await.unwrap(), b"still serving");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_for_another_name_is_refused_unless_that_name_is_expected() {
    // The certificate names only `coflowkit.test`; servers are reached at 127.0.0.1.
    let (ca, cert, key) = pki(&["coflowkit.test"]);
    let server = TlsServer::from_pem(cert.as_bytes(), key.as_bytes()).unwrap();
    let mut cfg = CoordinatorConfig::new(token(), SchedulerKind::Fair);
    cfg.tls = Some(server);
    let c = coordinator::spawn(cfg, loopback()).unwrap();
    let addr = c.addr().to_string();
    let ca = TlsClient::from_pem(ca.as_bytes()).unwrap();
    let e = rpc::connect_with(&addr, &token(), Some(&ca))
        .await
        .expect_err("a certificate for another name was accepted");
    assert!(e.to_string().contains("not valid for name"), "{e}");
    let named = ca.with_domain("coflowkit.test");
    let mut rpc = rpc::connect_with(&addr, &token(), Some(&named))
        .await
        .unwrap();
    assert_eq!(
        rpc.status(Empty {}).await.unwrap().into_inner().scheduler,
        "fair"
    );
}

#[test]
fn mismatched_key_and_missing_files_are_named() {
    let (_, cert, _) = pki(&["localhost"]);
    let (_, _, other_key) = pki(&["localhost"]);
    let e = TlsServer::from_pem(cert.as_bytes(), other_key.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("belong together"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let cert_file = dir.path().join("cert.pem");
    std::fs::write(&cert_file, &cert).unwrap();
    let e = TlsServer::from_files(&cert_file, &dir.path().join("missing-key.pem")).unwrap_err();
    assert!(e.to_string().contains("missing-key.pem"), "{e}");
    let e = TlsServer::from_files(&cert_file, &cert_file).unwrap_err();
    assert!(
        e.to_string().contains("cert.pem") && e.to_string().contains("no private key"),
        "{e}"
    );
}

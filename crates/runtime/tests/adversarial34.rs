//! The daemon and coordinator against the server findings of adversarial pass 34: advertised
//! addresses nobody can reach (C12) and a data dir that is a symbolic link loop or a dangling
//! link (C8).

mod common;

use coflowkit_runtime::proto::RegisterDaemonRequest;
use coflowkit_runtime::PROTOCOL_VERSION;
use coflowkit_runtime::{coordinator, rpc, CoordinatorConfig, DaemonConfig};
use coflowkit_sched::SchedulerKind;
use common::{loopback, token};

/// Addresses the daemon and the coordinator both refuse, each with what the refusal says.
const BAD: [(&str, &str); 12] = [
    ("a:1:2", "IPv6 address in brackets"),
    ("::1:47830", "IPv6 address in brackets"),
    ("[::1:47830", "IPv6 address in brackets"),
    ("[nope]:80", "IPv6 address in brackets"),
    ("127.0.0.1:+80", "digits only"),
    ("127.0.0.1:080x", "digits only"),
    ("999.1.1.1:80", "999.1.1.1 is not an IPv4 address"),
    ("1.2.3:80", "not an IPv4 address"),
    ("-host:80", "not a host name"),
    ("a..b:80", "not a host name"),
    ("[::1]:0", "port 0"),
    ("host:65536", "port 65536"),
];

/// Addresses both take.
const GOOD: [&str; 7] = [
    "10.0.0.7:7401",
    "[::1]:47830",
    "[2001:db8::7]:1",
    "host.example:1",
    "node_3:65535",
    "localhost.:80",
    "a-b.c1:7",
];

fn cfg(advertise: &str) -> DaemonConfig {
    let mut c = DaemonConfig::new("127.0.0.1:1".into(), token(), 1e9);
    c.advertise = advertise.into();
    c
}

/// C12: `--advertise a:1:2`, `127.0.0.1:+80`, `999.1.1.1:80` and a bare `::1:47830` were
/// accepted by the daemon. Now its one parser refuses them, saying why, and every message
/// still says HOST:PORT.
#[test]
fn advertised_addresses_nobody_can_dial_are_refused_by_the_daemon() {
    for (a, says) in BAD {
        let e = cfg(a).validate().unwrap_err().to_string();
        assert!(e.contains(says), "{a:?}: {e}");
        assert!(e.contains("HOST:PORT"), "{a:?}: {e}");
    }
    for a in GOOD {
        cfg(a).validate().unwrap_or_else(|e| panic!("{a}: {e}"));
    }
}

/// C12: the coordinator registered those addresses (`status` listed `127.0.0.1:+80`); its
/// `RegisterDaemon` check is the daemon's parser, refusing with INVALID_ARGUMENT naming `addr`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_coordinator_registers_only_addresses_a_peer_can_dial() {
    let c = coordinator::spawn(
        CoordinatorConfig::new(token(), SchedulerKind::Varys),
        loopback(),
    )
    .unwrap();
    let mut rpc = rpc::connect(&c.addr().to_string(), &token()).await.unwrap();
    let req = |addr: &str| RegisterDaemonRequest {
        protocol_version: PROTOCOL_VERSION,
        addr: addr.into(),
        nic_bytes_per_s: 1e9,
        ..Default::default()
    };
    for (a, says) in BAD {
        let e = rpc.register_daemon(req(a)).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{a}: {e:?}");
        assert!(e.message().starts_with("addr: "), "{a}: {}", e.message());
        assert!(e.message().contains(says), "{a}: {}", e.message());
    }
    for a in GOOD {
        rpc.register_daemon(req(a))
            .await
            .unwrap_or_else(|e| panic!("{a}: {e:?}"));
    }
}

/// C8: a data dir that is a symbolic link loop or a dangling link was refused only after the
/// daemon said it served, as `File exists`. `validate` (run before binding) names the cause.
#[test]
fn data_dirs_that_are_link_loops_or_dangling_links_are_named_before_serving() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n);
    std::os::unix::fs::symlink(p("loop2"), p("loop1")).unwrap();
    std::os::unix::fs::symlink(p("loop1"), p("loop2")).unwrap();
    std::os::unix::fs::symlink("nowhere", p("dangling")).unwrap();
    for (dir, says) in [
        ("loop1", "a symbolic link loop"),
        (
            "dangling",
            "a symbolic link to nowhere, which does not exist (a dangling link)",
        ),
    ] {
        let mut c = cfg("10.0.0.7:7401");
        c.data_dir = Some(p(dir));
        let e = c.validate().unwrap_err().to_string();
        assert!(
            e.contains(&format!("data dir {}: {says}", p(dir).display())),
            "{e}"
        );
    }
    let mut c = cfg("10.0.0.7:7401");
    c.data_dir = Some(p("new"));
    c.validate().unwrap();
}

//! The coordinator under a large or hostile state (adversarial pass of session 29): `Status`
//! answers at any size, what one client may register is bounded (refused with
//! `RESOURCE_EXHAUSTED`, counted in `/metrics`), and an oversized `BroadcastPeers` is refused
//! at once.

mod common;

use coflowkit_runtime::coordinator::state::RegistryLimits;
use coflowkit_runtime::coordinator::status::STATUS_MAX_BYTES;
use coflowkit_runtime::proto::{
    BlockGot, BroadcastPeersRequest, Empty, FlowInfo, FlowStart, PutDone, RegisterCoflowRequest,
    RegisterDaemonRequest, StoredObject,
};
use coflowkit_runtime::{coordinator, rpc, CoordinatorConfig, Running, PROTOCOL_VERSION};
use coflowkit_sched::SchedulerKind;
use common::{loopback, metrics, token};
use prost::Message;

fn start(registry: RegistryLimits) -> Running {
    let mut cfg = CoordinatorConfig::new(token(), SchedulerKind::Varys);
    cfg.registry = registry;
    cfg.metrics = Some(loopback());
    coordinator::spawn(cfg, loopback()).unwrap()
}

fn daemon(addr: &str, flows: Vec<FlowInfo>) -> RegisterDaemonRequest {
    RegisterDaemonRequest {
        protocol_version: PROTOCOL_VERSION,
        addr: addr.into(),
        nic_bytes_per_s: 1e9,
        flows,
        ..Default::default()
    }
}

fn flow(flow: u64, coflow: u64) -> FlowInfo {
    FlowInfo {
        flow,
        coflow,
        data_id: format!("object-{flow}"),
        dst: String::new(),
        size_bytes: 1 << 20,
        ..Default::default()
    }
}

/// 120,000 flows (about 100,000 made the reply pass gRPC's 4 MiB limit and fail with
/// OUT_OF_RANGE), some reporting u64::MAX bytes sent: Status answers, within its bound, and
/// every flow is listed or counted as left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_answers_with_120_thousand_flows() {
    let c = start(RegistryLimits {
        max_coflows: 1 << 20,
        max_flows_per_coflow: 1 << 20,
        max_flows_per_daemon: 1 << 20,
        max_objects_per_coflow: 1 << 20,
        max_objects_per_daemon: 1 << 20,
    });
    let mut rpc = rpc::connect(&c.addr().to_string(), &token()).await.unwrap();
    for d in 0..2u64 {
        let flows = (0..60_000u64)
            .map(|k| FlowInfo {
                sent_bytes: if k % 7 == 0 { u64::MAX } else { k },
                ..flow(k, 1000 + k % 500)
            })
            .collect();
        let req = daemon(&format!("10.7.0.{d}:1"), flows);
        rpc.register_daemon(req).await.unwrap();
    }
    let s = rpc.status(Empty {}).await.unwrap().into_inner();
    assert!(s.encoded_len() <= STATUS_MAX_BYTES, "{}", s.encoded_len());
    let listed: u64 = s.coflows.iter().map(|c| c.flows.len() as u64).sum();
    assert_eq!(listed + s.flows_omitted, 120_000);
    assert_eq!(s.coflows.len() as u64 + s.coflows_omitted, 500);
    assert!(listed > 10_000 && s.flows_omitted > 0, "{listed} listed");
    assert_eq!(s.daemons.len(), 2);
}

/// Past each registry limit a request is refused whole with RESOURCE_EXHAUSTED naming the
/// limit (and its flag), nothing of it recorded, and the refusal counted in /metrics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_limits_refuse_by_name_and_are_counted() {
    let c = start(RegistryLimits {
        max_coflows: 3,
        max_flows_per_coflow: 4,
        max_flows_per_daemon: 6,
        ..Default::default()
    });
    let mut rpc = rpc::connect(&c.addr().to_string(), &token()).await.unwrap();
    rpc.register_daemon(daemon("10.1.0.1:1", vec![]))
        .await
        .unwrap();
    let reg = || RegisterCoflowRequest {
        weight: 1.0,
        clairvoyant: true,
        ..Default::default()
    };
    let a = rpc
        .register_coflow(reg())
        .await
        .unwrap()
        .into_inner()
        .coflow;
    let b = rpc
        .register_coflow(reg())
        .await
        .unwrap()
        .into_inner()
        .coflow;
    let exhausted = |e: tonic::Status, says: &str| {
        assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
        assert!(e.message().contains(says), "{}", e.message());
    };
    let start = |n: u64, coflow: u64| FlowStart {
        daemon: "10.1.0.1:1".into(),
        flow: Some(flow(n, coflow)),
    };
    // Flows per coflow: 4 of `a`, the fifth refused; a restart of a recorded flow is fine.
    for n in 0..4 {
        rpc.start_flow(start(n, a)).await.unwrap();
    }
    rpc.start_flow(start(3, a)).await.unwrap();
    exhausted(
        rpc.start_flow(start(4, a)).await.unwrap_err(),
        "--max-flows-per-coflow",
    );
    // Flows per daemon: 6 in all.
    rpc.start_flow(start(10, b)).await.unwrap();
    rpc.start_flow(start(11, b)).await.unwrap();
    exhausted(
        rpc.start_flow(start(12, b)).await.unwrap_err(),
        "--max-flows-per-daemon",
    );
    // Coflows: the third by registration, then none, whether registered, put or started.
    rpc.register_coflow(reg()).await.unwrap();
    exhausted(
        rpc.register_coflow(reg()).await.unwrap_err(),
        "--max-coflows",
    );
    let put = PutDone {
        daemon: "10.1.0.1:1".into(),
        object: Some(StoredObject {
            coflow: 77,
            data_id: "x".into(),
            size_bytes: 1,
            ..Default::default()
        }),
    };
    exhausted(rpc.report_put(put).await.unwrap_err(), "--max-coflows");
    // A daemon's soft state naming 5 unknown coflows is refused whole.
    let soft = (0..5).map(|k| flow(100 + k, 5000 + k)).collect();
    exhausted(
        rpc.register_daemon(daemon("10.1.0.2:1", soft))
            .await
            .unwrap_err(),
        "--max-coflows",
    );
    let s = rpc.status(Empty {}).await.unwrap().into_inner();
    assert_eq!(s.coflows.len(), 3);
    assert_eq!(s.daemons.len(), 1, "the refused registration left no trace");
    let listed: usize = s.coflows.iter().map(|c| c.flows.len()).sum();
    assert_eq!(listed, 6);
    let m = metrics(c.metrics_addr().unwrap()).await;
    for line in [
        "coflowkit_requests_refused_total{limit=\"coflows\"} 3",
        "coflowkit_requests_refused_total{limit=\"flows_per_coflow\"} 1",
        "coflowkit_requests_refused_total{limit=\"flows_per_daemon\"} 1",
    ] {
        assert!(m.contains(line), "{line} not in\n{m}");
    }
}

/// One BroadcastPeers request of 100,000 block reports is refused at once by name (it used to
/// hold the coordinator for over 10 s), counted, and the coordinator answers on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_broadcast_report_is_refused_at_once() {
    let c = start(RegistryLimits::default());
    let mut rpc = rpc::connect(&c.addr().to_string(), &token()).await.unwrap();
    rpc.register_daemon(daemon("10.1.0.1:1", vec![]))
        .await
        .unwrap();
    let got = (0..100_000)
        .map(|k| BlockGot {
            block: k,
            from: 0,
            secs: 0.1,
        })
        .collect();
    let e = rpc
        .broadcast_peers(BroadcastPeersRequest {
            coflow: 1,
            data_id: "x".into(),
            daemon: "10.1.0.1:1".into(),
            got,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
    assert!(
        e.message().contains("got") && e.message().contains("4096"),
        "{}",
        e.message()
    );
    assert_eq!(
        rpc.status(Empty {})
            .await
            .unwrap()
            .into_inner()
            .daemons
            .len(),
        1
    );
    let m = metrics(c.metrics_addr().unwrap()).await;
    assert!(
        m.contains("coflowkit_requests_refused_total{limit=\"broadcast_got\"} 1"),
        "{m}"
    );
}

/// A progress report of more than `MAX_PROGRESS_PER_REQUEST` flows is refused with
/// INVALID_ARGUMENT naming the bound, and counted; one at the bound is taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_progress_report_is_refused_at_once() {
    use coflowkit_runtime::proto::{progress, Progress};
    use coflowkit_runtime::rpc::MAX_PROGRESS_PER_REQUEST;
    let c = start(RegistryLimits::default());
    let mut rpc = rpc::connect(&c.addr().to_string(), &token()).await.unwrap();
    rpc.register_daemon(daemon("10.1.0.1:1", vec![]))
        .await
        .unwrap();
    let report = |n: usize| Progress {
        daemon: "10.1.0.1:1".into(),
        flows: (0..n as u64)
            .map(|flow| progress::Sent {
                flow,
                sent_bytes: 1,
                done: true,
                failed: false,
            })
            .collect(),
    };
    rpc.report_progress(report(MAX_PROGRESS_PER_REQUEST))
        .await
        .unwrap();
    let e = rpc
        .report_progress(report(MAX_PROGRESS_PER_REQUEST + 1))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
    let says = format!(
        "{} flows in one progress report, at most {MAX_PROGRESS_PER_REQUEST}",
        MAX_PROGRESS_PER_REQUEST + 1
    );
    assert!(e.message().contains(&says), "{}", e.message());
    let m = metrics(c.metrics_addr().unwrap()).await;
    assert!(
        m.contains("coflowkit_requests_refused_total{limit=\"progress_flows\"} 1"),
        "{m}"
    );
}

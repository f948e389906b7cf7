//! DAG dependencies through the real API: `register` with parents, the coordinator's DAG ids in
//! `status`, an unknown parent refused, and a child's get held behind its parent's under Aalo.

mod common;

use std::time::Duration;

use coflowkit_runtime::proto::Empty;
use coflowkit_runtime::{CoflowOptions, Error};
use coflowkit_sched::SchedulerKind;
use common::{bytes, token, Cluster};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parents_join_the_dag_and_the_child_waits_behind_its_parent() {
    // A slow NIC (200 KB/s) so both gets are on the link at once for a while.
    let cluster = Cluster::start(SchedulerKind::Aalo, &[200e3, 50e6]);
    cluster.ready().await;
    let (tx, rx) = (cluster.client(0).await, cluster.client(1).await);
    // The parent is READY (arrives, for the scheduler) only when its get starts, after the
    // child's: FIFO by arrival alone would serve the child first.
    let parent = tx
        .register(CoflowOptions {
            num_flows: 1,
            ..CoflowOptions::non_clairvoyant()
        })
        .await
        .unwrap();
    let child = tx
        .register(CoflowOptions::non_clairvoyant().parents(vec![parent]))
        .await
        .unwrap();
    let e = tx
        .register(CoflowOptions::non_clairvoyant().parents(vec![parent + 1000]))
        .await
        .unwrap_err();
    match &e {
        Error::Rpc { status, .. } => {
            assert_eq!(status.code(), tonic::Code::InvalidArgument);
            assert!(status.message().contains("is unknown"), "{e}");
        }
        other => panic!("expected a refusal, got {other}"),
    }
    let mut rpc = coflowkit_runtime::rpc::connect(&cluster.coordinator_addr.to_string(), &token())
        .await
        .unwrap();
    let status = rpc.status(Empty {}).await.unwrap().into_inner();
    let dag = |id| {
        let c = status.coflows.iter().find(|c| c.id == id).unwrap();
        (c.dag_external, c.dag_internal, c.parents.clone())
    };
    let (p_ext, p_int, _) = dag(parent);
    assert_eq!(p_int, 0);
    assert_eq!(dag(child), (p_ext, 1, vec![parent]));

    // Same queue (Q1), same DAG: the parent's flow takes the link from the child's.
    tx.put(child, "c", &bytes(1, 60_000)).await.unwrap();
    tx.put(parent, "p", &bytes(2, 60_000)).await.unwrap();
    let (r1, r2) = (rx.clone(), rx.clone());
    let (done_tx, mut done) = tokio::sync::mpsc::unbounded_channel();
    let d1 = done_tx.clone();
    let c = tokio::spawn(async move {
        let got = r1.get(child, "c").await.unwrap();
        d1.send("child").unwrap();
        got
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let p = tokio::spawn(async move {
        let got = r2.get(parent, "p").await.unwrap();
        done_tx.send("parent").unwrap();
        got
    });
    assert_eq!(p.await.unwrap(), bytes(2, 60_000));
    assert_eq!(c.await.unwrap(), bytes(1, 60_000));
    assert_eq!(
        done.recv().await,
        Some("parent"),
        "the parent finishes first"
    );
}

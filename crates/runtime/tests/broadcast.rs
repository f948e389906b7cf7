//! `client.broadcast` and `client.get` on many receivers, on loopback: a coordinator acting as
//! Cornet's controller and daemons swapping blocks, each on its own runtime with real sockets.

mod common;

use std::time::Duration;

use coflowkit_runtime::{BroadcastOptions, CoflowOptions};
use coflowkit_sched::SchedulerKind;
use common::{bytes, Cluster};

const NIC: f64 = 40e6;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_receiver_gets_the_broadcast_byte_exact() {
    // Host 0 sends; hosts 1-5 receive at once; host 6 arrives after the source is gone.
    let mut cluster = Cluster::start(SchedulerKind::Fair, &[NIC; 7]);
    cluster.ready().await;
    let sender = cluster.client(0).await;
    let c = sender.register(CoflowOptions::default()).await.unwrap();
    // Not a multiple of the block: the last block is short.
    let data = bytes(11, 3 * (256 << 10) * 4 + 12_345);
    let opts = BroadcastOptions {
        block_bytes: 256 << 10,
        peer_set: 3,
    };
    let n = sender
        .broadcast_with(c, "model", &data, opts)
        .await
        .unwrap();
    assert_eq!(n, data.len() as u64);

    let mut gets = Vec::new();
    for i in 1..=5 {
        let r = cluster.client(i).await;
        gets.push(tokio::spawn(async move { r.get(c, "model").await }));
    }
    for (i, g) in gets.into_iter().enumerate() {
        let got = tokio::time::timeout(Duration::from_secs(60), g)
            .await
            .expect("broadcast finished in time")
            .unwrap()
            .unwrap_or_else(|e| panic!("receiver {}: {e}", i + 1));
        assert!(
            got == data,
            "receiver {}: {} bytes, not the data",
            i + 1,
            got.len()
        );
    }
    // A second get on a receiver is served from its copy; the sender's own get works too.
    assert!(cluster.client(3).await.get(c, "model").await.unwrap() == data);
    assert!(sender.get(c, "model").await.unwrap() == data);

    // Completed receivers stay in the swarm: with the source gone, a late receiver gets the
    // whole data from them.
    cluster.daemons[0].take().unwrap().kill();
    let late = cluster.client(6).await;
    let got = tokio::time::timeout(Duration::from_secs(60), late.get(c, "model"))
        .await
        .expect("the late receiver finished in time")
        .unwrap();
    assert!(got == data, "late receiver: {} bytes", got.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broadcast_whose_source_died_before_any_block_left_fails_clearly() {
    let mut cluster = Cluster::start(SchedulerKind::Fair, &[NIC; 3]);
    cluster.ready().await;
    let sender = cluster.client(0).await;
    let c = sender.register(CoflowOptions::default()).await.unwrap();
    let data = bytes(5, 1 << 20);
    sender.broadcast(c, "x", &data).await.unwrap();
    // Broadcasting the same object twice, or one never put, is refused by name.
    let e = sender
        .broadcast(c, "x", &data)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("`x`"), "{e}");
    cluster.daemons[0].take().unwrap().kill();
    let r = cluster.client(1).await;
    let e = tokio::time::timeout(Duration::from_secs(30), r.get(c, "x"))
        .await
        .expect("failed in time, not hung")
        .unwrap_err()
        .to_string();
    // The controller's verdict, once the death has settled (orchestra's DEATH_GRACE_S).
    assert!(e.contains("held by no live host (dead: [0])"), "{e}");
}

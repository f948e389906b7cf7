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
        ..Default::default()
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_killed_mid_broadcast_leaves_the_others_finishing() {
    // Slow NICs (4 MB/s) so the broadcast of 4 MiB to five receivers lasts a second or more;
    // receiver 2's daemon is killed 0.3 s into it, holding some blocks and asked for others.
    let mut cluster = Cluster::start(SchedulerKind::Fair, &[4e6; 6]);
    cluster.ready().await;
    let sender = cluster.client(0).await;
    let c = sender.register(CoflowOptions::default()).await.unwrap();
    let data = bytes(23, 4 << 20);
    let opts = BroadcastOptions {
        block_bytes: 256 << 10,
        peer_set: 5,
        ..Default::default()
    };
    sender.broadcast_with(c, "m", &data, opts).await.unwrap();
    let mut gets = Vec::new();
    for i in 1..=5 {
        let r = cluster.client(i).await;
        gets.push(tokio::spawn(async move { r.get(c, "m").await }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Mid-broadcast: nobody is done yet (the whole takes well over a second).
    assert!(
        gets.iter().all(|g| !g.is_finished()),
        "the broadcast ended before the kill"
    );
    let t_kill = std::time::Instant::now();
    cluster.daemons[2].take().unwrap().kill();
    for (i, g) in gets.into_iter().enumerate() {
        let h = i + 1;
        let got = tokio::time::timeout(Duration::from_secs(60), g)
            .await
            .unwrap_or_else(|_| panic!("receiver {h} neither finished nor failed in time"))
            .unwrap();
        if h == 2 {
            // Its own daemon is gone: the get fails, it does not hang.
            assert!(got.is_err(), "the killed receiver's get returned data");
            continue;
        }
        let got = got.unwrap_or_else(|e| panic!("receiver {h}: {e}"));
        assert!(
            got == data,
            "receiver {h}: {} bytes, not the data",
            got.len()
        );
    }
    // Every survivor finished within the bound above; report how long after the kill.
    eprintln!("survivors done {:?} after the kill", t_kill.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broadcast_larger_than_a_receivers_memory_bound_is_refused_by_name() {
    // Daemon 1 may hold 1 MiB; the broadcast is 2 MiB. Daemon 2 has the default bound.
    let n = std::sync::atomic::AtomicUsize::new(0);
    let mut cluster = Cluster::start_with(SchedulerKind::Fair, &[NIC; 3], |cfg| {
        if n.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 1 {
            cfg.mem_limit_bytes = 1 << 20;
        }
    });
    cluster.ready().await;
    let sender = cluster.client(0).await;
    let c = sender.register(CoflowOptions::default()).await.unwrap();
    let data = bytes(3, 2 << 20);
    let opts = BroadcastOptions {
        block_bytes: 256 << 10,
        peer_set: 3,
        ..Default::default()
    };
    sender.broadcast_with(c, "big", &data, opts).await.unwrap();
    let small = cluster.client(1).await;
    let e = tokio::time::timeout(Duration::from_secs(30), small.get(c, "big"))
        .await
        .expect("refused in time")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("does not fit") && e.contains("its bound is 1048576 bytes"),
        "{e}"
    );
    let big = cluster.client(2).await;
    let got = tokio::time::timeout(Duration::from_secs(60), big.get(c, "big"))
        .await
        .expect("finished in time")
        .unwrap();
    assert!(got == data);
    drop(cluster.daemons[0].take());
}

/// The coordinator's inter-transfer controller across broadcasts (Orchestra's ITC): a batch
/// broadcast (8 MiB, priority 0) runs; an ad hoc one (4 MiB, priority 1) from the same source
/// to the same receivers starts 0.3 s later. Under strict priority the batch's receivers are
/// held (at their next ask, within a second) and the ad hoc broadcast finishes first; under
/// FIFO the ad hoc one is held until the batch is done and finishes after it. The orders are
/// the controller's doing, not a matter of speed: each policy holds the other broadcast
/// entirely.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_broadcasts_follow_the_inter_transfer_policy() {
    use coflowkit_orchestra::itc::Policy;
    use coflowkit_runtime::CoordinatorConfig;
    // The batch alone needs at least 2.1 s at 4 MB/s; held within 1.3 s, it is not done.
    const SLOW_NIC: f64 = 4e6;
    for policy in [Policy::Priority, Policy::Fifo] {
        let mut config = CoordinatorConfig::new(common::token(), SchedulerKind::Fair);
        config.broadcast_policy = Some(policy);
        let cluster = Cluster::start_configured(config, &[SLOW_NIC; 3], |_| {});
        cluster.ready().await;
        let sender = cluster.client(0).await;
        let c = sender.register(CoflowOptions::default()).await.unwrap();
        let batch = bytes(21, 8 << 20);
        let adhoc = bytes(22, 4 << 20);
        let t0 = tokio::time::Instant::now();
        let mut gets = Vec::new();
        for (name, data, priority) in [("batch", batch, 0), ("adhoc", adhoc, 1)] {
            if priority == 1 {
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            let opts = BroadcastOptions {
                block_bytes: 256 << 10,
                priority,
                ..Default::default()
            };
            sender.broadcast_with(c, name, &data, opts).await.unwrap();
            let data = std::sync::Arc::new(data);
            for i in 1..=2 {
                let (r, want) = (cluster.client(i).await, data.clone());
                gets.push(tokio::spawn(async move {
                    let got = r.get(c, name).await.unwrap();
                    assert!(got == *want, "{name} at host {i}: not the data");
                    (name, t0.elapsed().as_secs_f64())
                }));
            }
        }
        let mut last = std::collections::HashMap::new();
        for g in gets {
            let (name, at) = tokio::time::timeout(Duration::from_secs(60), g)
                .await
                .expect("finished in time")
                .unwrap();
            let e = last.entry(name).or_insert(0.0f64);
            *e = e.max(at);
        }
        let (b, a) = (last["batch"], last["adhoc"]);
        match policy {
            Policy::Priority => assert!(a < b, "priority: ad hoc {a:.2} s, batch {b:.2} s"),
            _ => assert!(a > b, "FIFO: ad hoc {a:.2} s, batch {b:.2} s"),
        }
        eprintln!("{policy:?}: batch done at {b:.2} s, ad hoc at {a:.2} s");
    }
}

/// One inter-transfer controller over a shuffle and a broadcast (Orchestra's ITC, spec §2.0):
/// the coordinator shares each NIC between a coflow's flows (the shuffle: host 0 to hosts 1
/// and 2, 6 MiB each) and a broadcast (host 0 to hosts 1 and 2, 16 MiB), which share host 0's
/// uplink and the receivers' downlinks. The second transfer starts 0.3 s after the first. The
/// shuffle's share is measured in bytes: what its flows moved (the coordinator's per-flow
/// counts) over what the NICs could carry in a window where both run, after the controller
/// had a tick to decide. Its pacing rate is the controller's decision, not a race: a high-
/// priority shuffle gets the whole NIC, a batch one beside a high-priority broadcast almost
/// nothing, and under weighted fair sharing with equal weights half.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shuffle_and_a_broadcast_share_the_nics_as_the_controller_decides() {
    use coflowkit_orchestra::itc::Policy;
    use coflowkit_runtime::CoordinatorConfig;
    const NIC: f64 = 8e6;
    const SHUFFLE: usize = 6 << 20;
    const BCAST: usize = 16 << 20;
    // (policy, shuffle's priority, broadcast's priority, shuffle first, share range). The
    // share is the bytes the flows moved, which fall short of the paced rate when the CPU is
    // contended (0.791 seen beside a release-build run on the other core), so the favoured
    // range starts at 0.65; the held case (0.924 without the shuffles in the ITC) is what
    // tells the controller from a race.
    let cases = [
        (Policy::Priority, 1, 0, false, (0.65, 1.05)),
        (Policy::Priority, 0, 1, true, (0.0, 0.05)),
        (Policy::WeightedFair, 0, 0, false, (0.35, 0.65)),
    ];
    for (policy, sp, bp, shuffle_first, (lo, hi)) in cases {
        let mut config = CoordinatorConfig::new(common::token(), SchedulerKind::Fair);
        config.broadcast_policy = Some(policy);
        let cluster = Cluster::start_configured(config, &[NIC; 3], |_| {});
        cluster.ready().await;
        let sender = cluster.client(0).await;
        let bdata = std::sync::Arc::new(bytes(31, BCAST));
        let sdata = std::sync::Arc::new(bytes(32, SHUFFLE));
        let shuffle = sender
            .register(CoflowOptions {
                priority: sp,
                ..CoflowOptions::flows(2)
            })
            .await
            .unwrap();
        sender.put(shuffle, "s", &sdata).await.unwrap();
        let bc = sender.register(CoflowOptions::default()).await.unwrap();
        let t0 = tokio::time::Instant::now();
        let mut tasks = Vec::new();
        let mut starts = [0.0f64; 2]; // shuffle, broadcast
        for step in 0..2 {
            let is_shuffle = (step == 0) == shuffle_first;
            if step == 1 {
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            starts[usize::from(!is_shuffle)] = t0.elapsed().as_secs_f64();
            if !is_shuffle {
                let opts = BroadcastOptions {
                    block_bytes: 256 << 10,
                    priority: bp,
                    ..Default::default()
                };
                sender.broadcast_with(bc, "b", &bdata, opts).await.unwrap();
            }
            for i in 1..=2 {
                let r = cluster.client(i).await;
                let (c, id, want) = match is_shuffle {
                    true => (shuffle, "s", sdata.clone()),
                    false => (bc, "b", bdata.clone()),
                };
                tasks.push(tokio::spawn(async move {
                    let got = r.get(c, id).await.unwrap();
                    assert!(got == *want, "{id} at host {i}: not the data");
                    (is_shuffle, t0.elapsed().as_secs_f64())
                }));
            }
        }
        // Sample the shuffle's bytes (the coordinator's count of its flows) until both end.
        let mut status = coflowkit_runtime::rpc::connect(
            &cluster.coordinator_addr.to_string(),
            &common::token(),
        )
        .await
        .unwrap();
        let mut samples: Vec<(f64, u64)> = Vec::new();
        while tasks.iter().any(|t| !t.is_finished()) {
            let s = status
                .status(coflowkit_runtime::proto::Empty {})
                .await
                .unwrap()
                .into_inner();
            let sent = (s.coflows.iter())
                .find(|c| c.id == shuffle)
                .map_or(0, |c| c.sent_bytes);
            samples.push((t0.elapsed().as_secs_f64(), sent));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut ends = [0.0f64; 2];
        for t in tasks {
            let (is_shuffle, at) = tokio::time::timeout(Duration::from_secs(60), t)
                .await
                .expect("finished in time")
                .unwrap();
            let e = &mut ends[usize::from(!is_shuffle)];
            *e = e.max(at);
        }
        // Both run from the later start until the earlier end; the shuffle's share changes
        // within a tick (0.1 s) of the later one's start (a broadcast counts from its
        // receivers' first ask, at their gets).
        let from = starts[0].max(starts[1]) + 0.4;
        let to = ends[0].min(ends[1]) - 0.1;
        assert!(
            to - from > 0.4,
            "{policy:?}: overlap too short to measure ({from:.2}-{to:.2} s; ends {ends:?})"
        );
        let at = |t: f64| {
            let i = samples.partition_point(|s| s.0 < t).min(samples.len() - 1);
            samples[i]
        };
        let (a, b) = (at(from), at(to));
        let share = (b.1 - a.1) as f64 / (NIC * (b.0 - a.0));
        eprintln!(
            "{policy:?} shuffle priority {sp}, broadcast {bp}: shuffle share {share:.3} \
             ({:.2}-{:.2} s); shuffle done at {:.2} s, broadcast at {:.2} s",
            a.0, b.0, ends[0], ends[1]
        );
        assert!(
            (lo..=hi).contains(&share),
            "{policy:?}: the shuffle's share of the NIC {share:.3}, expected {lo}-{hi}"
        );
        // The more urgent transfer finishes first.
        if sp > bp {
            assert!(ends[0] < ends[1], "{policy:?}: ends {ends:?}");
        } else if bp > sp {
            assert!(ends[1] < ends[0], "{policy:?}: ends {ends:?}");
        }
        drop(cluster);
    }
}

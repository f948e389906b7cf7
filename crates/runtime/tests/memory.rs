//! The daemon's memory bound without a data dir holds: a put that can never fit is refused at
//! once, a put waiting for memory whose client left or whose coflow is unregistered frees what
//! it holds, and later puts go through.

mod common;

use std::time::Duration;

use coflowkit_runtime::{CoflowOptions, Error};
use coflowkit_sched::SchedulerKind;
use common::{bytes, Cluster};
use tokio::io::AsyncWriteExt;

const BOUND: u64 = 64 * 1024;

fn cluster() -> Cluster {
    Cluster::start_with(SchedulerKind::Fair, &[50e6], |d| {
        d.mem_limit_bytes = BOUND;
        d.limits.idle = Duration::from_millis(600);
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_put_larger_than_the_bound_is_refused_at_once_and_the_daemon_goes_on() {
    let cluster = cluster();
    cluster.ready().await;
    let c = cluster.client(0).await;
    let id = c.register(CoflowOptions::flows(1)).await.unwrap();
    let big = bytes(1, 200_000);
    let e = tokio::time::timeout(Duration::from_secs(3), c.put(id, "big", &big))
        .await
        .expect("the put hung")
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, Error::Remote { .. }) && msg.contains("memory bound of 65536 bytes"),
        "{msg}"
    );
    // The same through a streaming put of unknown size: refused once it outgrows the bound.
    let mut w = c.writer(id, "stream");
    let wrote = async {
        for k in 0..10 {
            w.write_all(&bytes(k, 16 * 1024)).await?;
        }
        Ok::<_, std::io::Error>(())
    };
    let _ = tokio::time::timeout(Duration::from_secs(3), wrote).await;
    let e = tokio::time::timeout(Duration::from_secs(3), w.finish())
        .await
        .expect("the streaming put hung")
        .unwrap_err();
    assert!(e.to_string().contains("memory bound"), "{e}");
    // Nothing is held: a put of nearly the whole bound fits.
    let fits = bytes(2, BOUND as usize - 1000);
    tokio::time::timeout(Duration::from_secs(3), c.put(id, "fits", &fits))
        .await
        .expect("a fitting put hung")
        .unwrap();
    assert_eq!(c.get(id, "fits").await.unwrap(), fits);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_put_waiting_for_memory_is_released_when_its_client_leaves_or_its_coflow_goes() {
    let cluster = cluster();
    cluster.ready().await;
    let c = cluster.client(0).await;
    let held = c.register(CoflowOptions::flows(1)).await.unwrap();
    c.put(held, "a", &bytes(3, 48 * 1024)).await.unwrap();

    // A second put needs more than is free: it waits. Its client then goes away.
    let other = c.register(CoflowOptions::flows(1)).await.unwrap();
    let mut w = c.writer(other, "b");
    let _ = tokio::time::timeout(
        Duration::from_millis(300),
        w.write_all(&bytes(4, 40 * 1024)),
    )
    .await;
    drop(w);
    // Unregistering the first coflow frees its 48 KiB; the abandoned put holds nothing
    // after the idle limit.
    tokio::time::sleep(Duration::from_millis(900)).await;
    c.unregister(held).await.unwrap();
    let fits = bytes(5, BOUND as usize - 1000);
    tokio::time::timeout(Duration::from_secs(3), c.put(other, "c", &fits))
        .await
        .expect("memory was not released")
        .unwrap();

    // A put waiting for memory stops when its coflow is unregistered.
    let third = c.register(CoflowOptions::flows(1)).await.unwrap();
    let mut w = c.writer(third, "d");
    let _ = tokio::time::timeout(
        Duration::from_millis(300),
        w.write_all(&bytes(6, 16 * 1024)),
    )
    .await;
    let t0 = std::time::Instant::now();
    c.unregister(third).await.unwrap();
    let e = tokio::time::timeout(Duration::from_secs(3), w.finish())
        .await
        .expect("the waiting put hung")
        .unwrap_err();
    assert!(t0.elapsed() < Duration::from_secs(3), "{e}");
    c.unregister(other).await.unwrap();
    let again = bytes(7, BOUND as usize - 1000);
    let fresh = c.register(CoflowOptions::flows(1)).await.unwrap();
    tokio::time::timeout(Duration::from_secs(3), c.put(fresh, "e", &again))
        .await
        .expect("memory was not released")
        .unwrap();
}

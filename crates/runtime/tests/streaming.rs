//! Streaming puts (Aalo's `AaloOutputStream`) on real sockets: a get of an object still being
//! written receives its blocks as they are produced, and a put that breaks off fails its gets
//! with the host, coflow and data id.

mod common;

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use coflowkit_runtime::frame::BLOCK_BYTES;
use coflowkit_runtime::proto::LocateRequest;
use coflowkit_runtime::{CoflowOptions, Error};
use coflowkit_sched::SchedulerKind;
use common::{bytes, token, Cluster};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::watch;

/// A sink that announces how many bytes it holds.
struct Tap {
    data: Vec<u8>,
    got: watch::Sender<usize>,
}

impl AsyncWrite for Tap {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.data.extend_from_slice(buf);
        let n = self.data.len();
        self.got.send_replace(n);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Wait until the object can be located (its put has begun).
async fn locatable(cluster: &Cluster, coflow: u64, data_id: &str) {
    let mut rpc = coflowkit_runtime::rpc::connect(&cluster.coordinator_addr.to_string(), &token())
        .await
        .unwrap();
    for _ in 0..400 {
        let req = LocateRequest {
            coflow,
            data_id: data_id.into(),
        };
        if rpc.locate(req).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("`{data_id}` never became locatable");
}

/// Wait until the tap holds `n` bytes; a get that waits for the end of the put never does.
async fn received(got: &mut watch::Receiver<usize>, n: usize, what: &str) {
    tokio::time::timeout(Duration::from_secs(20), got.wait_for(|&g| g >= n))
        .await
        .unwrap_or_else(|_| panic!("the get did not receive {what} while the put went on"))
        .unwrap();
}

/// The producer writes piece k only after the consumer's get has received pieces 0..k: were
/// gets served only after their put completed, this would never finish. The pieces are not
/// block-aligned (7 KB, 20 KB, ...); the last byte count and the CRC of the whole must match.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_receives_blocks_while_the_put_is_still_writing() {
    let cluster = Cluster::start(SchedulerKind::Aalo, &[50e6, 50e6]);
    let (tx, c) = follow_a_put(&cluster).await;
    tx.unregister(c).await.unwrap();
}

/// The same with a memory bound of two blocks and a data dir: the object moves to its spill
/// file while the get follows it, and ends as one `.spill` file that passes recovery's checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_follows_a_put_that_moves_to_disk() {
    let dir = tempfile::tempdir().unwrap();
    let n = std::cell::Cell::new(0);
    let cluster = Cluster::start_with(SchedulerKind::Aalo, &[50e6, 50e6], |cfg| {
        cfg.mem_limit_bytes = 2 * BLOCK_BYTES as u64;
        cfg.data_dir = Some(dir.path().join(format!("d{}", n.get())));
        n.set(n.get() + 1);
    });
    let (tx, c) = follow_a_put(&cluster).await;
    let files = || -> Vec<_> {
        let dir = std::fs::read_dir(dir.path().join("d0")).unwrap();
        dir.map(|e| e.unwrap().path()).collect()
    };
    let f = files();
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].extension().unwrap(), "spill");
    let v = coflowkit_runtime::daemon::spill_file::verify(&f[0]).unwrap();
    assert_eq!((v.coflow, v.data_id.as_str()), (c, "stream"));
    let size: u64 = v.blocks.iter().map(|&(len, _)| len as u64).sum();
    assert_eq!(size, 150_001);
    // Unregistering deletes it (once the daemon hears of it).
    tx.unregister(c).await.unwrap();
    for _ in 0..400 {
        if files().is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the spill file outlived its coflow: {:?}", files());
}

/// A producer writes while a consumer's get follows; returns the producer's client and the
/// coflow (still registered).
async fn follow_a_put(cluster: &Cluster) -> (coflowkit_runtime::Client, u64) {
    cluster.ready().await;
    let (tx, rx) = (cluster.client(0).await, cluster.client(1).await);
    let c = tx.register(CoflowOptions::non_clairvoyant()).await.unwrap();
    let data = bytes(7, 150_001);
    let pieces: Vec<&[u8]> = data.chunks(7_000).collect::<Vec<_>>()[..3]
        .iter()
        .copied()
        .chain(data[21_000..].chunks(20_000))
        .collect();
    assert_eq!(pieces.concat(), data);

    let mut w = tx.writer(c, "stream");
    w.write_all(pieces[0]).await.unwrap();
    w.flush().await.unwrap();
    locatable(cluster, c, "stream").await;
    let (got_tx, mut got) = watch::channel(0);
    let consumer = tokio::spawn(async move {
        let mut tap = Tap {
            data: Vec::new(),
            got: got_tx,
        };
        let n = rx.get_into(c, "stream", &mut tap).await;
        (n, tap.data)
    });
    let mut sent = 0;
    for (k, p) in pieces.iter().enumerate() {
        if k > 0 {
            w.write_all(p).await.unwrap();
            w.flush().await.unwrap();
        }
        sent += p.len();
        received(&mut got, sent, &format!("piece {k}")).await;
    }
    assert!(!consumer.is_finished(), "the get ended before the put did");
    assert_eq!(w.finish().await.unwrap(), data.len() as u64);
    let (n, out) = consumer.await.unwrap();
    assert_eq!(n.unwrap(), data.len() as u64);
    assert_eq!(crc32fast::hash(&out), crc32fast::hash(&data));
    assert_eq!(out, data);
    (tx, c)
}

/// A writer dropped mid-way abandons the put: the get that was following it fails with an
/// error naming the daemon, the coflow and the data id, and the object is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_put_fails_its_streaming_get_clearly() {
    let cluster = Cluster::start(SchedulerKind::Fair, &[50e6, 50e6]);
    cluster.ready().await;
    let (tx, rx) = (cluster.client(0).await, cluster.client(1).await);
    let c = tx.register(CoflowOptions::non_clairvoyant()).await.unwrap();
    let mut w = tx.writer(c, "half");
    w.write_all(&bytes(3, 30_000)).await.unwrap();
    w.flush().await.unwrap();
    locatable(&cluster, c, "half").await;
    let (got_tx, mut got) = watch::channel(0);
    let r = rx.clone();
    let consumer = tokio::spawn(async move {
        let mut tap = Tap {
            data: Vec::new(),
            got: got_tx,
        };
        r.get_into(c, "half", &mut tap).await
    });
    received(&mut got, 30_000, "the first bytes").await;
    drop(w);
    let e = consumer.await.unwrap().unwrap_err();
    match &e {
        Error::Abandoned {
            host,
            coflow,
            data_id,
            got,
            ..
        } => {
            assert_eq!(host, &cluster.daemon_addrs[0]);
            assert_eq!((*coflow, data_id.as_str(), *got), (c, "half", 30_000));
        }
        other => panic!("expected Abandoned, got {other}"),
    }
    let msg = e.to_string();
    assert!(
        msg.contains(&cluster.daemon_addrs[0]) && msg.contains("`half`"),
        "{msg}"
    );
    // Gone: a new get is refused, and the id can be put again.
    let e = rx.get(c, "half").await.unwrap_err();
    assert!(e.to_string().contains("half"), "{e}");
    tx.put(c, "half", b"whole").await.unwrap();
    assert_eq!(rx.get(c, "half").await.unwrap(), b"whole");
}

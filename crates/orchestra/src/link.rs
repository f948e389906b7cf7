//! The peer connection's plumbing, shared by both worlds that swap blocks (the `coflowkit
//! broadcast` nodes and the runtime's daemon swarms): on the asking side a pump (a writer task
//! fed by a channel; what the peer says turned into `Up`/`Peer`/`Down` events for the one task
//! that decides), and on the serving side a writer that paces blocks and holds each block's
//! send slot until it is written, plus the forwarder of the server's new blocks (`Have`).
//! Also a node's connection to its controller (JSON lines), for both kinds of node.

use std::future::Future;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{broadcast, mpsc, OwnedSemaphorePermit};
use tokio::task::JoinHandle;

use crate::pace::Pacer;
use crate::wire::{read_msg, write_msg, Msg};

/// What the pump of the connection to `host` reports.
#[derive(Debug)]
pub enum LinkEvent {
    /// Connected: messages sent here go to the peer, in order.
    Up {
        host: u32,
        tx: mpsc::UnboundedSender<Msg>,
    },
    Peer {
        host: u32,
        msg: Msg,
    },
    /// The connection failed to open or ended (always the last event of a pump).
    Down {
        host: u32,
    },
}

/// Run the connection to `host` that `open` makes (returning its read and write halves once
/// any handshake is done): `Up`, then each message read as `Peer`, and `Down` however it ends.
/// Stops early, quietly, when nobody listens to `ev` any more. The error is `open`'s or the
/// read's, for the caller's log.
pub async fn pump<R, W, E, F>(
    host: u32,
    open: F,
    ev: &mpsc::UnboundedSender<E>,
) -> Result<(), String>
where
    F: Future<Output = Result<(R, W), String>>,
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
    E: From<LinkEvent>,
{
    let res = run(host, open, ev).await;
    let _ = ev.send(LinkEvent::Down { host }.into());
    res
}

async fn run<R, W, E, F>(host: u32, open: F, ev: &mpsc::UnboundedSender<E>) -> Result<(), String>
where
    F: Future<Output = Result<(R, W), String>>,
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
    E: From<LinkEvent>,
{
    let (mut r, mut w) = open.await?;
    let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
    let writer = tokio::spawn(async move {
        while let Some(m) = rx.recv().await {
            if write_msg(&mut w, &m, None).await.is_err() || w.flush().await.is_err() {
                break;
            }
        }
    });
    let _stop = AbortOnDrop(writer);
    if ev.send(LinkEvent::Up { host, tx }.into()).is_err() {
        return Ok(());
    }
    while let Some(msg) = read_msg(&mut r).await.map_err(|e| e.to_string())? {
        if ev.send(LinkEvent::Peer { host, msg }.into()).is_err() {
            break;
        }
    }
    Ok(())
}

/// A message of the serving side and the send slot it holds until written (blocks only).
pub type Outgoing = (Msg, Option<OwnedSemaphorePermit>);

/// The serving side's writer: each message in turn, blocks paced by `pacer` (the host's
/// uplink), `sent(bytes)` after each block, the send slot released once the block is out.
pub fn spawn_writer<W>(
    mut w: W,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
    pacer: Option<Arc<Pacer>>,
    mut sent: impl FnMut(usize) + Send + 'static,
) -> JoinHandle<std::io::Result<()>>
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        while let Some((m, permit)) = rx.recv().await {
            let block = matches!(m, Msg::Block { .. });
            let p = pacer.as_deref().filter(|_| block);
            write_msg(&mut w, &m, p).await?;
            w.flush().await?;
            if let Msg::Block { data, .. } = &m {
                sent(data.len());
            }
            drop(permit);
        }
        Ok(())
    })
}

/// Tell the peer what the server holds (`HaveMap` now, then `Have` for each new block; a
/// fresh `HaveMap` when it fell behind). `sub` must be subscribed before the map is taken so
/// no block falls between them: the caller subscribes, this takes the map.
pub fn spawn_haves(
    mut sub: broadcast::Receiver<u32>,
    tx: mpsc::UnboundedSender<Outgoing>,
    have_map: impl Fn() -> Vec<u8> + Send + 'static,
) -> JoinHandle<()> {
    let _ = tx.send((Msg::HaveMap { have: have_map() }, None));
    tokio::spawn(async move {
        loop {
            let m = match sub.recv().await {
                Ok(b) => Msg::Have { block: b },
                Err(broadcast::error::RecvError::Lagged(_)) => Msg::HaveMap { have: have_map() },
                Err(broadcast::error::RecvError::Closed) => break,
            };
            if tx.send((m, None)).is_err() {
                break;
            }
        }
    })
}

/// Aborts the task when dropped (a pump's writer outlives no connection).
pub struct AbortOnDrop<T>(pub JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A node's side of the controller connection (`coflowkit broadcast` and `coflowkit transfers`
/// nodes alike): connected with no delay, a data listener bound on `env.bind`, and a writer
/// task sending each message queued on the returned sender as one JSON line. The caller says
/// hello (with the listener's address) and reads the controller's lines.
pub async fn controller_connection<M>(
    env: &crate::node::NodeEnv,
) -> Result<ControllerConnection<M>, crate::OrchestraError>
where
    M: serde::Serialize + Send + 'static,
{
    use crate::error::io;
    use tokio::io::AsyncBufReadExt;
    let ctl = tokio::net::TcpStream::connect(&env.controller)
        .await
        .map_err(io(format!(
            "host {}: connecting to the controller {}",
            env.host, env.controller
        )))?;
    let _ = ctl.set_nodelay(true);
    let (rd, mut wr) = ctl.into_split();
    let listener = tokio::net::TcpListener::bind((env.bind, 0))
        .await
        .map_err(io(format!("host {}: listening on {}", env.host, env.bind)))?;
    let addr = listener.local_addr().map_err(io("listener address"))?;
    let (tx, mut out) = mpsc::unbounded_channel::<M>();
    tokio::spawn(async move {
        while let Some(m) = out.recv().await {
            let mut line = serde_json::to_string(&m).expect("control messages serialise");
            line.push('\n');
            if wr.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
    });
    Ok(ControllerConnection {
        lines: tokio::io::BufReader::new(rd).lines(),
        listener,
        addr,
        tx,
    })
}

/// What [`controller_connection`] opened.
pub struct ControllerConnection<M> {
    /// The controller's lines.
    pub lines: tokio::io::Lines<tokio::io::BufReader<tokio::net::tcp::OwnedReadHalf>>,
    /// The node's data listener and its address.
    pub listener: tokio::net::TcpListener,
    pub addr: std::net::SocketAddr,
    /// Messages to the controller.
    pub tx: mpsc::UnboundedSender<M>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both halves over an in-memory pipe: the pump says Up, relays what the server's writer
    /// and have forwarder send in order, and says Down when the server goes.
    #[tokio::test]
    async fn pump_and_server_writer_talk_over_a_pipe() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (ev_tx, mut ev) = mpsc::unbounded_channel::<LinkEvent>();
        let open = async move { Ok::<_, String>(tokio::io::split(client)) };
        let p = tokio::spawn(async move { pump(7, open, &ev_tx).await });
        let (mut sr, sw) = tokio::io::split(server);
        let (tx, rx) = mpsc::unbounded_channel::<Outgoing>();
        let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let s2 = sent.clone();
        let writer = spawn_writer(sw, rx, None, move |n| {
            s2.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        });
        let (btx, _) = broadcast::channel(4);
        let haves = spawn_haves(btx.subscribe(), tx.clone(), || vec![1, 0]);
        let Some(LinkEvent::Up {
            host: 7,
            tx: to_server,
        }) = ev.recv().await
        else {
            panic!("no Up first")
        };
        to_server
            .send(Msg::Get {
                block: 1,
                wait: false,
            })
            .unwrap();
        assert_eq!(
            read_msg(&mut sr).await.unwrap(),
            Some(Msg::Get {
                block: 1,
                wait: false
            })
        );
        btx.send(1).unwrap();
        let data = Arc::new(vec![9u8; 100]);
        // The block goes after the Have (the forwarder's task sends it first).
        let mut got = Vec::new();
        for _ in 0..2 {
            match ev.recv().await {
                Some(LinkEvent::Peer { host: 7, msg }) => got.push(msg),
                e => panic!("{e:?}"),
            }
        }
        assert_eq!(
            got,
            [Msg::HaveMap { have: vec![1, 0] }, Msg::Have { block: 1 }]
        );
        tx.send((
            Msg::Block {
                block: 1,
                data: data.clone(),
            },
            None,
        ))
        .unwrap();
        match ev.recv().await {
            Some(LinkEvent::Peer { msg, .. }) => assert_eq!(msg, Msg::Block { block: 1, data }),
            e => panic!("{e:?}"),
        }
        haves.abort();
        drop(tx);
        writer.await.unwrap().unwrap();
        assert_eq!(sent.load(std::sync::atomic::Ordering::Relaxed), 100);
        drop(sr);
        assert!(matches!(ev.recv().await, Some(LinkEvent::Down { host: 7 })));
        p.await.unwrap().unwrap();
    }
}

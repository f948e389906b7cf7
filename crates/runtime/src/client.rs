//! The coflow client API (Varys Table 5.1): `register`, `put`, `get`, `unregister`.
//!
//! A driver registers a coflow and hands its id to the tasks; senders `put` their data to the
//! daemon of their own host (time-decoupled: they may exit right after), receivers `get` it, and
//! the scheduler decides at what rate each get is served. Every block carries a CRC-32 computed
//! here at `put` and checked here at `get`.
//!
//! ```no_run
//! use coflowkit_runtime::{Client, ClientConfig, CoflowOptions, Token};
//! # async fn demo() -> Result<(), coflowkit_runtime::Error> {
//! let token = Token::new("a-shared-secret")?;
//! // This host's daemon listens on 10.0.0.1:7401; the coordinator on 10.0.0.9:7400.
//! let client = Client::connect(ClientConfig::new("10.0.0.9:7400", "10.0.0.1:7401", token)).await?;
//! let coflow = client.register(CoflowOptions::flows(2)).await?;      // driver
//! client.put(coflow, "m0-r0", b"partition for reducer 0").await?;    // mapper 0
//! client.put(coflow, "m0-r1", b"partition for reducer 1").await?;
//! let bytes = client.get(coflow, "m0-r0").await?;                    // reducer 0 (any host)
//! assert_eq!(bytes, b"partition for reducer 0");
//! client.unregister(coflow).await?;                                  // driver, when all are done
//! # Ok(()) }
//! ```
//!
//! Non-clairvoyant use (Aalo): register with [`CoflowOptions::non_clairvoyant`]; the scheduler
//! then never sees flow sizes, only the bytes the daemons report every Δ. Data may be streamed
//! ([`Client::writer`], Aalo's `AaloOutputStream`): gets receive it while it is produced.
//!
//! Dependencies (Aalo §6.6): a coflow registered with [`CoflowOptions::parents`] joins its
//! parents' DAG; Aalo schedules the DAG as one entity and the child behind its parents when
//! they contend. Parents must be registered first.

use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{
    AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter, ReadHalf, WriteHalf,
};

mod broadcast;
mod vector;

pub use broadcast::BroadcastOptions;
pub use vector::HostDemand;

use crate::auth::{Token, PROTOCOL_VERSION};
use crate::error::{Error, Result};
use crate::frame::{self, Chunk, FrameError, Kind, BLOCK_BYTES};
use crate::proto::{
    data_request, CoflowRef, DataHello, DataReply, DataRequest, GetRequest, LocateRequest,
    PutRequest, RegisterCoflowRequest,
};
use crate::rpc::{self, Client as Rpc};
use crate::tls::{self, DataStream, TlsClient};

/// A coflow's id, unique across coordinator restarts.
pub type CoflowId = u64;

/// Where this client's coordinator and host daemon are.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub coordinator: String,
    /// Data address of the daemon on this host: puts go there, and gets name it as their
    /// receiving host (whose downlink the scheduler accounts for).
    pub local_daemon: String,
    pub token: Token,
    /// Talk TLS to the coordinator and the daemons, trusting this CA (`None` = plaintext).
    pub tls: Option<TlsClient>,
}

impl ClientConfig {
    pub fn new(coordinator: &str, local_daemon: &str, token: Token) -> Self {
        ClientConfig {
            coordinator: coordinator.to_string(),
            local_daemon: local_daemon.to_string(),
            token,
            tls: None,
        }
    }

    /// Use TLS on both planes.
    pub fn with_tls(mut self, tls: TlsClient) -> Self {
        self.tls = Some(tls);
        self
    }
}

/// Options of `register` (Varys's key-value options).
#[derive(Debug, Clone, Default)]
pub struct CoflowOptions {
    /// Varys's `numFlows`: the coflow is scheduled once this many gets have started (0 = at once).
    pub num_flows: u32,
    pub deadline: Option<Duration>,
    pub parents: Vec<CoflowId>,
    pub non_clairvoyant: bool,
    pub weight: f64,
    pub name: String,
    /// Its class under the coordinator's inter-transfer controller
    /// (`CoordinatorConfig::broadcast_policy`), which shares each NIC between this coflow's
    /// flows and the broadcasts: larger is more urgent (0 = the lowest).
    pub priority: u32,
}

impl CoflowOptions {
    /// A coflow that is READY after `n` gets.
    pub fn flows(n: u32) -> Self {
        CoflowOptions {
            num_flows: n,
            ..Default::default()
        }
    }

    /// Aalo's mode: no flow count, sizes hidden from the scheduler.
    pub fn non_clairvoyant() -> Self {
        CoflowOptions {
            non_clairvoyant: true,
            ..Default::default()
        }
    }

    pub fn deadline(mut self, d: Duration) -> Self {
        self.deadline = Some(d);
        self
    }

    pub fn parents(mut self, p: Vec<CoflowId>) -> Self {
        self.parents = p;
        self
    }

    pub fn name(mut self, n: &str) -> Self {
        self.name = n.to_string();
        self
    }
}

/// A connection to the coordinator plus the address of this host's daemon. Cheap to clone.
#[derive(Clone)]
pub struct Client {
    rpc: Rpc,
    cfg: ClientConfig,
}

impl Client {
    pub async fn connect(cfg: ClientConfig) -> Result<Client> {
        let rpc = rpc::connect_with(&cfg.coordinator, &cfg.token, cfg.tls.as_ref()).await?;
        Ok(Client { rpc, cfg })
    }

    /// Register a coflow; returns its id.
    pub async fn register(&self, opts: CoflowOptions) -> Result<CoflowId> {
        let r = self
            .rpc
            .clone()
            .register_coflow(RegisterCoflowRequest {
                num_flows: opts.num_flows,
                deadline_s: opts.deadline.map_or(0.0, |d| d.as_secs_f64()),
                parents: opts.parents,
                clairvoyant: !opts.non_clairvoyant,
                weight: opts.weight,
                name: opts.name,
                priority: opts.priority,
            })
            .await
            .map_err(|s| Error::rpc(&self.cfg.coordinator, s))?;
        Ok(r.into_inner().coflow)
    }

    /// The coflow is complete: its data may be dropped everywhere.
    pub async fn unregister(&self, coflow: CoflowId) -> Result<()> {
        self.rpc
            .clone()
            .unregister_coflow(CoflowRef { coflow })
            .await
            .map_err(|s| Error::rpc(&self.cfg.coordinator, s))?;
        Ok(())
    }

    /// Store `bytes` as `data_id` of `coflow` on this host's daemon.
    pub async fn put(&self, coflow: CoflowId, data_id: &str, bytes: &[u8]) -> Result<u64> {
        (self.put_blocks(coflow, data_id, bytes, bytes.len() as u64, None)).await
    }

    /// Store a file's content.
    pub async fn put_file(&self, coflow: CoflowId, data_id: &str, path: &Path) -> Result<u64> {
        let f = tokio::fs::File::open(path)
            .await
            .map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
        let hint = f.metadata().await.map_or(0, |m| m.len());
        self.put_blocks(coflow, data_id, f, hint, None).await
    }

    /// Store everything `reader` yields (size need not be known in advance). Gets of the
    /// object are served while it streams in, as blocks arrive.
    pub async fn put_stream<R: AsyncRead + Unpin>(
        &self,
        coflow: CoflowId,
        data_id: &str,
        reader: R,
    ) -> Result<u64> {
        self.put_blocks(coflow, data_id, reader, 0, None).await
    }

    /// A streaming put (Aalo's `AaloOutputStream`): write the object's bytes over time with
    /// [`tokio::io::AsyncWriteExt`]; each 16 KiB block goes to the daemon as soon as it is
    /// full and is served at once to gets of the object already waiting for it (no barrier
    /// between producing and sending). End with [`CoflowWriter::finish`], which returns the
    /// size; a writer dropped unfinished abandons the put, and those gets fail with
    /// [`Error::Abandoned`]. Non-clairvoyant schedulers (aalo, fair) schedule the gets from
    /// the bytes sent; clairvoyant ones hold them until the put is complete and its size known.
    ///
    /// ```no_run
    /// use coflowkit_runtime::{Client, CoflowOptions};
    /// use tokio::io::AsyncWriteExt;
    /// # async fn demo(client: Client) -> Result<(), Box<dyn std::error::Error>> {
    /// let coflow = client.register(CoflowOptions::non_clairvoyant()).await?;
    /// let mut out = client.writer(coflow, "m0-r0");                  // mapper 0, reducer 0
    /// for record in ["a,1\n", "b,2\n"] {
    ///     out.write_all(record.as_bytes()).await?;                   // as the mapper produces
    /// }
    /// let bytes = out.finish().await?;
    /// // Meanwhile, on the reducer: client.get(coflow, "m0-r0") receives the blocks as they come.
    /// # let _ = bytes; Ok(()) }
    /// ```
    pub fn writer(&self, coflow: CoflowId, data_id: &str) -> CoflowWriter {
        let (rx, tx) = tokio::io::simplex(2 * BLOCK_BYTES);
        let committed = Arc::new(AtomicBool::new(false));
        let (client, id, flag) = (self.clone(), data_id.to_string(), committed.clone());
        let task =
            tokio::spawn(async move { client.put_blocks(coflow, &id, rx, 0, Some(flag)).await });
        CoflowWriter {
            pipe: Some(tx),
            committed,
            task: Some(task),
        }
    }

    /// The put itself. With `committed`, the reader's end completes the object only if the
    /// flag was set (a [`CoflowWriter`] finished); otherwise the connection is dropped without
    /// an end, which abandons the put. `size_hint` (0 = unknown) lets the daemon refuse a put
    /// it could never hold before any byte is sent.
    async fn put_blocks<R: AsyncRead + Unpin>(
        &self,
        coflow: CoflowId,
        data_id: &str,
        mut reader: R,
        size_hint: u64,
        committed: Option<Arc<AtomicBool>>,
    ) -> Result<u64> {
        let host = self.cfg.local_daemon.clone();
        let peer = |msg: String| Error::Protocol {
            peer: host.clone(),
            msg,
        };
        let (mut r, mut w) = self
            .open(
                &host,
                DataRequest {
                    coflow,
                    data_id: data_id.to_string(),
                    op: Some(data_request::Op::Put(PutRequest { size_hint })),
                },
            )
            .await?;
        let mut rbuf = Vec::new();
        let ack: DataReply = frame::read_msg(&mut r, &mut rbuf, Kind::Reply)
            .await
            .map_err(|e| peer(e.to_string()))?;
        if !ack.error.is_empty() {
            return Err(Error::Remote {
                peer: host.clone(),
                msg: ack.error,
            });
        }
        // The daemon's reply may come early (it refuses a put it cannot hold): read it
        // beside the writes, so that its reason, not a broken pipe, is what the caller sees.
        let mut reply = tokio::spawn(async move {
            frame::read_msg::<_, DataReply>(&mut r, &mut rbuf, Kind::Reply)
                .await
                .map_err(|e| e.to_string())
        });
        // Ends it with the put, however the put ends (a CoflowWriter dropped mid-way drops
        // this future): a live read half would keep the connection, and the put, open.
        let _stop_reply = AbortOnDrop(reply.abort_handle());
        let refused =
            |reply: std::result::Result<std::result::Result<DataReply, String>, _>| match reply {
                Ok(Ok(r)) if !r.error.is_empty() => Some(Error::Remote {
                    peer: host.clone(),
                    msg: r.error,
                }),
                _ => None,
            };
        let mut buf = vec![0u8; BLOCK_BYTES];
        let mut total = 0u64;
        let io = |e| Error::io(format!("putting `{data_id}` to daemon {host}"), e);
        loop {
            // Whatever the reader has (up to a block) leaves at once: a get of a streaming
            // put sees bytes as they are produced, not when a block fills.
            let n = reader
                .read(&mut buf)
                .await
                .map_err(|e| Error::io(format!("reading the data of `{data_id}`"), e))?;
            if n == 0 {
                break;
            }
            if reply.is_finished() {
                let r = (&mut reply).await;
                return Err(
                    refused(r).unwrap_or_else(|| peer("replied before the end of the put".into()))
                );
            }
            let sent = async {
                frame::write_block(&mut w, crc32fast::hash(&buf[..n]), &buf[..n]).await?;
                w.flush().await
            };
            if let Err(e) = sent.await {
                let r = tokio::time::timeout(Duration::from_secs(2), &mut reply).await;
                return Err(r.ok().and_then(refused).unwrap_or_else(|| io(e)));
            }
            total += n as u64;
        }
        if committed.is_some_and(|c| !c.load(Ordering::Acquire)) {
            return Err(Error::io(
                format!("putting `{data_id}` to daemon {host}"),
                std::io::Error::other("the writer was dropped before finish: put abandoned"),
            ));
        }
        frame::write_end(&mut w, total).await.map_err(io)?;
        let reply = reply
            .await
            .map_err(|e| peer(format!("reading the reply: {e}")))?
            .map_err(peer)?;
        if !reply.error.is_empty() {
            return Err(Error::Remote {
                peer: host.clone(),
                msg: reply.error,
            });
        }
        Ok(total)
    }

    /// Fetch `data_id` of `coflow` into memory.
    pub async fn get(&self, coflow: CoflowId, data_id: &str) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.get_into(coflow, data_id, &mut out).await?;
        Ok(out)
    }

    /// Fetch `data_id` of `coflow` into `sink` (every block verified); returns the bytes.
    pub async fn get_into<W: AsyncWrite + Unpin>(
        &self,
        coflow: CoflowId,
        data_id: &str,
        mut sink: W,
    ) -> Result<u64> {
        // Where a get's time goes (logged at debug): the locate RPC, the data connection up to
        // the daemon's reply, the bytes. Small coflows' real CCTs are mostly these fixed costs.
        let t0 = std::time::Instant::now();
        let loc = self
            .rpc
            .clone()
            .locate(LocateRequest {
                coflow,
                data_id: data_id.to_string(),
            })
            .await
            .map_err(|s| Error::rpc(&self.cfg.coordinator, s))?
            .into_inner();
        let t_loc = t0.elapsed().as_secs_f64() * 1e3;
        // A broadcast is fetched by this host's daemon from the swarm (client/broadcast.rs).
        let (host, op) = match loc.broadcast {
            true => broadcast::get_op(&self.cfg),
            false => (
                loc.daemon,
                data_request::Op::Get(GetRequest {
                    dst: self.cfg.local_daemon.clone(),
                }),
            ),
        };
        let (mut r, _w) = self
            .open(
                &host,
                DataRequest {
                    coflow,
                    data_id: data_id.to_string(),
                    op: Some(op),
                },
            )
            .await?;
        let mut buf = Vec::new();
        let reply: DataReply = frame::read_msg(&mut r, &mut buf, Kind::Reply)
            .await
            .map_err(|e| Error::Protocol {
                peer: host.clone(),
                msg: e.to_string(),
            })?;
        if !reply.error.is_empty() {
            return Err(Error::Remote {
                peer: host,
                msg: reply.error,
            });
        }
        let t_reply = t0.elapsed().as_secs_f64() * 1e3;
        // A streaming get (the put is still coming in) learns the size from the end frame.
        let size = (!reply.streaming).then_some(reply.size_bytes);
        let failed = |got: u64, why: String| Error::DaemonFailed {
            host: host.clone(),
            coflow,
            data_id: data_id.to_string(),
            got,
            size,
            why,
        };
        let mut got = 0u64;
        let mut block = 0u64;
        loop {
            match frame::read_chunk(&mut r, &mut buf).await {
                Ok(Chunk::Block) => {
                    sink.write_all(&buf[4..])
                        .await
                        .map_err(|e| Error::io(format!("writing `{data_id}`"), e))?;
                    got += (buf.len() - 4) as u64;
                    block += 1;
                }
                Ok(Chunk::End(total)) if total == got && size.is_none_or(|s| s == total) => break,
                Ok(Chunk::Refused(why)) => {
                    return Err(Error::Abandoned {
                        host,
                        coflow,
                        data_id: data_id.to_string(),
                        got,
                        why,
                    })
                }
                Ok(Chunk::End(total)) => {
                    return Err(failed(got, format!("the end frame says {total} bytes")))
                }
                Err(FrameError::Checksum) => {
                    return Err(Error::Checksum {
                        host,
                        coflow,
                        data_id: data_id.to_string(),
                        block,
                    })
                }
                Err(FrameError::Io(e)) => return Err(failed(got, e.to_string())),
                Err(e) => return Err(failed(got, e.to_string())),
            }
        }
        sink.flush()
            .await
            .map_err(|e| Error::io(format!("writing `{data_id}`"), e))?;
        tracing::debug!(
            coflow,
            bytes = got,
            locate_ms = t_loc,
            reply_ms = t_reply,
            total_ms = t0.elapsed().as_secs_f64() * 1e3,
            "got"
        );
        Ok(got)
    }

    /// Open a data connection to a daemon and send the hello and the request.
    async fn open(
        &self,
        host: &str,
        req: DataRequest,
    ) -> Result<(
        BufReader<ReadHalf<DataStream>>,
        BufWriter<WriteHalf<DataStream>>,
    )> {
        let sock = tls::connect_data(host, self.cfg.tls.as_ref()).await?;
        let (r, w) = tokio::io::split(sock);
        let mut w = BufWriter::with_capacity(2 * BLOCK_BYTES, w);
        let io = |e| Error::io(format!("talking to daemon {host}"), e);
        frame::write_msg(
            &mut w,
            Kind::Hello,
            &DataHello {
                protocol_version: PROTOCOL_VERSION,
                token: self.cfg.token.as_str().to_string(),
            },
        )
        .await
        .map_err(io)?;
        frame::write_msg(&mut w, Kind::Request, &req)
            .await
            .map_err(io)?;
        Ok((BufReader::new(r), w))
    }
}

/// A streaming put, from [`Client::writer`]: an [`AsyncWrite`] whose bytes reach gets of the
/// object while it is still being written.
pub struct CoflowWriter {
    pipe: Option<tokio::io::WriteHalf<tokio::io::SimplexStream>>,
    committed: Arc<AtomicBool>,
    task: Option<tokio::task::JoinHandle<Result<u64>>>,
}

impl CoflowWriter {
    /// Complete the object: flush the last block and the end, wait for the daemon to store
    /// it. Returns the object's size.
    pub async fn finish(mut self) -> Result<u64> {
        self.committed.store(true, Ordering::Release);
        if let Some(mut p) = self.pipe.take() {
            // The put task may have failed already (its error is the one to report).
            let _ = p.shutdown().await;
        }
        let task = self.task.take().expect("finish runs once");
        task.await
            .map_err(|e| Error::io("the put task", std::io::Error::other(e)))?
    }

    fn pipe(&mut self) -> Pin<&mut tokio::io::WriteHalf<tokio::io::SimplexStream>> {
        Pin::new(self.pipe.as_mut().expect("open until finish"))
    }
}

impl AsyncWrite for CoflowWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.pipe().poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.pipe().poll_flush(cx)
    }

    /// Ends the byte stream, but only [`CoflowWriter::finish`] completes the object.
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.pipe().poll_shutdown(cx)
    }
}

impl Drop for CoflowWriter {
    fn drop(&mut self) {
        // Unfinished: stop the put task, which drops its connection without an end frame;
        // the daemon abandons the put. (Dropping the pipe alone does not end it: the two
        // halves of a simplex share the stream.)
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

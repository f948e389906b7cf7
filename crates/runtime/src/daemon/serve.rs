//! The daemon's data plane: authenticated puts into the store and paced, checksummed gets out
//! of it, one TCP (or TLS) connection per request.

use std::os::fd::RawFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use coflowkit_testbed::htb;
use tokio::io::{AsyncWriteExt, BufReader, BufWriter};

use super::builder::{Builder, PushError};
use super::store::Fetch;
use super::{link, Daemon};
use crate::auth::PROTOCOL_VERSION;
use crate::frame::{self, Chunk, FrameError, Kind};
use crate::pacer::Pacer;
use crate::proto::{data_request, DataHello, DataReply, DataRequest, FlowInfo, StoredObject};
use crate::tls::DataStream;

/// A client must say hello and ask within this time.
const HANDSHAKE: Duration = Duration::from_secs(10);
/// Longest data id accepted (bytes).
const MAX_DATA_ID: usize = 512;

/// `fd` is the connection's socket (it outlives this function's use of it), to put a get in
/// its coflow's htb class.
pub async fn connection(d: Arc<Daemon>, sock: DataStream, peer: String, fd: RawFd) {
    let (r, w) = tokio::io::split(sock);
    let mut r = BufReader::new(r);
    let mut w = BufWriter::with_capacity(2 * frame::BLOCK_BYTES, w);
    let mut buf = Vec::new();
    let req = tokio::time::timeout(HANDSHAKE, handshake(&d, &mut r, &mut buf)).await;
    let req = match req {
        Ok(Ok(req)) => req,
        Ok(Err(msg)) => {
            tracing::debug!(%peer, "rejected: {msg}");
            let _ = refuse(&mut w, msg).await;
            return;
        }
        Err(_) => {
            let _ = refuse(&mut w, "handshake timed out".into()).await;
            return;
        }
    };
    let res = match req.op {
        Some(data_request::Op::Put(p)) => {
            let (coflow, id) = (req.coflow, req.data_id);
            put(&d, coflow, id, p.size_hint, &mut r, &mut w, &mut buf).await
        }
        Some(data_request::Op::Get(g)) => {
            if d.cfg.htb.is_some() {
                set_priority(fd, htb::priority_of(htb::minor_of(req.coflow)));
            }
            get(&d, req.coflow, req.data_id, g.dst, &mut w).await
        }
        // A broadcast's source host holds the object: served as a plain get.
        Some(data_request::Op::BroadcastGet(_))
            if d.store.get(req.coflow, &req.data_id).is_some() =>
        {
            let dst = d.cfg.advertise.clone();
            get(&d, req.coflow, req.data_id, dst, &mut w).await
        }
        Some(data_request::Op::BroadcastGet(_)) => {
            super::swarm::get(&d, req.coflow, req.data_id, &mut w).await
        }
        Some(data_request::Op::Swap(s)) => {
            super::swarm::swap(&d, req.coflow, req.data_id, s, r, w).await
        }
        None => refuse(&mut w, "request has no operation".into()).await,
    };
    if let Err(e) = res {
        tracing::debug!(%peer, "connection ended: {e}");
    }
}

/// `SO_PRIORITY`: htb puts the socket's packets in the class it names. A failure leaves
/// them in the default class (logged).
fn set_priority(fd: RawFd, priority: u32) {
    let v = priority as libc::c_int;
    // SAFETY: fd is an open socket for the connection's lifetime; the option is an int.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PRIORITY,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        tracing::warn!(
            "SO_PRIORITY {priority:#x}: {}",
            std::io::Error::last_os_error()
        );
    }
}

async fn handshake<R: tokio::io::AsyncRead + Unpin>(
    d: &Daemon,
    r: &mut R,
    buf: &mut Vec<u8>,
) -> Result<DataRequest, String> {
    let hello: DataHello = frame::read_msg(r, buf, Kind::Hello)
        .await
        .map_err(|e| format!("bad hello: {e}"))?;
    if hello.protocol_version != PROTOCOL_VERSION {
        return Err(format!(
            "protocol version {} not supported (this daemon speaks {PROTOCOL_VERSION})",
            hello.protocol_version
        ));
    }
    if !d.cfg.token.matches(&hello.token) {
        return Err("unauthenticated: missing or wrong token".into());
    }
    let req: DataRequest = frame::read_msg(r, buf, Kind::Request)
        .await
        .map_err(|e| format!("bad request: {e}"))?;
    if req.data_id.len() > MAX_DATA_ID {
        return Err(format!("data id longer than {MAX_DATA_ID} bytes"));
    }
    Ok(req)
}

async fn refuse<W: tokio::io::AsyncWrite + Unpin>(w: &mut W, error: String) -> std::io::Result<()> {
    frame::write_msg(
        w,
        Kind::Reply,
        &DataReply {
            error,
            ..Default::default()
        },
    )
    .await
}

async fn put<R, W>(
    d: &Arc<Daemon>,
    coflow: u64,
    data_id: String,
    size_hint: u64,
    r: &mut R,
    w: &mut W,
    buf: &mut Vec<u8>,
) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    // A put that can never fit is refused before it holds anything.
    if d.store.memory_only() && size_hint > d.store.mem_limit() {
        let why = format!(
            "the put of coflow {coflow} data `{data_id}` ({size_hint} bytes) is larger than \
             daemon {}'s memory bound of {} bytes, and it has no data dir to spill to",
            d.cfg.advertise,
            d.store.mem_limit()
        );
        tracing::warn!("{why}");
        return refuse(w, why).await;
    }
    let idle = d.cfg.limits.idle;
    let mut b = match d.store.begin(coflow, &data_id) {
        Ok(b) => b,
        Err(e) => return refuse(w, e).await,
    };
    frame::write_msg(w, Kind::Reply, &DataReply::default()).await?;
    // Visible (locatable) while it streams in: gets are served as blocks arrive.
    link::report_put(
        d,
        StoredObject {
            coflow,
            data_id: data_id.clone(),
            pending: true,
            ..Default::default()
        },
    )
    .await;
    let at = |b: &Builder| {
        format!(
            "the put of coflow {coflow} data `{data_id}` on daemon {} broke off after {} bytes",
            d.cfg.advertise,
            b.size()
        )
    };
    let obj = b.object();
    let total = loop {
        // A putter that goes silent must not hold memory forever, nor a put whose coflow is
        // unregistered.
        let chunk = tokio::select! {
            c = tokio::time::timeout(idle, frame::read_chunk(r, buf)) => c,
            _ = obj.cancelled() => {
                let why = format!("{}: its coflow was unregistered", at(&b));
                abandon(d, &mut b, why.clone()).await;
                return refuse(w, why).await;
            }
        };
        let Ok(chunk) = chunk else {
            let why = format!("{}: no data for {idle:?}", at(&b));
            abandon(d, &mut b, why.clone()).await;
            return refuse(w, why).await;
        };
        match chunk {
            Ok(Chunk::Block) => {
                let crc = u32::from_be_bytes(buf[..4].try_into().expect("checked"));
                // Waiting for memory ends too: at the idle limit (a client that left is not
                // noticed while the daemon does not read) or when the coflow is unregistered.
                let pushed = tokio::select! {
                    p = tokio::time::timeout(idle, b.push(crc, &buf[4..])) => p,
                    _ = obj.cancelled() => {
                        let why = format!("{}: its coflow was unregistered", at(&b));
                        abandon(d, &mut b, why.clone()).await;
                        return refuse(w, why).await;
                    }
                };
                let refused = match pushed {
                    Ok(Ok(())) => None,
                    Err(_) => Some(format!("waited {idle:?} for memory")),
                    Ok(Err(PushError::TooLarge { limit })) => Some(format!(
                        "it is larger than the daemon's memory bound of {limit} bytes, \
                         and the daemon has no data dir to spill to"
                    )),
                    Ok(Err(PushError::Io(e))) => {
                        let why = format!("{}: storing: {e}", at(&b));
                        abandon(d, &mut b, why).await;
                        return Err(e);
                    }
                };
                if let Some(reason) = refused {
                    let why = format!("{}: {reason}", at(&b));
                    tracing::warn!("{why}");
                    abandon(d, &mut b, why.clone()).await;
                    return refuse(w, why).await;
                }
            }
            Ok(Chunk::End(total)) => break total,
            Ok(Chunk::Refused(msg)) => {
                let why = format!("{}: the client gave up: {msg}", at(&b));
                abandon(d, &mut b, why.clone()).await;
                return refuse(w, why).await;
            }
            Err(FrameError::Io(e)) => {
                let why = format!("{}: {e}", at(&b));
                abandon(d, &mut b, why).await;
                return Err(e);
            }
            Err(e) => {
                let why = format!("{}: {e}", at(&b));
                abandon(d, &mut b, why.clone()).await;
                return refuse(w, why).await;
            }
        }
    };
    if b.size() != total {
        let why = format!(
            "{}: its end says {total} bytes, {} arrived",
            at(&b),
            b.size()
        );
        abandon(d, &mut b, why.clone()).await;
        return refuse(w, why).await;
    }
    let stored = match b.finish().await {
        Ok(o) => o,
        Err(e) => {
            report_abandoned(d, coflow, &data_id).await;
            return refuse(w, e).await;
        }
    };
    link::report_put(d, stored.clone()).await;
    tracing::debug!(coflow, data_id, bytes = total, "stored");
    frame::write_msg(
        w,
        Kind::Reply,
        &DataReply {
            error: String::new(),
            size_bytes: stored.size_bytes,
            streaming: false,
        },
    )
    .await
}

/// The put broke off: readers get `why`, the coordinator forgets the object.
async fn abandon(d: &Daemon, b: &mut Builder, why: String) {
    tracing::debug!("{why}");
    let rec = b.abandon(why);
    link::report_put(d, rec).await;
}

async fn report_abandoned(d: &Daemon, coflow: u64, data_id: &str) {
    let rec = StoredObject {
        coflow,
        data_id: data_id.to_string(),
        abandoned: true,
        ..Default::default()
    };
    link::report_put(d, rec).await;
}

async fn get<W: tokio::io::AsyncWrite + Unpin>(
    d: &Arc<Daemon>,
    coflow: u64,
    data_id: String,
    dst: String,
    w: &mut W,
) -> std::io::Result<()> {
    let Some(obj) = d.store.get(coflow, &data_id) else {
        return refuse(
            w,
            format!(
                "daemon {} has no data `{data_id}` of coflow {coflow}",
                d.cfg.advertise
            ),
        )
        .await;
    };
    // A put still streaming in: the size is known only at its end.
    let size = obj.size();
    frame::write_msg(
        w,
        Kind::Reply,
        &DataReply {
            error: String::new(),
            size_bytes: size.unwrap_or(0),
            streaming: size.is_none(),
        },
    )
    .await?;
    let info = FlowInfo {
        flow: 0,
        coflow,
        data_id: data_id.clone(),
        dst,
        size_bytes: size.unwrap_or(0),
        sent_bytes: 0,
        size_pending: size.is_none(),
    };
    let (id, sent, rate) = d.flows.start(info.clone());
    link::report_start(d, FlowInfo { flow: id, ..info }).await;
    let mut pacer = Pacer::new(rate);
    // How long the flow waited for its first rate (logged at debug with the flow's time).
    let t0 = std::time::Instant::now();
    let mut first_block_ms = None;
    let mut block = Vec::with_capacity(frame::BLOCK_BYTES);
    let mut spill = None;
    let res: std::io::Result<()> = async {
        let mut total = 0u64;
        for i in 0.. {
            let crc = match obj.read_block(i, &mut block, &mut spill).await {
                Ok(crc) => crc,
                Err(Fetch::End) => break,
                Err(Fetch::Io(e)) => return Err(e),
                Err(Fetch::Abandoned(why)) => {
                    refuse(w, why.clone()).await?;
                    return Err(std::io::Error::other(why));
                }
            };
            if !pacer.take(block.len()).await {
                return Err(std::io::Error::other("flow cancelled"));
            }
            if first_block_ms.is_none() {
                first_block_ms = Some(t0.elapsed().as_secs_f64() * 1e3);
            }
            frame::write_block(w, crc, &block).await?;
            w.flush().await?;
            sent.fetch_add(block.len() as u64, Ordering::Relaxed);
            total += block.len() as u64;
        }
        frame::write_end(w, total).await?;
        tracing::debug!(
            coflow,
            bytes = total,
            first_block_ms = first_block_ms.unwrap_or(0.0),
            total_ms = t0.elapsed().as_secs_f64() * 1e3,
            "flow served"
        );
        Ok(())
    }
    .await;
    d.flows.end(id, res.is_err());
    d.link.report_now.notify_one();
    res
}

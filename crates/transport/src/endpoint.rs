//! The endpoint of one rank: one UDP socket and one background I/O thread ([`crate::driver`])
//! that drives the protocol's sans-IO nodes; callers block in [`Endpoint::exchange`].

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::batch::Waker;
use crate::config::{EndpointConfig, ExchangeProtocol};
use crate::driver::{Driver, Start};
use crate::error::TransportError;
use crate::stats::{Counters, EndpointStats};

/// What the callers and the I/O thread share.
pub(crate) struct Inner {
    pub counters: Counters,
    pub waker: Waker,
    pub closing: AtomicBool,
    /// Operations the I/O thread still holds (answered early or not): `linger` waits for them.
    pub held: AtomicUsize,
}

/// One rank's transport. `Send + Sync`: exchanges with different operation ids may run from
/// different threads at once.
pub struct Endpoint {
    inner: Arc<Inner>,
    cmds: mpsc::Sender<Start>,
    thread: Mutex<Option<JoinHandle<()>>>,
    rank: u32,
    size: u32,
    local: SocketAddr,
    /// Loss recovery's period and the periods after which a silent peer is dead: `linger`
    /// waits on their scale.
    resend_timeout: std::time::Duration,
    dead_after: u32,
}

impl Endpoint {
    /// Take over `socket` (bound to this rank's address in `cfg.peers`) and start the I/O
    /// thread.
    pub fn bind(socket: UdpSocket, cfg: EndpointConfig) -> Result<Endpoint, TransportError> {
        cfg.validate().map_err(TransportError::Config)?;
        socket.set_nonblocking(true)?;
        set_buffers(&socket, cfg.socket_buffer);
        let local = socket.local_addr()?;
        let inner = Arc::new(Inner {
            counters: Counters::default(),
            waker: Waker::new()?,
            closing: AtomicBool::new(false),
            held: AtomicUsize::new(0),
        });
        let (tx, rx) = mpsc::channel();
        let (rank, size) = (cfg.rank, cfg.peers.len() as u32);
        let (resend_timeout, dead_after) = (cfg.resend_timeout, cfg.dead_after);
        let driver = Driver::new(cfg, inner.clone(), socket, rx);
        let thread = std::thread::Builder::new()
            .name(format!("ck-udp-{rank}"))
            .spawn(move || driver.run())?;
        Ok(Endpoint {
            inner,
            cmds: tx,
            thread: Mutex::new(Some(thread)),
            rank,
            size,
            local,
            resend_timeout,
            dead_after,
        })
    }

    /// One operation: send each (rank, bytes) and receive one message from each rank of
    /// `recv_from` under `protocol`; the received messages in `recv_from`'s order. Blocks the
    /// calling thread until done; calls with other operation ids run at the same time. An
    /// operation id is used once per endpoint. A message to this rank itself is handed over
    /// locally.
    pub fn exchange(
        &self,
        op: u64,
        protocol: &ExchangeProtocol,
        sends: Vec<(u32, Vec<u8>)>,
        recv_from: &[u32],
    ) -> Result<Vec<(u32, Vec<u8>)>, TransportError> {
        let (reply, answer) = mpsc::sync_channel(1);
        let start = Start {
            op,
            protocol: protocol.clone(),
            sends,
            recv_from: recv_from.to_vec(),
            reply,
        };
        self.cmds
            .send(start)
            .map_err(|_| TransportError::Closed(String::new()))?;
        self.inner.waker.wake();
        answer
            .recv()
            .map_err(|_| TransportError::Closed(String::new()))?
    }

    pub fn stats(&self) -> EndpointStats {
        self.inner.counters.snapshot()
    }

    pub fn rank(&self) -> u32 {
        self.rank
    }

    pub fn size(&self) -> u32 {
        self.size
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Stop the I/O thread and close the socket; operations still running fail with
    /// `Closed`. Dropping the endpoint does the same.
    /// Before a process that is done exits: keep answering until the peers are quiet. A peer
    /// whose last ACK from us was lost probes once per loss-recovery period and would declare
    /// us dead if nobody answered (thesis §3.5: the application re-sends ACKs of completed
    /// operations, so it must still be there); and an exchange answered before its peers
    /// ACKed ([`crate::ReturnWhen::Sent`]) may still owe them retransmissions. Returns once no
    /// operation is held and no datagram arrived for three periods, or after `dead_after`
    /// periods at most (by then such a peer has given up).
    pub fn linger(&self) {
        let quiet = self.resend_timeout * 3;
        let give_up = std::time::Instant::now() + self.resend_timeout * self.dead_after;
        let mut seen = self.stats().packets_received;
        while std::time::Instant::now() < give_up {
            std::thread::sleep(quiet);
            let now = self.stats().packets_received;
            if now == seen && self.inner.held.load(Ordering::Acquire) == 0 {
                return;
            }
            seen = now;
        }
    }

    pub fn close(&self) {
        self.inner.closing.store(true, Ordering::Release);
        self.inner.waker.wake();
        let thread = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(t) = thread {
            let _ = t.join();
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.close();
    }
}

/// Socket buffers of `bytes` each way: above the system's limit when allowed (root), else as
/// much as the limit lets. A short buffer only costs drops, which the protocol recovers.
fn set_buffers(sock: &UdpSocket, bytes: usize) {
    let v = bytes.min(i32::MAX as usize) as libc::c_int;
    for (force, plain) in [
        (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF),
        (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF),
    ] {
        for opt in [force, plain] {
            // SAFETY: setsockopt reads one c_int from a local for the socket we own.
            let rc = unsafe {
                libc::setsockopt(
                    sock.as_raw_fd(),
                    libc::SOL_SOCKET,
                    opt,
                    &v as *const libc::c_int as *const libc::c_void,
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
            if rc == 0 {
                break;
            }
        }
    }
}

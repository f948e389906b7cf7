//! The endpoint of one rank: one UDP socket and the engine ([`crate::driver`]) that drives the
//! protocol's sans-IO nodes. A caller of [`Endpoint::exchange`] runs the engine itself until its
//! operation is answered (no hand-off to another thread on the way in or out: on a host with
//! more ranks than cores each hand-off is a context switch on the critical path); a
//! background thread runs it whenever no caller does (late ACKs, retransmissions of operations
//! answered early, lingering). Calls from several threads share the engine: whoever holds it
//! serves every operation.

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::thread::JoinHandle;

use crate::batch::Waker;
use crate::config::{EndpointConfig, ExchangeProtocol};
use crate::driver::{Driver, Outcome, Start, Wait};
use crate::error::TransportError;
use crate::stats::{Counters, EndpointStats};

/// What the callers and the I/O thread share.
pub(crate) struct Inner {
    pub counters: Counters,
    pub waker: Waker,
    pub closing: AtomicBool,
    /// A caller (not the background thread) holds the engine.
    pub caller_drives: AtomicBool,
    /// Operations the I/O thread still holds (answered early or not): `linger` waits for them.
    pub held: AtomicUsize,
}

/// One rank's transport. `Send + Sync`: exchanges with different operation ids may run from
/// different threads at once.
pub struct Endpoint {
    inner: Arc<Inner>,
    driver: Arc<Mutex<Driver>>,
    cmds: mpsc::Sender<Start>,
    thread: Mutex<Option<JoinHandle<()>>>,
    rank: u32,
    size: u32,
    local: SocketAddr,
    /// Loss recovery's period and the periods after which a silent peer is dead: `linger`
    /// waits on their scale.
    resend_timeout: std::time::Duration,
    dead_after: u32,
    spin: std::time::Duration,
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
            caller_drives: AtomicBool::new(false),
        });
        let (tx, rx) = mpsc::channel();
        let (rank, size) = (cfg.rank, cfg.peers.len() as u32);
        let (resend_timeout, dead_after, spin) = (cfg.resend_timeout, cfg.dead_after, cfg.spin);
        let driver = Arc::new(Mutex::new(Driver::new(
            cfg,
            inner.clone(),
            Arc::new(socket),
            rx,
        )));
        let bg = (driver.clone(), inner.clone());
        let thread = std::thread::Builder::new()
            .name(format!("ck-udp-{rank}"))
            .spawn(move || background(&bg.0, &bg.1))?;
        Ok(Endpoint {
            inner,
            driver,
            cmds: tx,
            thread: Mutex::new(Some(thread)),
            rank,
            size,
            local,
            resend_timeout,
            dead_after,
            spin,
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
        set_timer_slack();
        loop {
            if let Ok(outcome) = answer.try_recv() {
                return outcome;
            }
            let engine = match self.driver.try_lock() {
                Ok(g) => g,
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
                Err(TryLockError::WouldBlock)
                    if self.inner.caller_drives.load(Ordering::Acquire) =>
                {
                    // Another caller drives (and serves our operation too) until its own is
                    // answered, which may take long: wake it to take our call, and return as
                    // soon as ours is answered rather than wait for the engine (waiting for it
                    // could chain threads of different ranks into a cycle). If it lets go
                    // first, try to take over.
                    self.inner.waker.wake();
                    match answer.recv_timeout(std::time::Duration::from_millis(1)) {
                        Ok(outcome) => return outcome,
                        Err(mpsc::RecvTimeoutError::Timeout) => continue,
                        Err(mpsc::RecvTimeoutError::Disconnected) => {
                            return Err(TransportError::Closed(String::new()))
                        }
                    }
                }
                // The background thread, for one turn at most, or a caller that took the
                // engine an instant ago and is about to say so: never block on the engine
                // here (that caller may drive until its own operation ends).
                Err(TryLockError::WouldBlock) => {
                    std::thread::yield_now();
                    continue;
                }
            };
            return self.drive(engine, &answer);
        }
    }

    /// Run the engine until `answer` holds this caller's outcome.
    fn drive(
        &self,
        mut engine: MutexGuard<'_, Driver>,
        answer: &mpsc::Receiver<Outcome>,
    ) -> Outcome {
        self.inner.caller_drives.store(true, Ordering::Release);
        let mut spin_until = None;
        let outcome = loop {
            if let Ok(outcome) = answer.try_recv() {
                break outcome;
            }
            let w = engine.turn();
            if let Ok(outcome) = answer.try_recv() {
                break outcome;
            }
            if let (Wait::Sleep { .. }, false) = (w, self.spin.is_zero()) {
                let now = std::time::Instant::now();
                let until = *spin_until.get_or_insert(now + self.spin);
                if now < until {
                    std::hint::spin_loop();
                    continue;
                }
            }
            spin_until = None;
            if let Err(e) = engine.wait(w) {
                engine.fail_all(&format!(": {e}"));
            }
        };
        self.inner.caller_drives.store(false, Ordering::Release);
        outcome
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

/// The engine, whoever panicked while holding it (its state stays consistent between turns).
fn lock(m: &Mutex<Driver>) -> MutexGuard<'_, Driver> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sleeps to the next pacing token and timer are precise to the microsecond: the default 50 us
/// of timer slack would stretch every gap between paced bursts. Per thread: the background
/// thread sets it once, a caller's thread on its first exchange.
fn set_timer_slack() {
    thread_local! {
        static SET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    SET.with(|s| {
        if !s.replace(true) {
            // SAFETY: prctl with PR_SET_TIMERSLACK takes one integer and affects this thread.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        }
    });
}

/// The background thread: runs the engine whenever no caller holds it, and sleeps without
/// holding it (so a caller can take over at once) until the endpoint closes.
fn background(driver: &Mutex<Driver>, inner: &Inner) {
    set_timer_slack();
    let (sleeper, lazy) = {
        let d = lock(driver);
        (d.sleeper(), d.lazy_ns())
    };
    loop {
        let (w, urgent) = {
            let mut d = lock(driver);
            let w = d.turn();
            (w, d.urgent())
        };
        if inner.closing.load(Ordering::Acquire) {
            // The turn saw it too (or the next caller's will): everything is answered.
            lock(driver).turn();
            return;
        }
        // Datagrams wake this thread only while a caller waits for an answer nobody else is
        // working on; otherwise it looks every `lazy` ns, so a rank whose callers have moved
        // on is not woken (a context switch, on a host with more ranks than cores) by every
        // ACK of an operation answered early.
        let r = if urgent {
            sleeper.wait(w)
        } else {
            sleeper.wait_lazy(w, lazy)
        };
        if let Err(e) = r {
            lock(driver).fail_all(&format!(": {e}"));
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

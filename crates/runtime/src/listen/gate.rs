//! The accept loop: errors back off and continue, connections over a limit are closed at once.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpStream};

use super::stats::ListenStats;
use super::Limits;

/// Longest pause after a failed accept.
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// Warnings of one kind are logged at most this often (the counters count every one).
const WARN_EVERY: Duration = Duration::from_secs(5);
/// Most connections closed in one go when out of descriptors.
const SHED_MAX: usize = 4096;

/// One listener's admission: its limits, who is connected, and its counters.
pub struct Gate {
    what: &'static str,
    limits: Limits,
    stats: Arc<ListenStats>,
    state: Mutex<GateState>,
    /// A descriptor held in reserve: out of descriptors, it is given up to accept and close
    /// the connections waiting in the backlog, which would otherwise wait there unanswered
    /// (a client of the same process could wait for ever on a server that cannot accept).
    spare: Mutex<Option<OwnedFd>>,
}

#[derive(Default)]
struct GateState {
    open: usize,
    per_peer: HashMap<IpAddr, usize>,
    warned: HashMap<&'static str, (Instant, u64)>,
}

/// One admitted connection; dropping it frees its place.
pub struct Permit {
    gate: Arc<Gate>,
    ip: IpAddr,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut s = self.gate.lock();
        s.open = s.open.saturating_sub(1);
        if let Some(n) = s.per_peer.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                s.per_peer.remove(&self.ip);
            }
        }
        self.gate.stats.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Errors that concern one connection only (the next accept may well succeed at once).
fn per_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    )
}

/// EMFILE or ENFILE: the process or the system has no descriptor left.
fn out_of_descriptors(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE))
}

/// The reserve descriptor (none if even that cannot be had now; taken again at the next
/// shedding).
fn spare_descriptor() -> Option<OwnedFd> {
    std::fs::File::open("/dev/null").ok().map(OwnedFd::from)
}

/// Whether a connection waits in `l`'s backlog now.
fn waiting(l: &TcpListener) -> bool {
    let mut pfd = libc::pollfd {
        fd: l.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call; no wait.
    unsafe { libc::poll(&mut pfd, 1, 0) > 0 }
}

impl Gate {
    pub fn new(what: &'static str, limits: Limits, stats: Arc<ListenStats>) -> Arc<Gate> {
        Arc::new(Gate {
            what,
            limits,
            stats,
            state: Mutex::new(GateState::default()),
            spare: Mutex::new(spare_descriptor()),
        })
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn stats(&self) -> &Arc<ListenStats> {
        &self.stats
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The next admitted connection. Never fails: a failed accept (out of descriptors, out of
    /// memory, ...) is counted, warned about and retried after a growing pause.
    pub async fn accept(self: &Arc<Self>, l: &TcpListener) -> (TcpStream, SocketAddr, Permit) {
        let mut backoff = Duration::from_millis(5);
        loop {
            match l.accept().await {
                Ok((sock, peer)) => {
                    backoff = Duration::from_millis(5);
                    if let Some(p) = self.admit(peer.ip()) {
                        return (sock, peer, p);
                    }
                    // Closed at once: dropping the socket.
                }
                Err(e) if per_connection(&e) => {}
                Err(e) => {
                    ListenStats::bump(&self.stats.accept_errors);
                    self.warn(
                        "accept",
                        format_args!(
                            "{}: accepting a connection failed: {e}; retrying in {backoff:?}",
                            self.what
                        ),
                    );
                    if out_of_descriptors(&e) {
                        self.shed(l, &e).await;
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }

    /// Out of descriptors: give up the spare one, accept and close every connection waiting
    /// (each client sees its connection closed at once instead of waiting unanswered), then
    /// keep a descriptor as the spare again. Each connection is shut down on the wire but its
    /// descriptor kept as the spare until the next one is accepted: a descriptor freed by a
    /// close could be taken by another thread (another listener's accept) before this one
    /// takes its spare back, leaving it none.
    async fn shed(&self, l: &TcpListener, cause: &io::Error) {
        let taken = self.spare.lock().unwrap_or_else(|p| p.into_inner()).take();
        // Without one (lost to another thread), a descriptor may have come free since.
        let mut held = taken.or_else(spare_descriptor);
        let mut closed = 0u64;
        let mut last = None;
        for _ in 0..SHED_MAX {
            if !waiting(l) {
                break;
            }
            drop(held.take());
            // Polls the accept once: the waiting connection, or none.
            match tokio::time::timeout(Duration::ZERO, l.accept()).await {
                Ok(Ok((sock, peer))) => {
                    if let Ok(s) = sock.into_std() {
                        let _ = s.shutdown(std::net::Shutdown::Both);
                        held = Some(OwnedFd::from(s));
                    }
                    closed += 1;
                    last = Some(peer);
                }
                Ok(Err(e)) if per_connection(&e) => {}
                _ => break,
            }
        }
        *self.spare.lock().unwrap_or_else(|p| p.into_inner()) = held.or_else(spare_descriptor);
        if let Some(peer) = last {
            self.stats
                .refused_descriptors
                .fetch_add(closed, Ordering::Relaxed);
            self.warn(
                "descriptors",
                format_args!(
                    "{}: out of file descriptors ({cause}): closed {closed} waiting connection(s) at once, the last from {peer}",
                    self.what
                ),
            );
        }
    }

    /// A place for a connection from `ip`, or `None` (counted and warned) over a limit.
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<Permit> {
        let mut s = self.lock();
        let from_peer = s.per_peer.get(&ip).copied().unwrap_or(0);
        let refused = if s.open >= self.limits.max_connections {
            Some((&self.stats.refused_server_limit, "server_limit"))
        } else if from_peer >= self.limits.max_per_peer {
            Some((&self.stats.refused_peer_limit, "peer_limit"))
        } else {
            None
        };
        if let Some((counter, kind)) = refused {
            drop(s);
            ListenStats::bump(counter);
            let limit = if kind == "server_limit" {
                format!("{} connections in all", self.limits.max_connections)
            } else {
                format!("{} connections from {ip}", self.limits.max_per_peer)
            };
            self.warn(
                kind,
                format_args!(
                    "{}: refused a connection from {ip}: limit of {limit} reached",
                    self.what
                ),
            );
            return None;
        }
        s.open += 1;
        *s.per_peer.entry(ip).or_insert(0) += 1;
        drop(s);
        self.stats.open.fetch_add(1, Ordering::Relaxed);
        Some(Permit {
            gate: self.clone(),
            ip,
        })
    }

    /// Log at warn, at most once per [`WARN_EVERY`] per kind, saying how many were not logged.
    fn warn(&self, kind: &'static str, msg: std::fmt::Arguments<'_>) {
        crate::trouble::note(msg.to_string());
        let now = Instant::now();
        let mut s = self.lock();
        let (last, quiet) = s.warned.entry(kind).or_insert((now - WARN_EVERY * 2, 0));
        if now.duration_since(*last) < WARN_EVERY {
            *quiet += 1;
            return;
        }
        let skipped = std::mem::take(quiet);
        *last = now;
        drop(s);
        if skipped > 0 {
            tracing::warn!("{msg} ({skipped} more like it since the last warning)");
        } else {
            tracing::warn!("{msg}");
        }
    }
}

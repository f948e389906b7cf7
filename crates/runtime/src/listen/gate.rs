//! The accept loop: errors back off and continue, connections over a limit are closed at once.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
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

/// One listener's admission: its limits, who is connected, and its counters.
pub struct Gate {
    what: &'static str,
    limits: Limits,
    stats: Arc<ListenStats>,
    state: Mutex<GateState>,
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

impl Gate {
    pub fn new(what: &'static str, limits: Limits, stats: Arc<ListenStats>) -> Arc<Gate> {
        Arc::new(Gate {
            what,
            limits,
            stats,
            state: Mutex::new(GateState::default()),
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
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
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

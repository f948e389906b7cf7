//! One host of `coflowkit transfers` (shuffles and concurrent transfers on real bytes), as its
//! own process. It serves the bytes peers fetch from it, each piece paced by its transfer's
//! share of this host's uplink (set by the inter-transfer controller; zero pauses the
//! transfer), by the flow's own rate (MADD) and, on loopback, by the host's link rate. It
//! fetches the flows the controller gives it, at most `connections` at a time in a seeded
//! random order (Hadoop's reducers), and reports each flow's end.
//!
//! The bytes of a flow are a 64 KiB ChaCha8 pattern seeded by (transfer, flow), repeated: the
//! receiver checks every byte against it (cheap enough for 2 shared cores, unlike a hash).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::seq::SliceRandom;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch, Semaphore};
use tokio::time::Instant;

use crate::error::io;
use crate::node::NodeEnv;
use crate::pace::{Pacer, PACE_PIECE};
use crate::OrchestraError;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum FlowFromNode {
    Hello {
        host: u32,
        addr: String,
    },
    FlowDone {
        transfer: u32,
        flow: u32,
        secs: f64,
    },
    FlowFailed {
        transfer: u32,
        flow: u32,
        why: String,
    },
    /// The answer to `Mark`: the bytes this host had sent of each transfer when it read the
    /// mark (after every share change the controller sent before it).
    Sent {
        mark: u32,
        bytes: Vec<(u32, u64)>,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum FlowToNode {
    /// First message: the host's uplink pacing (loopback), and whether transfers start
    /// paused until the ITC gives them a share.
    Setup {
        pace_bps: Option<f64>,
        gated: bool,
    },
    /// Fetch these flows, at most `connections` at once (0: all at once), in an order
    /// shuffled by `seed`.
    Fetch {
        transfer: u32,
        connections: u32,
        seed: u64,
        flows: Vec<FlowSpec>,
    },
    /// This host's uplink rate for `transfer` (None: unlimited; 0: paused).
    Share {
        transfer: u32,
        rate_bps: Option<f64>,
    },
    /// Say how many bytes of each transfer this host has sent so far (`Sent`).
    Mark {
        mark: u32,
    },
    Finish,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FlowSpec {
    pub flow: u32,
    /// The sender's data address.
    pub from: String,
    pub bytes: u64,
    /// The flow's own rate (MADD's d/Γ), bits per second.
    pub rate_bps: Option<f64>,
}

/// A transfer's share of this host's uplink: an adjustable pacer (None: unlimited, 0: shut).
struct Gate {
    rate: watch::Sender<Option<f64>>,
    next: Mutex<Option<Instant>>,
}

impl Gate {
    fn new(rate: Option<f64>) -> Gate {
        Gate {
            rate: watch::channel(rate).0,
            next: Mutex::new(None),
        }
    }

    async fn wait(&self, bytes: usize) {
        let mut rx = self.rate.subscribe();
        loop {
            let r = *rx.borrow_and_update();
            match r {
                None => return,
                Some(r) if r <= 0.0 => {
                    if rx.changed().await.is_err() {
                        return;
                    }
                }
                Some(r) => {
                    let at = {
                        let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
                        let now = Instant::now();
                        let start = next.map_or(now, |n| n.max(now));
                        *next = Some(start + Duration::from_secs_f64(bytes as f64 * 8.0 / r));
                        start
                    };
                    tokio::time::sleep_until(at).await;
                    return;
                }
            }
        }
    }
}

struct Host {
    pacer: Option<Pacer>,
    gated: bool,
    gates: Mutex<HashMap<u32, Arc<Gate>>>,
    /// Bytes written to peers per transfer: what the ITC's shares let through, counted where
    /// they take effect (receivers' counts would lag by the socket buffers).
    sent: Mutex<HashMap<u32, u64>>,
}

impl Host {
    fn gate(&self, transfer: u32) -> Arc<Gate> {
        let mut g = self.gates.lock().unwrap_or_else(|p| p.into_inner());
        g.entry(transfer)
            .or_insert_with(|| Arc::new(Gate::new(self.gated.then_some(0.0))))
            .clone()
    }

    fn count(&self, transfer: u32, bytes: u64) {
        let mut s = self.sent.lock().unwrap_or_else(|p| p.into_inner());
        *s.entry(transfer).or_default() += bytes;
    }

    fn sent(&self) -> Vec<(u32, u64)> {
        let s = self.sent.lock().unwrap_or_else(|p| p.into_inner());
        let mut v: Vec<(u32, u64)> = s.iter().map(|(&t, &b)| (t, b)).collect();
        v.sort_unstable();
        v
    }
}

/// The bytes of a flow: this pattern, repeated.
fn pattern(transfer: u32, flow: u32) -> Vec<u8> {
    let mut v = vec![0u8; PACE_PIECE];
    ChaCha8Rng::seed_from_u64(((transfer as u64) << 32) | flow as u64).fill_bytes(&mut v);
    v
}

/// A fetch request: transfer, flow, bytes, the flow's rate (f64 bits; 0 = none).
const REQUEST: usize = 24;

/// Run a host of `coflowkit transfers` until the controller says `Finish`.
pub fn run_flow_node(env: NodeEnv) -> Result<(), OrchestraError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(io("tokio runtime"))?;
    rt.block_on(flow_node(env))
}

async fn flow_node(env: NodeEnv) -> Result<(), OrchestraError> {
    let crate::link::ControllerConnection {
        mut lines,
        listener,
        addr,
        tx,
    } = crate::link::controller_connection::<FlowFromNode>(&env).await?;
    let _ = tx.send(FlowFromNode::Hello {
        host: env.host,
        addr: addr.to_string(),
    });
    let mut listener = Some(listener);
    let mut host: Option<Arc<Host>> = None;
    loop {
        let line = lines
            .next_line()
            .await
            .map_err(io("reading from the controller"))?
            .ok_or_else(|| OrchestraError::Failed("the controller closed the connection".into()))?;
        let msg: FlowToNode =
            serde_json::from_str(&line).map_err(|e| OrchestraError::Protocol {
                peer: "controller".into(),
                why: format!("{e}: {line}"),
            })?;
        match msg {
            FlowToNode::Setup { pace_bps, gated } if host.is_none() => {
                let h = Arc::new(Host {
                    pacer: pace_bps.map(Pacer::new),
                    gated,
                    gates: Mutex::new(HashMap::new()),
                    sent: Mutex::new(HashMap::new()),
                });
                host = Some(h.clone());
                if let Some(l) = listener.take() {
                    tokio::spawn(accept(l, h));
                }
            }
            FlowToNode::Fetch {
                transfer,
                connections,
                seed,
                flows,
            } => {
                tokio::spawn(fetch_all(transfer, connections, seed, flows, tx.clone()));
            }
            FlowToNode::Share { transfer, rate_bps } => {
                if let Some(h) = &host {
                    h.gate(transfer).rate.send_replace(rate_bps);
                }
            }
            FlowToNode::Mark { mark } => {
                let bytes = host.as_ref().map(|h| h.sent()).unwrap_or_default();
                let _ = tx.send(FlowFromNode::Sent { mark, bytes });
            }
            FlowToNode::Finish => return Ok(()),
            m => {
                return Err(OrchestraError::Protocol {
                    peer: "controller".into(),
                    why: format!("unexpected {m:?}"),
                })
            }
        }
    }
}

async fn accept(listener: TcpListener, host: Arc<Host>) {
    while let Ok((s, _)) = listener.accept().await {
        let h = host.clone();
        tokio::spawn(async move {
            if let Err(e) = serve(h, s).await {
                tracing::debug!("serving a flow: {e}");
            }
        });
    }
}

/// One flow out: its bytes in pieces, each after the transfer's gate, the flow's pacer and
/// the host's pacer let it go.
async fn serve(host: Arc<Host>, mut s: TcpStream) -> std::io::Result<()> {
    let _ = s.set_nodelay(true);
    let mut h = [0u8; REQUEST];
    s.read_exact(&mut h).await?;
    let transfer = u32::from_be_bytes(h[0..4].try_into().expect("4 bytes"));
    let flow = u32::from_be_bytes(h[4..8].try_into().expect("4 bytes"));
    let bytes = u64::from_be_bytes(h[8..16].try_into().expect("8 bytes"));
    let rate = f64::from_bits(u64::from_be_bytes(h[16..24].try_into().expect("8 bytes")));
    let gate = host.gate(transfer);
    let own = (rate.is_finite() && rate > 0.0).then(|| Pacer::new(rate));
    let pat = pattern(transfer, flow);
    let mut left = bytes;
    while left > 0 {
        let n = left.min(PACE_PIECE as u64) as usize;
        gate.wait(n).await;
        if let Some(p) = &own {
            p.wait(n).await;
        }
        if let Some(p) = &host.pacer {
            p.wait(n).await;
        }
        s.write_all(&pat[..n]).await?;
        host.count(transfer, n as u64);
        left -= n as u64;
    }
    s.flush().await
}

/// A receiver's flows of one transfer: at most `connections` at a time, in seeded random
/// order; each flow's end (or failure) reported.
async fn fetch_all(
    transfer: u32,
    connections: u32,
    seed: u64,
    mut flows: Vec<FlowSpec>,
    tx: mpsc::UnboundedSender<FlowFromNode>,
) {
    flows.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let k = if connections == 0 {
        flows.len().max(1)
    } else {
        connections as usize
    };
    let slots = Arc::new(Semaphore::new(k));
    for f in flows {
        let Ok(permit) = slots.clone().acquire_owned().await else {
            return;
        };
        let tx = tx.clone();
        tokio::spawn(async move {
            let t = Instant::now();
            let r = fetch_one(transfer, &f).await;
            drop(permit);
            let _ = tx.send(match r {
                Ok(()) => FlowFromNode::FlowDone {
                    transfer,
                    flow: f.flow,
                    secs: t.elapsed().as_secs_f64(),
                },
                Err(why) => FlowFromNode::FlowFailed {
                    transfer,
                    flow: f.flow,
                    why,
                },
            });
        });
    }
}

async fn fetch_one(transfer: u32, f: &FlowSpec) -> Result<(), String> {
    let mut s = TcpStream::connect(&f.from)
        .await
        .map_err(|e| format!("connecting to {}: {e}", f.from))?;
    let _ = s.set_nodelay(true);
    let mut h = [0u8; REQUEST];
    h[0..4].copy_from_slice(&transfer.to_be_bytes());
    h[4..8].copy_from_slice(&f.flow.to_be_bytes());
    h[8..16].copy_from_slice(&f.bytes.to_be_bytes());
    h[16..24].copy_from_slice(&f.rate_bps.unwrap_or(0.0).to_bits().to_be_bytes());
    s.write_all(&h).await.map_err(|e| e.to_string())?;
    let pat = pattern(transfer, f.flow);
    let mut buf = vec![0u8; PACE_PIECE];
    let mut got = 0u64;
    while got < f.bytes {
        let n = (f.bytes - got).min(PACE_PIECE as u64) as usize;
        s.read_exact(&mut buf[..n]).await.map_err(|e| {
            format!(
                "flow {} from {}: {e} after {got} of {} bytes",
                f.flow, f.from, f.bytes
            )
        })?;
        if buf[..n] != pat[..n] {
            return Err(format!(
                "flow {} from {}: bytes {got}..{} are not the flow's",
                f.flow,
                f.from,
                got + n as u64
            ));
        }
        got += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shut gate holds a piece until it opens; an open one paces at its rate.
    #[tokio::test(start_paused = true)]
    async fn a_gate_pauses_and_paces() {
        let g = Arc::new(Gate::new(Some(0.0)));
        let g2 = g.clone();
        let t0 = Instant::now();
        let w = tokio::spawn(async move {
            g2.wait(1000).await;
            g2.wait(1000).await;
            Instant::now()
        });
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(!w.is_finished(), "passed a shut gate");
        g.rate.send_replace(Some(8000.0)); // 1000 bytes/s
        let end = w.await.unwrap();
        // Opened at 5 s: the first piece at once, the second a second later.
        let e = (end - t0).as_secs_f64();
        assert!((5.9..6.1).contains(&e), "{e}");
        g.rate.send_replace(None);
        let t1 = Instant::now();
        for _ in 0..100 {
            g.wait(1 << 20).await;
        }
        assert_eq!(t1.elapsed(), Duration::ZERO);
    }
}

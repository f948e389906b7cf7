//! Transfers (shuffles) between real processes, one per host ([`crate::flows`]), on loopback
//! or in the emulated cluster, under Orchestra's controllers (spec §2.0): each transfer's
//! controller has picked its mechanism (per-flow fair sharing with at most k connections per
//! receiver, as Hadoop's reducers fetch; or MADD's per-flow rates `d_ij / Γ`), and the
//! inter-transfer controller ([`crate::itc`]: FIFO, priority, weighted fair) gives each active
//! transfer a share of every host's uplink, recomputed at every arrival and completion and
//! enforced by pacing at the senders (Orchestra varied TCP connection counts; explicit rates
//! are what Varys later used, spec §2.0). This process is the controller and measures.

use std::collections::HashMap;
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::error::io;
use crate::flows::{FlowFromNode, FlowSpec, FlowToNode};
use crate::itc::{self, Policy};
use crate::run::{control_ip, host_command, Children};
use crate::select::ShuffleMechanism;
use crate::topology::Cluster;
use crate::OrchestraError;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Flow {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TransferSpec {
    pub name: String,
    /// Seconds after the start.
    pub arrival_s: f64,
    /// Larger is more urgent (the ITC's priority policy).
    pub priority: u32,
    /// The ITC's weighted fair share; positive.
    pub weight: f64,
    pub flows: Vec<Flow>,
    pub mechanism: ShuffleMechanism,
    /// Fair: fetches in flight per receiver (0: all at once). MADD opens every flow at once.
    pub connections: u32,
}

#[derive(Debug, Clone)]
pub struct TransfersConfig {
    pub hosts: u32,
    /// Each host's link rate (bits/s): tbf in the emulated cluster, user-space pacing of
    /// uploads on loopback. Needed by MADD and the ITC (they hand out shares of it).
    pub rate_bps: Option<f64>,
    /// The inter-transfer controller's policy (None: no ITC, TCP shares the links).
    pub policy: Option<Policy>,
    pub seed: u64,
    pub timeout_s: f64,
}

/// One transfer's run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TransferResult {
    pub name: String,
    pub mechanism: ShuffleMechanism,
    pub connections: u32,
    pub policy: Option<Policy>,
    pub arrival_s: f64,
    pub bytes: u64,
    pub flows: usize,
    /// From its arrival to its last flow's end (None: the run failed).
    pub completion_s: Option<f64>,
    /// Each receiving host and when, after the transfer's arrival, its last flow ended.
    pub receiver_times_s: Vec<(u32, f64)>,
    /// The optimum alone on the hose model: the most loaded port's bytes at the link rate.
    pub bound_s: Option<f64>,
    /// Of the bytes every sender wrote, of any transfer, between this transfer's arrival and
    /// its end, the fraction that were its own: the share of the network the ITC gave it.
    /// Unlike its completion time it does not depend on how fast the hosts' CPUs keep up.
    pub own_share: Option<f64>,
    pub error: Option<String>,
}

/// The most loaded port's bytes (up or down) of `flows`.
pub fn max_port_bytes(flows: &[Flow]) -> u64 {
    let mut load: HashMap<(bool, u32), u64> = HashMap::new();
    for f in flows {
        *load.entry((true, f.src)).or_default() += f.bytes;
        *load.entry((false, f.dst)).or_default() += f.bytes;
    }
    load.into_values().max().unwrap_or(0)
}

/// MADD (spec §2.5): every flow at `d_ij / Γ`, Γ the most loaded port's time at `rate_bps`,
/// so all flows end together at Γ.
pub fn madd_rates_bps(flows: &[Flow], rate_bps: f64) -> Vec<f64> {
    let most = max_port_bytes(flows).max(1) as f64;
    flows
        .iter()
        .map(|f| f.bytes as f64 * rate_bps / most)
        .collect()
}

fn check(cfg: &TransfersConfig, transfers: &[TransferSpec]) -> Result<(), OrchestraError> {
    let bad = |s: String| Err(OrchestraError::Bad(s));
    if !(cfg.timeout_s.is_finite() && cfg.timeout_s > 0.0 && cfg.timeout_s <= 1e6) {
        return bad(format!(
            "timeout {} s: must be above 0 and at most 1e6",
            cfg.timeout_s
        ));
    }
    if let Some(r) = cfg.rate_bps {
        if !(r.is_finite() && (1e3..=1e15).contains(&r)) {
            return bad(format!("link rate {r} bit/s: must be 1 kbit/s to 1 Pbit/s"));
        }
    }
    if cfg.rate_bps.is_none() && cfg.policy.is_some() {
        return bad("the inter-transfer controller shares the link rate: give --rate".into());
    }
    for t in transfers {
        if t.flows.is_empty() {
            return bad(format!("transfer `{}` has no flows", t.name));
        }
        if !(t.arrival_s.is_finite() && t.arrival_s >= 0.0) {
            return bad(format!("transfer `{}`: arrival {} s", t.name, t.arrival_s));
        }
        if !(t.weight.is_finite() && t.weight > 0.0) {
            return bad(format!(
                "transfer `{}`: weight {} (must be > 0)",
                t.name, t.weight
            ));
        }
        if t.mechanism == ShuffleMechanism::Madd && cfg.rate_bps.is_none() {
            return bad(format!("transfer `{}`: MADD needs the link rate", t.name));
        }
        for f in &t.flows {
            if f.src >= cfg.hosts || f.dst >= cfg.hosts || f.src == f.dst || f.bytes == 0 {
                return bad(format!(
                    "transfer `{}`: flow {} -> {} of {} bytes (hosts 0..{}, distinct, non-empty)",
                    t.name, f.src, f.dst, f.bytes, cfg.hosts
                ));
            }
        }
    }
    Ok(())
}

/// Run `transfers` on `cfg.hosts` processes (`node_command` runs one; the environment is added
/// here), on `cluster` or loopback. A failed run gives every unfinished transfer the error.
pub fn run_transfers(
    cfg: &TransfersConfig,
    cluster: Option<&Cluster>,
    node_command: &dyn Fn() -> Command,
    transfers: &[TransferSpec],
) -> Result<Vec<TransferResult>, OrchestraError> {
    check(cfg, transfers)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(io("tokio runtime"))?;
    rt.block_on(drive(cfg, cluster, node_command, transfers))
}

type Writers = Vec<Option<mpsc::UnboundedSender<FlowToNode>>>;

fn send(w: &Writers, h: u32, m: FlowToNode) {
    if let Some(Some(tx)) = w.get(h as usize) {
        let _ = tx.send(m);
    }
}

async fn drive(
    cfg: &TransfersConfig,
    cluster: Option<&Cluster>,
    node_command: &dyn Fn() -> Command,
    transfers: &[TransferSpec],
) -> Result<Vec<TransferResult>, OrchestraError> {
    let hosts = cfg.hosts;
    let ip = control_ip(cluster);
    let listener = TcpListener::bind((ip, 0))
        .await
        .map_err(io(format!("controller listener on {ip}")))?;
    let at = listener.local_addr().map_err(io("controller address"))?;
    let mut children = Children(Vec::new());
    for h in 0..hosts {
        let mut c = host_command(cluster, h, node_command)?;
        c.env("COFLOWKIT_RENDEZVOUS", at.to_string());
        let child = c
            .spawn()
            .map_err(io(format!("starting host {h} ({:?})", c.get_program())))?;
        children.0.push(Some(child));
    }
    let (ev_tx, mut ev) = mpsc::unbounded_channel::<(u32, Option<FlowFromNode>)>();
    let mut writers: Writers = vec![None; hosts as usize];
    let mut addrs = vec![String::new(); hosts as usize];
    let startup = Duration::from_secs(30);
    let deadline = Instant::now() + startup;
    for _ in 0..hosts {
        let (s, _) = tokio::time::timeout_at(deadline, listener.accept())
            .await
            .map_err(|_| {
                OrchestraError::Failed(format!(
                    "only {} of {hosts} hosts connected within {startup:?}",
                    writers.iter().flatten().count()
                ))
            })?
            .map_err(io("accepting a host"))?;
        let _ = s.set_nodelay(true);
        let (rd, mut wr) = s.into_split();
        let mut lines = BufReader::new(rd).lines();
        let hello = tokio::time::timeout_at(deadline, lines.next_line())
            .await
            .map_err(|_| OrchestraError::Failed("a host connected but said nothing".into()))?
            .map_err(io("reading a host's hello"))?;
        let (host, addr) = match hello.as_deref().map(serde_json::from_str::<FlowFromNode>) {
            Some(Ok(FlowFromNode::Hello { host, addr }))
                if host < hosts && writers[host as usize].is_none() =>
            {
                (host, addr)
            }
            other => {
                return Err(OrchestraError::Protocol {
                    peer: "a host".into(),
                    why: format!("expected a hello from a new host below {hosts}, got {other:?}"),
                })
            }
        };
        addrs[host as usize] = addr;
        let (tx, mut rx) = mpsc::unbounded_channel::<FlowToNode>();
        writers[host as usize] = Some(tx);
        tokio::spawn(async move {
            while let Some(m) = rx.recv().await {
                let mut line = serde_json::to_string(&m).expect("control messages serialise");
                line.push('\n');
                if wr.write_all(line.as_bytes()).await.is_err() {
                    break;
                }
            }
        });
        let etx = ev_tx.clone();
        tokio::spawn(async move {
            while let Ok(Some(l)) = lines.next_line().await {
                match serde_json::from_str::<FlowFromNode>(&l) {
                    Ok(m) => {
                        let _ = etx.send((host, Some(m)));
                    }
                    Err(e) => {
                        tracing::warn!("host {host}: bad control line ({e}): {l}");
                        break;
                    }
                }
            }
            let _ = etx.send((host, None));
        });
    }
    for h in 0..hosts {
        send(
            &writers,
            h,
            FlowToNode::Setup {
                pace_bps: if cluster.is_some() {
                    None
                } else {
                    cfg.rate_bps
                },
                gated: cfg.policy.is_some(),
            },
        );
    }
    let n = transfers.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| transfers[a].arrival_s.total_cmp(&transfers[b].arrival_s));
    let mut next = 0;
    let mut left: Vec<usize> = transfers.iter().map(|t| t.flows.len()).collect();
    let mut per_recv: Vec<HashMap<u32, usize>> = transfers
        .iter()
        .map(|t| {
            let mut m = HashMap::new();
            for f in &t.flows {
                *m.entry(f.dst).or_default() += 1;
            }
            m
        })
        .collect();
    let mut recv_times: Vec<Vec<(u32, f64)>> = vec![Vec::new(); n];
    let mut started_at: Vec<Option<f64>> = vec![None; n];
    let mut ended_at: Vec<Option<f64>> = vec![None; n];
    let mut error: Option<String> = None;
    let mut marks = Marks::new(hosts);
    let mut mark_at: Vec<(Option<usize>, Option<usize>)> = vec![(None, None); n];
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs_f64(cfg.timeout_s.max(0.0));
    loop {
        let now_s = t0.elapsed().as_secs_f64();
        let mut arrived = Vec::new();
        while next < n && transfers[order[next]].arrival_s <= now_s {
            arrived.push(order[next]);
            started_at[order[next]] = Some(now_s);
            next += 1;
        }
        if !arrived.is_empty() {
            // Shares first: a gated host holds a new transfer's bytes until its share comes.
            shares(cfg, transfers, &started_at, &ended_at, &writers);
            let m = marks.send(&writers);
            for &t in &arrived {
                mark_at[t].0 = Some(m);
            }
            for &t in &arrived {
                fetches(cfg, t, &transfers[t], &addrs, &writers);
            }
        }
        if ended_at.iter().all(Option::is_some) {
            break;
        }
        if Instant::now() >= end {
            error = Some(format!("not done after the timeout of {} s", cfg.timeout_s));
            break;
        }
        // The timeout holds while an arrival is pending too (one after it never comes).
        let wake = if next < n {
            end.min(t0 + Duration::from_secs_f64(transfers[order[next]].arrival_s))
        } else {
            end
        };
        tokio::select! {
            e = ev.recv() => {
                let Some((h, msg)) = e else {
                    error = Some("every host left".into());
                    break;
                };
                match msg {
                    Some(FlowFromNode::FlowDone { transfer, flow, .. }) => {
                        let t = transfer as usize;
                        let Some(f) = transfers.get(t).and_then(|x| x.flows.get(flow as usize)) else {
                            error = Some(format!("host {h} reported flow {flow} of transfer {transfer}: no such flow"));
                            break;
                        };
                        let now_s = t0.elapsed().as_secs_f64();
                        let since = now_s - started_at[t].unwrap_or(0.0);
                        let r = per_recv[t].entry(f.dst).or_default();
                        *r = r.saturating_sub(1);
                        if *r == 0 {
                            recv_times[t].push((f.dst, since));
                        }
                        left[t] = left[t].saturating_sub(1);
                        if left[t] == 0 && ended_at[t].is_none() {
                            ended_at[t] = Some(now_s);
                            shares(cfg, transfers, &started_at, &ended_at, &writers);
                            mark_at[t].1 = Some(marks.send(&writers));
                        }
                    }
                    Some(FlowFromNode::FlowFailed { transfer, why, .. }) => {
                        let name = transfers.get(transfer as usize).map_or("?", |t| t.name.as_str());
                        error = Some(format!("transfer `{name}` at host {h}: {why}"));
                        break;
                    }
                    Some(FlowFromNode::Sent { mark, bytes }) => marks.got(h, mark, bytes),
                    Some(FlowFromNode::Hello { .. }) => {}
                    None => {
                        error = Some(format!("host {h} left during the run"));
                        break;
                    }
                }
            }
            _ = tokio::time::sleep_until(wake) => {
                if Instant::now() >= end {
                    error = Some(format!("not done after the timeout of {} s", cfg.timeout_s));
                    break;
                }
            }
        }
    }
    if error.is_none() {
        // The last marks' answers (each host answers in order, right after its last flow).
        let wait = Instant::now() + Duration::from_secs(5);
        while !marks.complete() {
            match tokio::time::timeout_at(wait, ev.recv()).await {
                Ok(Some((h, Some(FlowFromNode::Sent { mark, bytes })))) => {
                    marks.got(h, mark, bytes)
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
    }
    for h in 0..hosts {
        send(&writers, h, FlowToNode::Finish);
    }
    children.reap(Duration::from_secs(5)).await;
    Ok(transfers
        .iter()
        .enumerate()
        .map(|(t, spec)| {
            let completion_s = match (started_at[t], ended_at[t]) {
                (Some(s), Some(e)) => Some(e - s),
                _ => None,
            };
            let mut rt = recv_times[t].clone();
            rt.sort_by_key(|&(h, _)| h);
            TransferResult {
                name: spec.name.clone(),
                mechanism: spec.mechanism,
                connections: spec.connections,
                policy: cfg.policy,
                arrival_s: spec.arrival_s,
                bytes: spec.flows.iter().map(|f| f.bytes).sum(),
                flows: spec.flows.len(),
                completion_s,
                receiver_times_s: rt,
                bound_s: cfg
                    .rate_bps
                    .map(|r| max_port_bytes(&spec.flows) as f64 * 8.0 / r),
                own_share: match mark_at[t] {
                    (Some(a), Some(b)) => marks.own_share(t as u32, a, b),
                    _ => None,
                },
                error: completion_s.is_none().then(|| {
                    error
                        .clone()
                        .unwrap_or_else(|| "did not finish".to_string())
                }),
            }
        })
        .collect())
}

/// Snapshots of the bytes each host has sent per transfer, taken at every ITC decision.
struct Marks {
    hosts: u32,
    /// Per mark, per host: its answer.
    sent: Vec<Vec<Option<HashMap<u32, u64>>>>,
}

impl Marks {
    fn new(hosts: u32) -> Marks {
        Marks {
            hosts,
            sent: Vec::new(),
        }
    }

    /// Ask every host for its counts (after the shares sent before, on the same connection).
    fn send(&mut self, w: &Writers) -> usize {
        let m = self.sent.len();
        self.sent.push(vec![None; self.hosts as usize]);
        for h in 0..self.hosts {
            send(w, h, FlowToNode::Mark { mark: m as u32 });
        }
        m
    }

    fn got(&mut self, host: u32, mark: u32, bytes: Vec<(u32, u64)>) {
        if let Some(slot) = self
            .sent
            .get_mut(mark as usize)
            .and_then(|m| m.get_mut(host as usize))
        {
            *slot = Some(bytes.into_iter().collect());
        }
    }

    fn complete(&self) -> bool {
        self.sent.iter().flatten().all(Option::is_some)
    }

    /// Transfer `t`'s bytes between marks `a` and `b` over every transfer's, all hosts
    /// together (None: a host did not answer, or nothing was sent).
    fn own_share(&self, t: u32, a: usize, b: usize) -> Option<f64> {
        let (mut own, mut all) = (0u64, 0u64);
        for h in 0..self.hosts as usize {
            let (sa, sb) = (self.sent[a][h].as_ref()?, self.sent[b][h].as_ref()?);
            for (&u, &end) in sb {
                let d = end.saturating_sub(sa.get(&u).copied().unwrap_or(0));
                all += d;
                if u == t {
                    own += d;
                }
            }
        }
        (all > 0).then(|| own as f64 / all as f64)
    }
}

/// The ITC: each active transfer's share of every host's uplink, to every host.
fn shares(
    cfg: &TransfersConfig,
    transfers: &[TransferSpec],
    started: &[Option<f64>],
    ended: &[Option<f64>],
    w: &Writers,
) {
    let (Some(policy), Some(rate)) = (cfg.policy, cfg.rate_bps) else {
        return;
    };
    let active: Vec<usize> = (0..transfers.len())
        .filter(|&t| started[t].is_some() && ended[t].is_none())
        .collect();
    let model: Vec<itc::Transfer> = active
        .iter()
        .map(|&t| itc::Transfer {
            arrival_s: transfers[t].arrival_s,
            bytes: transfers[t].flows.iter().map(|f| f.bytes as f64).sum(),
            priority: transfers[t].priority,
            weight: transfers[t].weight,
        })
        .collect();
    let refs: Vec<&itc::Transfer> = model.iter().collect();
    let s = itc::shares(policy, &refs);
    for (k, &t) in active.iter().enumerate() {
        for h in 0..cfg.hosts {
            send(
                w,
                h,
                FlowToNode::Share {
                    transfer: t as u32,
                    rate_bps: Some(s[k] * rate),
                },
            );
        }
    }
}

/// The transfer's flows to each of its receivers (MADD: with their rates).
fn fetches(cfg: &TransfersConfig, t: usize, spec: &TransferSpec, addrs: &[String], w: &Writers) {
    let rates = match (spec.mechanism, cfg.rate_bps) {
        (ShuffleMechanism::Madd, Some(r)) => Some(madd_rates_bps(&spec.flows, r)),
        _ => None,
    };
    let mut by_dst: HashMap<u32, Vec<FlowSpec>> = HashMap::new();
    for (i, f) in spec.flows.iter().enumerate() {
        by_dst.entry(f.dst).or_default().push(FlowSpec {
            flow: i as u32,
            from: addrs[f.src as usize].clone(),
            bytes: f.bytes,
            rate_bps: rates.as_ref().map(|r| r[i]),
        });
    }
    let connections = match spec.mechanism {
        ShuffleMechanism::Madd => 0,
        ShuffleMechanism::Fair => spec.connections,
    };
    for (dst, flows) in by_dst {
        send(
            w,
            dst,
            FlowToNode::Fetch {
                transfer: t as u32,
                connections,
                seed: cfg.seed ^ ((t as u64) << 32) ^ dst as u64,
                flows,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(src: u32, dst: u32, bytes: u64) -> Flow {
        Flow { src, dst, bytes }
    }

    /// Fig 4.6 with N = 2 (spec §2.5): the big sender's port carries 2N units and so do the
    /// receivers'; MADD gives each small flow 1/(2N) of the rate and the big ones 1/2, so every
    /// port is exactly full.
    #[test]
    fn madd_fills_the_bottleneck_ports_exactly() {
        let flows = [
            f(0, 5, 1),
            f(1, 5, 1),
            f(2, 6, 1),
            f(3, 6, 1),
            f(4, 5, 2),
            f(4, 6, 2),
        ];
        assert_eq!(max_port_bytes(&flows), 4);
        let r = madd_rates_bps(&flows, 100.0);
        assert_eq!(r, [25.0, 25.0, 25.0, 25.0, 50.0, 50.0]);
        let into_5: f64 = flows
            .iter()
            .zip(&r)
            .filter(|(f, _)| f.dst == 5)
            .map(|(_, r)| r)
            .sum();
        assert_eq!(into_5, 100.0);
    }

    /// The share counts what each transfer sent between the marks, over all hosts; a host that
    /// did not answer leaves it unknown rather than wrong.
    #[test]
    fn own_share_is_the_bytes_between_the_marks() {
        let mut m = Marks::new(2);
        m.sent.push(vec![None, None]);
        m.sent.push(vec![None, None]);
        m.got(0, 0, vec![(0, 100)]);
        m.got(1, 0, vec![(0, 50)]);
        m.got(0, 1, vec![(0, 130), (1, 90)]);
        assert_eq!(m.own_share(1, 0, 1), None, "host 1 has not answered mark 1");
        assert!(!m.complete());
        m.got(1, 1, vec![(0, 60), (1, 0)]);
        m.got(7, 1, vec![(0, 1)]); // no such host: ignored
        assert!(m.complete());
        // Transfer 0 sent 30 + 10, transfer 1 sent 90.
        assert_eq!(m.own_share(1, 0, 1), Some(90.0 / 130.0));
        assert_eq!(m.own_share(0, 0, 1), Some(40.0 / 130.0));
        assert_eq!(m.own_share(0, 0, 0), None, "nothing sent");
    }

    #[test]
    fn bad_transfers_are_refused_by_name() {
        let cfg = TransfersConfig {
            hosts: 3,
            rate_bps: None,
            policy: None,
            seed: 1,
            timeout_s: 10.0,
        };
        let t = |flows: Vec<Flow>, m| TransferSpec {
            name: "t1".into(),
            arrival_s: 0.0,
            priority: 0,
            weight: 1.0,
            flows,
            mechanism: m,
            connections: 5,
        };
        let e = |ts: &[TransferSpec], c: &TransfersConfig| check(c, ts).unwrap_err().to_string();
        assert!(
            e(&[t(vec![f(0, 3, 1)], ShuffleMechanism::Fair)], &cfg).contains("`t1`: flow 0 -> 3")
        );
        assert!(e(&[t(vec![f(1, 1, 1)], ShuffleMechanism::Fair)], &cfg).contains("flow 1 -> 1"));
        assert!(e(&[t(vec![], ShuffleMechanism::Fair)], &cfg).contains("no flows"));
        assert!(e(&[t(vec![f(0, 1, 1)], ShuffleMechanism::Madd)], &cfg).contains("MADD needs"));
        let itc = TransfersConfig {
            policy: Some(Policy::Priority),
            ..cfg.clone()
        };
        assert!(e(&[t(vec![f(0, 1, 1)], ShuffleMechanism::Fair)], &itc).contains("--rate"));
        assert!(check(&cfg, &[t(vec![f(0, 1, 1)], ShuffleMechanism::Fair)]).is_ok());
    }
}

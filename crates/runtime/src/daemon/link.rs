//! The daemon's side of the control plane: (re-)register with the coordinator, follow its rate
//! stream, report bytes sent every Δ and flow ends at once. When the coordinator is unreachable
//! the flows fall back to fair sharing and the link retries every `RETRY`; on return the daemon
//! re-registers with its soft state (stored objects, running flows) so nothing is lost.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, Notify};

use super::Daemon;
use crate::auth::PROTOCOL_VERSION;
use crate::proto::{
    progress, FlowInfo, FlowStart, Progress, PutDone, RegisterDaemonRequest, StoredObject,
    Subscribe,
};
use crate::rpc::{self, Client};

const RETRY: Duration = Duration::from_millis(300);

pub struct Link {
    pub client: Mutex<Option<Client>>,
    pub report_now: Notify,
}

impl Link {
    pub fn new() -> Link {
        Link {
            client: Mutex::new(None),
            report_now: Notify::new(),
        }
    }

    async fn client(&self) -> Option<Client> {
        self.client.lock().await.clone()
    }
}

/// Tell the coordinator about a stored object (best effort: re-registration repeats it).
pub async fn report_put(d: &Daemon, o: StoredObject) {
    if let Some(mut c) = d.link.client().await {
        let _ = c
            .report_put(PutDone {
                daemon: d.cfg.advertise.clone(),
                object: Some(o),
            })
            .await;
    }
}

/// Tell the coordinator a get started a flow (best effort, as above).
pub async fn report_start(d: &Daemon, f: FlowInfo) {
    if let Some(mut c) = d.link.client().await {
        let _ = c
            .start_flow(FlowStart {
                daemon: d.cfg.advertise.clone(),
                flow: Some(f),
            })
            .await;
    }
}

/// Why a session with the coordinator ended: something a retry may mend (the coordinator is
/// down, restarting, full), or a refusal no retry can change (a wrong token, another protocol
/// version, a registration it calls invalid).
enum Ended {
    Retry(String),
    Refused(String),
}

impl From<tonic::Status> for Ended {
    fn from(s: tonic::Status) -> Ended {
        match s.code() {
            tonic::Code::Unauthenticated => Ended::Refused(format!(
                "{} (is --token-file the coordinator's token?)",
                s.message()
            )),
            _ => Ended::Retry(s.to_string()),
        }
    }
}

/// Keep the coordinator connection up for the daemon's life; returns only when the coordinator
/// refuses this daemon for good, with the reason (the daemon then stops: a daemon no
/// coordinator will take can only hold data nobody can find).
pub async fn run(d: Arc<Daemon>) -> crate::error::Error {
    let mut interval = d.cfg.report_interval;
    // Retries are warned about when the reason changes, and every minute while it lasts (an
    // unreachable coordinator), at debug otherwise.
    let mut warned: Option<(String, std::time::Instant)> = None;
    loop {
        match session(&d, &mut interval).await {
            Ok(()) => tracing::warn!("coordinator closed the rate stream"),
            Err(Ended::Refused(msg)) => {
                *d.link.client.lock().await = None;
                d.flows.fall_back();
                return crate::error::Error::Remote {
                    peer: format!("coordinator {}", d.cfg.coordinator),
                    msg,
                };
            }
            Err(Ended::Retry(e)) => {
                crate::trouble::note(format!("daemon: coordinator {}: {e}", d.cfg.coordinator));
                let again = warned
                    .as_ref()
                    .is_some_and(|(w, at)| *w == e && at.elapsed() < Duration::from_secs(60));
                if again {
                    tracing::debug!("coordinator: {e}");
                } else {
                    tracing::warn!("coordinator {}: {e}; retrying", d.cfg.coordinator);
                    warned = Some((e, std::time::Instant::now()));
                }
            }
        }
        *d.link.client.lock().await = None;
        d.flows.fall_back();
        tokio::time::sleep(RETRY).await;
    }
}

async fn session(d: &Arc<Daemon>, interval: &mut Duration) -> Result<(), Ended> {
    let mut c = rpc::connect_with(
        &d.cfg.coordinator,
        &d.cfg.token,
        d.cfg.coordinator_tls.as_ref(),
    )
    .await
    .map_err(|e| Ended::Retry(e.to_string()))?;
    let reply = c
        .register_daemon(RegisterDaemonRequest {
            protocol_version: PROTOCOL_VERSION,
            addr: d.cfg.advertise.clone(),
            nic_bytes_per_s: d.cfg.nic_bytes_per_s,
            objects: d.store.list(),
            flows: d.flows.running(),
        })
        .await
        .map_err(|s| match s.code() {
            // Another protocol version, or a registration the coordinator calls invalid: the
            // same request would be refused again.
            tonic::Code::FailedPrecondition | tonic::Code::InvalidArgument => {
                Ended::Refused(format!("registration refused: {}", s.message()))
            }
            _ => Ended::from(s),
        })?
        .into_inner();
    if reply.report_interval_s > 0.0 && reply.report_interval_s.is_finite() {
        *interval = Duration::from_secs_f64(reply.report_interval_s.clamp(0.001, 10.0));
    }
    let mut stream = c
        .subscribe_rates(Subscribe {
            daemon: d.cfg.advertise.clone(),
        })
        .await?
        .into_inner();
    *d.link.client.lock().await = Some(c.clone());
    tracing::info!(coordinator = %d.cfg.coordinator, "registered with the coordinator");
    let reporter = tokio::spawn(report_loop(d.clone(), c, *interval));
    let mut dropped = std::collections::HashSet::new();
    let res = loop {
        match stream.message().await {
            Ok(Some(u)) => {
                // Every table repeats the recent unregistrations; act on each once.
                let listed = d.flows.assign(&u);
                for &coflow in listed.difference(&dropped) {
                    d.swarms.drop_coflow(coflow);
                    if d.store.drop_coflow(coflow) > 0 {
                        tracing::debug!(coflow, "dropped unregistered coflow's data");
                    }
                }
                dropped = listed;
            }
            Ok(None) => break Ok(()),
            Err(s) => break Err(Ended::from(s)),
        }
    };
    reporter.abort();
    res
}

async fn report_loop(d: Arc<Daemon>, mut c: Client, interval: Duration) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = d.link.report_now.notified() => {}
        }
        let (running, ended) = d.flows.progress();
        if running.is_empty() && ended.is_empty() {
            continue;
        }
        let mut flows: Vec<progress::Sent> = running
            .iter()
            .map(|&(flow, sent)| progress::Sent {
                flow,
                sent_bytes: sent,
                done: false,
                failed: false,
            })
            .collect();
        flows.extend(ended.iter().map(|e| progress::Sent {
            flow: e.flow,
            sent_bytes: e.sent,
            done: !e.failed,
            failed: e.failed,
        }));
        // In pieces the coordinator takes (it refuses larger reports).
        let mut r = Ok(());
        for piece in flows.chunks(crate::rpc::MAX_PROGRESS_PER_REQUEST) {
            let req = Progress {
                daemon: d.cfg.advertise.clone(),
                flows: piece.to_vec(),
            };
            if let Err(e) = c.report_progress(req).await {
                r = Err(e);
                break;
            }
        }
        if r.is_err() {
            d.flows.unreport(ended);
        }
    }
}

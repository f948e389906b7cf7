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

/// How long a registration (and the rate subscription after it) may take by default before
/// the daemon gives up and retries, warning (`DaemonConfig::register_deadline`): a coordinator that keeps the connection alive but never
/// answers (a stuck handler, a wrong peer) left the daemon silent for ever (adversarial pass
/// 33, B5).
pub const REGISTER_DEADLINE: Duration = Duration::from_secs(15);

/// The most bytes a registration request carries; what does not fit follows it in
/// `ReportPut` and `StartFlow` calls (the coordinator takes at most `MAX_RPC_BYTES`).
const REGISTRATION_BYTES: usize = crate::rpc::MAX_RPC_BYTES - (64 << 10);

/// Split a registration that would pass [`REGISTRATION_BYTES`]: the objects, then the flows,
/// that do not fit are returned to be reported one by one after it.
fn split_registration(req: &mut RegisterDaemonRequest) -> (Vec<StoredObject>, Vec<FlowInfo>) {
    use prost::Message;
    let total = req.encoded_len();
    if total <= REGISTRATION_BYTES {
        return (Vec::new(), Vec::new());
    }
    // A repeated field's entry: its message, its tag (1 byte) and its length.
    let entry = |len: usize| len + 1 + prost::encoding::encoded_len_varint(len as u64);
    let mut over = total - REGISTRATION_BYTES;
    let mut objects_cut = req.objects.len();
    while over > 0 && objects_cut > 0 {
        objects_cut -= 1;
        over = over.saturating_sub(entry(req.objects[objects_cut].encoded_len()));
    }
    let mut flows_cut = req.flows.len();
    while over > 0 && flows_cut > 0 {
        flows_cut -= 1;
        over = over.saturating_sub(entry(req.flows[flows_cut].encoded_len()));
    }
    (
        req.objects.split_off(objects_cut),
        req.flows.split_off(flows_cut),
    )
}

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
    let mut req = RegisterDaemonRequest {
        protocol_version: PROTOCOL_VERSION,
        addr: d.cfg.advertise.clone(),
        nic_bytes_per_s: d.cfg.nic_bytes_per_s,
        objects: d.store.list(),
        flows: d.flows.running(),
    };
    // Adversarial pass 33, B9: a registration over the message limit failed as an opaque
    // `h2 protocol error` for ever; what does not fit follows it.
    let (mut later_objects, later_flows) = split_registration(&mut req);
    let deadline = d.cfg.register_deadline;
    let late = |what: &str| {
        Ended::Retry(format!(
            "the coordinator did not answer {what} within {:.1} s",
            deadline.as_secs_f64()
        ))
    };
    let refused = |s: tonic::Status| match s.code() {
        // Another protocol version, or a registration the coordinator calls invalid: the
        // same request would be refused again.
        tonic::Code::FailedPrecondition | tonic::Code::InvalidArgument => {
            Ended::Refused(format!("registration refused: {}", s.message()))
        }
        _ => Ended::from(s),
    };
    // Kept to register again without them if the objects pass a coordinator limit.
    let objects = (!req.objects.is_empty()).then(|| req.objects.clone());
    let first = tokio::time::timeout(deadline, c.register_daemon(req.clone()))
        .await
        .map_err(|_| late("the registration"))?;
    let reply = match (first, objects) {
        // Past --max-objects-per-*: register without the objects (so the daemon is not lost
        // to the scheduler) and report them one by one; the ones refused are warned about.
        (Err(s), Some(objects)) if s.code() == tonic::Code::ResourceExhausted => {
            tracing::warn!(
                "coordinator {}: registration with {} objects refused ({}); registering \
                 without them and reporting them one by one",
                d.cfg.coordinator,
                objects.len(),
                s.message()
            );
            req.objects.clear();
            later_objects.splice(0..0, objects);
            tokio::time::timeout(deadline, c.register_daemon(req))
                .await
                .map_err(|_| late("the registration"))?
                .map_err(refused)?
        }
        (r, _) => r.map_err(refused)?,
    }
    .into_inner();
    if reply.report_interval_s > 0.0 && reply.report_interval_s.is_finite() {
        *interval = Duration::from_secs_f64(reply.report_interval_s.clamp(0.001, 10.0));
    }
    if !(later_objects.is_empty() && later_flows.is_empty()) {
        tracing::info!(
            objects = later_objects.len(),
            flows = later_flows.len(),
            "registration over {REGISTRATION_BYTES} bytes: reporting the rest one by one"
        );
        report_rest(d, &mut c, later_objects, later_flows).await?;
    }
    let sub = c.subscribe_rates(Subscribe {
        daemon: d.cfg.advertise.clone(),
    });
    let mut stream = tokio::time::timeout(deadline, sub)
        .await
        .map_err(|_| late("the rate subscription"))??
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

/// Report the objects and flows a registration could not carry, each within
/// [`REGISTER_DEADLINE`]; a refusal (a coordinator limit) is warned about once and the rest
/// still reported.
async fn report_rest(
    d: &Arc<Daemon>,
    c: &mut Client,
    objects: Vec<StoredObject>,
    flows: Vec<FlowInfo>,
) -> Result<(), Ended> {
    let mut refused = 0usize;
    let mut first: Option<String> = None;
    let mut note = |r: Result<tonic::Response<crate::proto::Empty>, tonic::Status>| match r {
        Ok(_) => Ok(()),
        Err(s) if s.code() == tonic::Code::ResourceExhausted => {
            refused += 1;
            first.get_or_insert_with(|| s.message().to_string());
            Ok(())
        }
        Err(s) => Err(Ended::from(s)),
    };
    let deadline = d.cfg.register_deadline;
    let late = || {
        Ended::Retry(format!(
            "the coordinator did not answer a report within {:.1} s",
            deadline.as_secs_f64()
        ))
    };
    for o in objects {
        let req = PutDone {
            daemon: d.cfg.advertise.clone(),
            object: Some(o),
        };
        let r = tokio::time::timeout(deadline, c.report_put(req)).await;
        note(r.map_err(|_| late())?)?;
    }
    for f in flows {
        let req = FlowStart {
            daemon: d.cfg.advertise.clone(),
            flow: Some(f),
        };
        let r = tokio::time::timeout(deadline, c.start_flow(req)).await;
        note(r.map_err(|_| late())?)?;
    }
    if let Some(why) = first {
        tracing::warn!(
            "the coordinator refused {refused} of the reports after the registration: {why}"
        );
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    /// Adversarial pass 33, B9: a registration of 12,200 objects with 500-byte ids (6.3 MB)
    /// is cut to fit the message limit; nothing is lost, the rest follows it.
    #[test]
    fn a_registration_over_the_message_limit_is_split() {
        let objects: Vec<StoredObject> = (0..12_200u32)
            .map(|n| StoredObject {
                coflow: 7,
                data_id: format!("{n:0>500}"),
                size_bytes: 1,
                ..Default::default()
            })
            .collect();
        let flows: Vec<FlowInfo> = (0..100u64)
            .map(|n| FlowInfo {
                flow: n,
                coflow: 7,
                data_id: "x".repeat(500),
                dst: "y".repeat(500),
                ..Default::default()
            })
            .collect();
        let mut req = RegisterDaemonRequest {
            objects: objects.clone(),
            flows: flows.clone(),
            ..Default::default()
        };
        assert!(req.encoded_len() > crate::rpc::MAX_RPC_BYTES);
        let (rest, later_flows) = split_registration(&mut req);
        assert!(
            req.encoded_len() <= REGISTRATION_BYTES,
            "{}",
            req.encoded_len()
        );
        assert!(!rest.is_empty() && later_flows.is_empty());
        assert_eq!(req.flows, flows);
        req.objects.extend(rest);
        assert_eq!(req.objects, objects);
        // A small one is left whole.
        let mut small = RegisterDaemonRequest {
            objects: objects[..10].to_vec(),
            ..Default::default()
        };
        let (a, b) = split_registration(&mut small);
        assert!(a.is_empty() && b.is_empty() && small.objects.len() == 10);
    }
}

//! `GET /status`: the coordinator's state as JSON, bounded and shared. The listing is the gRPC
//! `Status` reply's ([`status::listing`]) in a JSON encoding, at most [`STATUS_MAX_BYTES`]
//! with what did not fit counted. One body serves every reader for [`FRESH`], and at most
//! [`SENDERS`] bodies are being sent at once (others get 503): built whole for each request,
//! 70,000 flows made 46 MB replies, and 32 readers that did not read took the coordinator to
//! 1.9 GB and an allocation abort. A reader has [`SEND_DEADLINE`] to read its body.

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use tokio::sync::{Mutex, Notify, OwnedSemaphorePermit, Semaphore};

use super::super::service::Shared;
use super::super::state::{CoflowRec, Daemon, FlowRec, State};
use super::super::status::{self, Encoding, STATUS_MAX_BYTES};

/// How long one body serves the readers that ask for it.
pub const FRESH: Duration = Duration::from_millis(500);
/// Bodies being sent at once; a reader past them gets 503 with `Retry-After`.
pub const SENDERS: usize = 16;
/// The body goes out in copies of this size, so a reader that stops reading holds a few of
/// them in its connection's buffer, not a whole body, once its turn is over.
const CHUNK: usize = 16 << 10;
/// How long a reader may take to read one body.
pub const SEND_DEADLINE: Duration = Duration::from_secs(20);

/// The latest body and the turns to send one.
pub struct StatusPage {
    last: Mutex<Option<(Instant, Bytes)>>,
    senders: Arc<Semaphore>,
}

impl Default for StatusPage {
    fn default() -> Self {
        StatusPage {
            last: Mutex::new(None),
            senders: Arc::new(Semaphore::new(SENDERS)),
        }
    }
}

impl StatusPage {
    pub async fn answer(&self, shared: &Shared) -> Response {
        let Ok(turn) = self.senders.clone().try_acquire_owned() else {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "1")],
                format!("{SENDERS} /status answers are being sent; try again\n"),
            )
                .into_response();
        };
        let body = {
            let mut last = self.last.lock().await;
            match &*last {
                Some((at, body)) if at.elapsed() < FRESH => body.clone(),
                _ => {
                    let body = Bytes::from(json(shared));
                    *last = Some((Instant::now(), body.clone()));
                    body
                }
            }
        };
        let len = body.len();
        (
            [
                (header::CONTENT_TYPE, "application/json".to_string()),
                (header::CONTENT_LENGTH, len.to_string()),
            ],
            Body::from_stream(send(body, turn)),
        )
            .into_response()
    }
}

/// A body being sent: taken away (and the connection closed) when the reader has not read it
/// all within [`SEND_DEADLINE`], so a reader that stops reading holds its turn, and the body,
/// no longer than that.
struct Sending {
    body: std::sync::Mutex<Option<Bytes>>,
    over: Notify,
}

/// Ends the sending when the stream ends or the connection goes.
struct Over(Arc<Sending>);

impl Drop for Over {
    fn drop(&mut self) {
        self.0.body.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.0.over.notify_one();
    }
}

/// `body` in copies of [`CHUNK`] bytes, within [`SEND_DEADLINE`]; `turn` is held until then.
fn send(
    body: Bytes,
    turn: OwnedSemaphorePermit,
) -> impl tokio_stream::Stream<Item = io::Result<Bytes>> {
    let sending = Arc::new(Sending {
        body: std::sync::Mutex::new(Some(body)),
        over: Notify::new(),
    });
    let watch = sending.clone();
    tokio::spawn(async move {
        let _turn = turn;
        tokio::select! {
            _ = watch.over.notified() => {}
            _ = tokio::time::sleep(SEND_DEADLINE) => {}
        }
        watch.body.lock().unwrap_or_else(|p| p.into_inner()).take();
    });
    chunks(Over(sending))
}

fn chunks(over: Over) -> impl tokio_stream::Stream<Item = io::Result<Bytes>> {
    let mut at = 0;
    let mut failed = false;
    let mut over = Some(over);
    tokio_stream::iter(std::iter::from_fn(move || {
        let o = over.as_ref()?;
        let chunk = {
            let body = o.0.body.lock().unwrap_or_else(|p| p.into_inner());
            match &*body {
                Some(b) if at < b.len() => {
                    let end = (at + CHUNK).min(b.len());
                    let c = Bytes::copy_from_slice(&b[at..end]);
                    at = end;
                    Some(Ok(c))
                }
                Some(_) => None,
                None if !failed => {
                    failed = true;
                    Some(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the reader did not take the body in time",
                    )))
                }
                None => None,
            }
        };
        if chunk.is_none() {
            over = None;
        }
        chunk
    }))
}

#[derive(Serialize)]
struct Top {
    protocol_version: u32,
    scheduler: String,
    rounds: u64,
    uptime_s: f64,
    last_decision_s: f64,
    daemons: Vec<DaemonRow>,
    coflows: Vec<JsonCoflow>,
    /// The bound, and what it left out (flows: of listed and omitted coflows).
    max_bytes: usize,
    daemons_omitted: u32,
    coflows_omitted: u64,
    flows_omitted: u64,
}

/// A daemon as JSON, on the dashboard and on `/status`.
#[derive(Serialize)]
pub(super) struct DaemonRow {
    port: usize,
    addr: String,
    nic_bytes_per_s: f64,
    connected: bool,
    objects: u32,
}

impl DaemonRow {
    pub(super) fn new(port: usize, d: &Daemon) -> Self {
        DaemonRow {
            port,
            addr: d.addr.clone(),
            nic_bytes_per_s: d.nic_bytes_per_s,
            connected: d.connected,
            objects: d.objects,
        }
    }
}

#[derive(Serialize)]
struct JsonCoflow {
    id: u64,
    name: String,
    age_s: f64,
    ready: bool,
    parents: Vec<u64>,
    dag: Option<String>,
    sent_bytes: u64,
    flows_omitted: u32,
    flows: Vec<JsonFlow>,
}

#[derive(Serialize)]
struct JsonFlow {
    src: String,
    dst: Option<String>,
    data_id: String,
    size_bytes: f64,
    sent_bytes: f64,
    bytes_per_s: f64,
    done: bool,
}

/// Bytes `v` takes as JSON, counted without keeping them.
pub(super) fn json_len(v: &impl Serialize) -> usize {
    struct Count(usize);
    impl io::Write for Count {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

struct Json {
    now: f64,
}

impl Encoding for Json {
    type Daemon = DaemonRow;
    type Coflow = JsonCoflow;
    type Flow = JsonFlow;
    fn daemon(&self, _: &State, port: usize, d: &Daemon) -> DaemonRow {
        DaemonRow::new(port, d)
    }
    fn coflow(&self, s: &State, c: &CoflowRec, flows: &[&FlowRec]) -> JsonCoflow {
        JsonCoflow {
            id: c.id,
            name: c.name.clone(),
            age_s: self.now - c.arrival_s,
            ready: c.ready(),
            parents: c.parents.clone(),
            dag: (s.dag_pos(c.id)).map(|d| format!("{}.{}", d.external, d.internal)),
            sent_bytes: status::sent_bytes(flows),
            flows_omitted: u32::MAX,
            flows: Vec::new(),
        }
    }
    fn flow(&self, s: &State, f: &FlowRec) -> JsonFlow {
        let addr = |port: usize| s.daemons()[port].addr.clone();
        JsonFlow {
            src: addr(f.src),
            dst: f.dst.map(addr),
            data_id: f.data_id.clone(),
            size_bytes: f.size_bytes,
            sent_bytes: f.sent_bytes,
            bytes_per_s: f.rate,
            done: f.done,
        }
    }
    // Each entry with the comma that separates it from the next.
    fn daemon_len(&self, d: &DaemonRow) -> usize {
        json_len(d) + 1
    }
    fn coflow_len(&self, c: &JsonCoflow) -> usize {
        json_len(c) + 1
    }
    fn flow_len(&self, f: &JsonFlow) -> usize {
        json_len(f) + 1
    }
}

/// The document at most `budget` bytes long.
pub fn document(
    s: &State,
    now: f64,
    scheduler: &str,
    last_decision_s: f64,
    budget: usize,
) -> Vec<u8> {
    let mut top = Top {
        protocol_version: crate::PROTOCOL_VERSION,
        scheduler: scheduler.to_string(),
        rounds: s.rounds(),
        uptime_s: now,
        last_decision_s,
        daemons: Vec::new(),
        coflows: Vec::new(),
        max_bytes: budget,
        daemons_omitted: u32::MAX,
        coflows_omitted: u64::MAX,
        flows_omitted: u64::MAX,
    };
    let head = json_len(&top);
    let l = status::listing(s, &Json { now }, budget.saturating_sub(head));
    top.daemons = l.daemons;
    top.coflows = (l.coflows.into_iter())
        .map(|(mut c, flows, omitted)| {
            c.flows = flows;
            c.flows_omitted = omitted;
            c
        })
        .collect();
    top.daemons_omitted = l.daemons_omitted;
    top.coflows_omitted = l.coflows_omitted;
    top.flows_omitted = l.flows_omitted;
    serde_json::to_vec(&top).unwrap_or_default()
}

fn json(shared: &Shared) -> Vec<u8> {
    let now = shared.now_s();
    let last_decision_s = *shared
        .last_decision_s
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let s = shared.state.lock().unwrap_or_else(|p| p.into_inner());
    document(
        &s,
        now,
        &shared.scheduler,
        last_decision_s,
        STATUS_MAX_BYTES,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::FlowInfo;

    /// Every entry is listed or counted, and the document stays within its bound whatever the
    /// bound (the JSON twin of `status::tests`).
    #[test]
    fn the_document_lists_what_fits_and_counts_the_rest() {
        let mut s = State::new(1);
        let a = s.register_daemon(0.0, "a:1", 100.0, &[], &[]);
        s.register_daemon(0.0, "b:1", 100.0, &[], &[]);
        for c in 0..20u64 {
            let id = (s.register_coflow(0.0, format!("c\"{c}"), 0, None, 1.0, vec![])).unwrap();
            for f in 0..30u64 {
                let info = FlowInfo {
                    flow: c * 30 + f,
                    coflow: id,
                    // Escaped in JSON: longer there than as read.
                    data_id: format!("o\u{1}\"{f}"),
                    dst: "b:1".into(),
                    size_bytes: 1000,
                    sent_bytes: 10,
                    size_pending: false,
                };
                s.start_flow(0.0, a, &info);
            }
        }
        for budget in [300, 1000, 5000, 20_000, 1 << 20] {
            let doc = document(&s, 1.0, "fair", 0.0, budget);
            assert!(doc.len() <= budget, "{} > {budget}", doc.len());
            let v: serde_json::Value = serde_json::from_slice(&doc).unwrap();
            let coflows = v["coflows"].as_array().unwrap();
            let listed: u64 = (coflows.iter())
                .map(|c| c["flows"].as_array().unwrap().len() as u64)
                .sum();
            assert_eq!(listed + v["flows_omitted"].as_u64().unwrap(), 600);
            let omitted = v["coflows_omitted"].as_u64().unwrap();
            assert_eq!(coflows.len() as u64 + omitted, 20);
            if budget < 100_000 {
                assert!(listed < 600, "budget {budget} cuts");
            } else {
                assert_eq!(listed, 600);
                assert_eq!(v["daemons"].as_array().unwrap().len(), 2);
                assert_eq!(coflows[3]["flows"][2]["data_id"], "o\u{1}\"2");
            }
        }
    }
}

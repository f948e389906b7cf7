//! The live dashboard: `/` is one page compiled into the binary (HTML, CSS and JS inline, no
//! CDN), `/events` a server-sent event stream. A sampler reads the coordinator's state once a
//! second into a five-minute history (per-port uplink and downlink utilization measured from the
//! bytes flows reported, decision latency, rounds); a new page gets the history in a `hello`
//! event, then one `tick` a second with the latest sample, the active coflows (with their place
//! in the scheduler's priority order) and the daemons.
//!
//! Everything the page shows is read from the state in [`observe`], through the same fields
//! `/status` reads.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State as Ext;
use axum::http::{header, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde::Serialize;
use tokio::sync::{watch, Semaphore};
use tokio_stream::wrappers::WatchStream;
use tokio_stream::StreamExt;

use super::super::service::Shared;
use super::status_page::{json_len, DaemonRow};

/// The page, served as is.
const PAGE: &str = include_str!("dashboard.html");
/// Seconds between samples, and samples kept (five minutes).
const PERIOD: Duration = Duration::from_secs(1);
const HISTORY: usize = 300;
/// Bytes of JSON a tick's live view (daemons, then coflows) and a `hello`'s history may take:
/// at 8,192 coflows and 4,096 daemons they were megabytes, copied into every stream.
pub const LIVE_MAX_BYTES: usize = 1 << 20;
pub const HISTORY_MAX_BYTES: usize = 1 << 20;
/// Event streams open at once; past them `/events` answers 503 with `Retry-After`.
pub const STREAMS: usize = 16;

/// One second of the fabric.
#[derive(Serialize, Clone)]
pub struct Sample {
    /// Seconds since the coordinator started.
    t_s: f64,
    /// Per daemon port: bytes sent over the last period / (period x NIC rate), each way.
    up: Vec<f64>,
    down: Vec<f64>,
    /// Duration of the last scheduling round, and rounds in this period.
    decision_ms: f64,
    rounds: u64,
}

#[derive(Serialize)]
struct CoflowRow {
    /// As text: ids use all 64 bits, past what a JavaScript number holds exactly.
    id: String,
    name: String,
    age_s: f64,
    ready: bool,
    dag: Option<String>,
    flows: usize,
    flows_done: usize,
    size_bytes: f64,
    sent_bytes: f64,
    /// Sum of the rates the scheduler gives the coflow's flows now.
    bytes_per_s: f64,
    /// Its place (1 = first) in the scheduler's priority order at the last round (queue, then
    /// order within the queue, for Aalo and Saath); `None` when the policy keeps no order or
    /// the coflow was not in that round.
    order: Option<usize>,
}

/// What a tick carries besides the sample.
#[derive(Serialize)]
struct Live {
    scheduler: String,
    uptime_s: f64,
    rounds: u64,
    daemons: Vec<DaemonRow>,
    /// Whether the scheduler orders coflows (else it shares bandwidth between them).
    ordered: bool,
    /// Unfinished coflows in the scheduler's priority order, then those it did not place in
    /// arrival order.
    coflows: Vec<CoflowRow>,
    /// Left out of `daemons` and `coflows` by [`LIVE_MAX_BYTES`].
    daemons_omitted: usize,
    coflows_omitted: usize,
}

/// Samples kept, and the latest tick (JSON) for the event streams.
pub struct Board {
    history: Mutex<VecDeque<Sample>>,
    tick: watch::Sender<Arc<str>>,
    streams: Arc<Semaphore>,
}

impl Board {
    /// The board, and its sampler on the current runtime (it ends with the runtime).
    pub fn start(shared: Arc<Shared>) -> Arc<Board> {
        let board = Arc::new(Board {
            history: Mutex::new(VecDeque::with_capacity(HISTORY)),
            tick: watch::channel(Arc::from("{}")).0,
            streams: Arc::new(Semaphore::new(STREAMS)),
        });
        let b = board.clone();
        tokio::spawn(async move {
            let mut sampler = Sampler::default();
            let mut every = tokio::time::interval(PERIOD);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                let (sample, live) = sampler.observe(&shared);
                let tick = serde_json::json!({ "sample": &sample, "live": live }).to_string();
                {
                    let mut h = b.history.lock().unwrap_or_else(|p| p.into_inner());
                    if h.len() == HISTORY {
                        h.pop_front();
                    }
                    h.push_back(sample);
                }
                b.tick.send_replace(Arc::from(tick));
            }
        });
        board
    }
}

/// What the previous sample saw: bytes sent per flow, rounds.
#[derive(Default)]
struct Sampler {
    sent: HashMap<(usize, u64), f64>,
    rounds: u64,
    last: Option<std::time::Instant>,
}

impl Sampler {
    /// Read the state once: this period's sample and the live view.
    fn observe(&mut self, shared: &Shared) -> (Sample, Live) {
        let t_s = shared.now_s();
        let last_decision_s = *shared
            .last_decision_s
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let s = shared.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = std::time::Instant::now();
        let dt = self
            .last
            .map_or(PERIOD.as_secs_f64(), |t| (now - t).as_secs_f64())
            .max(1e-3);
        self.last = Some(now);
        let ports = s.daemons().len();
        let (mut up, mut down) = (vec![0.0; ports], vec![0.0; ports]);
        let mut seen = HashMap::new();
        for (k, f) in s.flows() {
            // A flow unknown last time counts from zero; a forgotten one stops counting.
            let delta = (f.sent_bytes - self.sent.get(k).copied().unwrap_or(0.0)).max(0.0);
            seen.insert(*k, f.sent_bytes);
            if let Some(u) = up.get_mut(f.src) {
                *u += delta;
            }
            if let Some(d) = f.dst.and_then(|d| down.get_mut(d)) {
                *d += delta;
            }
        }
        self.sent = seen;
        for (i, d) in s.daemons().iter().enumerate() {
            let cap = d.nic_bytes_per_s * dt;
            for v in [&mut up[i], &mut down[i]] {
                *v = if cap > 0.0 { *v / cap } else { 0.0 };
            }
        }
        let sample = Sample {
            t_s,
            up,
            down,
            decision_ms: last_decision_s * 1e3,
            rounds: s.rounds() - self.rounds.min(s.rounds()),
        };
        self.rounds = s.rounds();
        let place: HashMap<u64, usize> = (s.priority_order().iter())
            .enumerate()
            .map(|(i, &id)| (id, i + 1))
            .collect();
        let mut coflows: Vec<CoflowRow> = s
            .coflows()
            .map(|c| {
                let flows: Vec<_> = c.flows.iter().filter_map(|k| s.flow(*k)).collect();
                CoflowRow {
                    id: c.id.to_string(),
                    name: c.name.clone(),
                    age_s: t_s - c.arrival_s,
                    ready: flows.len() >= c.num_flows as usize,
                    dag: s
                        .dag_pos(c.id)
                        .map(|d| format!("{}.{}", d.external, d.internal)),
                    flows: (c.num_flows as usize).max(flows.len()),
                    flows_done: flows.iter().filter(|f| f.done).count(),
                    size_bytes: flows.iter().map(|f| f.size_bytes).sum(),
                    sent_bytes: flows.iter().map(|f| f.sent_bytes).sum(),
                    bytes_per_s: flows.iter().filter(|f| !f.done).map(|f| f.rate).sum(),
                    order: place.get(&c.id).copied(),
                }
            })
            .filter(|c| c.flows_done < c.flows || c.flows == 0)
            .collect();
        coflows.sort_by(|a, b| {
            let key = |c: &CoflowRow| c.order.unwrap_or(usize::MAX);
            key(a).cmp(&key(b)).then(b.age_s.total_cmp(&a.age_s))
        });
        let mut room = LIVE_MAX_BYTES;
        let (daemons, daemons_omitted) = within(
            &mut room,
            (s.daemons().iter().enumerate())
                .filter(|(_, d)| !d.gone)
                .map(|(port, d)| DaemonRow::new(port, d)),
        );
        let (coflows, coflows_omitted) = within(&mut room, coflows);
        let live = Live {
            scheduler: shared.scheduler.clone(),
            uptime_s: t_s,
            rounds: s.rounds(),
            ordered: !place.is_empty(),
            daemons,
            coflows,
            daemons_omitted,
            coflows_omitted,
        };
        (sample, live)
    }
}

/// The first of `rows` while their JSON fits `room` (taken from it), and how many were left out.
fn within<T: Serialize>(room: &mut usize, rows: impl IntoIterator<Item = T>) -> (Vec<T>, usize) {
    let (mut kept, mut left) = (Vec::new(), 0);
    for r in rows {
        let n = json_len(&r) + 1;
        if left > 0 || n > *room {
            left += 1;
            continue;
        }
        *room -= n;
        kept.push(r);
    }
    (kept, left)
}

/// `/` and `/events`, on the router of `/metrics` and `/status`; `/hold` for headless browsers.
pub fn routes(board: Arc<Board>) -> Router<Arc<Shared>> {
    Router::new()
        .route("/", get(page))
        .route("/hold", get(hold))
        .route(
            "/events",
            get(move || {
                let board = board.clone();
                async move { events(board) }
            }),
        )
}

async fn page(Ext(_): Ext<Arc<Shared>>) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        PAGE,
    )
}

/// An empty answer after `?ms=` milliseconds (at most 10 s). The page opened as `/?hold=MS`
/// loads an image from here, so its load event (when a headless browser dumps the DOM or takes
/// a screenshot) comes after MS of live updates.
async fn hold(axum::extract::RawQuery(q): axum::extract::RawQuery) -> axum::http::StatusCode {
    let ms = q
        .as_deref()
        .and_then(|q| q.strip_prefix("ms="))
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0)
        .min(10_000);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    axum::http::StatusCode::NO_CONTENT
}

/// The history once (its latest samples within [`HISTORY_MAX_BYTES`]), then every tick; 503
/// when [`STREAMS`] streams are open.
fn events(board: Arc<Board>) -> Response {
    let Ok(turn) = board.streams.clone().try_acquire_owned() else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "5")],
            format!("{STREAMS} event streams are open; try again\n"),
        )
            .into_response();
    };
    let mut history: Vec<Sample> = {
        let h = board.history.lock().unwrap_or_else(|p| p.into_inner());
        let mut room = HISTORY_MAX_BYTES;
        (h.iter().rev())
            .take_while(|s| {
                let n = json_len(s) + 1;
                room = room.saturating_sub(n);
                room > 0
            })
            .cloned()
            .collect()
    };
    history.reverse();
    // The latest tick too, so the page fills at once.
    let last: serde_json::Value =
        serde_json::from_str(&board.tick.borrow()).unwrap_or(serde_json::Value::Null);
    let hello =
        serde_json::json!({ "period_s": PERIOD.as_secs_f64(), "history": history, "last": last });
    let hello = Event::default().event("hello").data(hello.to_string());
    let mut rx = board.tick.subscribe();
    rx.mark_unchanged();
    // The stream holds its turn until the reader leaves.
    let ticks = WatchStream::from_changes(rx).map(move |t| {
        let _turn = &turn;
        Ok::<_, Infallible>(Event::default().event("tick").data(&*t))
    });
    Sse::new(tokio_stream::once(Ok(hello)).chain(ticks))
        .keep_alive(KeepAlive::default())
        .into_response()
}

//! The coordinator's dashboard against a running cluster with a workload in progress: the page
//! (self-contained: nothing fetched from elsewhere), its event stream, and the page in a real
//! headless Chromium (Debian's `chromium`; `NOT RUN` when there is none): the DOM lists the
//! active coflows in the scheduler's priority order with their places, and the charts' sample
//! counts grow between two loads.
//!
//! `DASHBOARD_SCREENSHOT=docs/dashboard.png` also saves a screenshot;
//! `DASHBOARD_HOLD_S=60` keeps the cluster and its workload up that long, printing the URL, for
//! a look by hand.

mod common;

use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

use coflowkit_runtime::{
    coordinator, daemon, Client, ClientConfig, CoflowOptions, CoordinatorConfig, DaemonConfig,
    Running,
};
use coflowkit_sched::SchedulerKind;
use common::{bytes, loopback, token};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const HOSTS: usize = 4;
/// NIC of each daemon: 4 MB/s, so a 3x3 coflow of 1.5 MB flows takes about a second.
const NIC: f64 = 4e6;

async fn http_get(addr: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(format!("GET {path} HTTP/1.0\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

/// The first `n` server-sent events of `/events`, as (event, data).
async fn events(addr: SocketAddr, n: usize) -> Vec<(String, serde_json::Value)> {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
        .await
        .unwrap();
    let mut text = String::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while out.len() < n && Instant::now() < deadline {
        let k = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
            .await
            .expect("an event within 5 s")
            .unwrap();
        assert!(k > 0, "stream closed");
        text.push_str(&String::from_utf8_lossy(&buf[..k]));
        // Chunked transfer: event blocks end with a blank line; chunk sizes sit on lines of
        // their own between them and never start with `event:` or `data:`.
        while let Some(end) = text.find("\n\n") {
            let block: String = text.drain(..end + 2).collect();
            let ev = block
                .lines()
                .find_map(|l| l.strip_prefix("event: "))
                .map(str::to_string);
            let data: String = block
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            if let Some(ev) = ev {
                out.push((ev, serde_json::from_str(&data).expect("JSON data")));
            }
        }
    }
    out
}

/// Coflows of 3 mappers x 3 reducers arriving every 400 ms, each unregistered when its gets end.
async fn workload(clients: Vec<Client>, coflows: usize) {
    let mut jobs = Vec::new();
    for i in 0..coflows {
        let clients = clients.clone();
        jobs.push(tokio::spawn(async move {
            let mappers: Vec<usize> = (0..3).map(|m| (i + m) % HOSTS).collect();
            let reducers: Vec<usize> = (0..3).map(|r| (i + r + 1) % HOSTS).collect();
            let c = clients[0]
                .register(CoflowOptions::flows(9).name(&format!("job-{i}")))
                .await
                .unwrap();
            let size = 500_000 * (1 + i % 3);
            for &m in &mappers {
                for &r in &reducers {
                    clients[m]
                        .put(
                            c,
                            &format!("m{m}-r{r}"),
                            &bytes((i * 16 + m * 4 + r) as u64, size),
                        )
                        .await
                        .unwrap();
                }
            }
            let gets: Vec<_> = mappers
                .iter()
                .flat_map(|&m| reducers.iter().map(move |&r| (m, r)))
                .map(|(m, r)| {
                    let cl = clients[r].clone();
                    tokio::spawn(async move { cl.get(c, &format!("m{m}-r{r}")).await })
                })
                .collect();
            for g in gets {
                assert_eq!(g.await.unwrap().unwrap().len(), size);
            }
            clients[0].unregister(c).await.unwrap();
        }));
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    for j in jobs {
        j.await.unwrap();
    }
}

struct Setup {
    coordinator: Running,
    _daemons: Vec<Running>,
    clients: Vec<Client>,
}

async fn cluster() -> Setup {
    let mut cfg = CoordinatorConfig::new(token(), SchedulerKind::Varys);
    // No starvation intervals: in those all but the starved coflows wait and Varys keeps no
    // priority order, so a check of the order could land on one.
    cfg.options.varys.starvation = None;
    cfg.metrics = Some(loopback());
    let coordinator = coordinator::spawn(cfg, loopback()).unwrap();
    let caddr = coordinator.addr().to_string();
    let daemons: Vec<Running> = (0..HOSTS)
        .map(|_| daemon::spawn(DaemonConfig::new(caddr.clone(), token(), NIC), loopback()).unwrap())
        .collect();
    let maddr = coordinator.metrics_addr().unwrap();
    for _ in 0..200 {
        if http_get(maddr, "/metrics")
            .await
            .contains(&format!("coflowkit_daemons_connected {HOSTS}"))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let mut clients = Vec::new();
    for d in &daemons {
        let c = ClientConfig::new(&caddr, &d.addr().to_string(), token());
        clients.push(Client::connect(c).await.unwrap());
    }
    Setup {
        coordinator,
        _daemons: daemons,
        clients,
    }
}

fn chromium() -> Option<String> {
    if let Ok(p) = std::env::var("CHROMIUM") {
        return Some(p);
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(str::to_string)
}

/// Chromium's headless flags for this machine (root, no GPU, no first-run noise), a fresh
/// profile each time. Headless Chromium dumps or shoots at the load event (the open event
/// stream makes `--virtual-time-budget` wait forever), so the page is opened as `?hold=MS`,
/// which holds its load event MS of live updates; `--timeout` is the safety net.
fn headless(bin: &str, profile: &std::path::Path, wait_ms: u64) -> Command {
    let mut c = Command::new(bin);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--hide-scrollbars",
        "--window-size=1400,1000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!("--timeout={}", wait_ms + 8000));
    c
}

fn attr(dom: &str, id: &str, name: &str) -> u64 {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id}"));
    let tag_end = at + dom[at..].find('>').unwrap();
    let tag = &dom[dom[..at].rfind('<').unwrap()..tag_end];
    let key = format!("{name}=\"");
    tag.find(&key)
        .map(|i| {
            let v = &tag[i + key.len()..];
            v[..v.find('"').unwrap()].parse().unwrap()
        })
        .unwrap_or(0)
}

/// Rows of coflows in the scheduler's order: some placed, places rising, unplaced ones (not in
/// the last round) after them.
fn check_order(places: &[Option<u64>], what: &str) {
    let placed: Vec<u64> = places.iter().map_while(|p| *p).collect();
    assert!(
        !placed.is_empty(),
        "no coflow has a place in the order: {what}"
    );
    assert!(placed.windows(2).all(|w| w[0] < w[1]), "{placed:?}: {what}");
    assert!(
        places[placed.len()..].iter().all(Option::is_none),
        "{places:?}: {what}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_dashboard_shows_a_running_workload() {
    let setup = cluster().await;
    let maddr = setup.coordinator.metrics_addr().unwrap();
    let hold = std::env::var("DASHBOARD_HOLD_S")
        .ok()
        .and_then(|s| s.parse::<u64>().ok());
    // Enough coflows to keep arriving through the browser's two loads.
    let coflows = if hold.is_some() { 400 } else { 60 };
    let driver = tokio::spawn(workload(setup.clients.clone(), coflows));

    // The page: HTML, self-contained (no script, style or image from elsewhere).
    let page = http_get(maddr, "/").await;
    assert!(page.starts_with("HTTP/1.0 200"), "{page}");
    assert!(page.contains("text/html"));
    for outside in [
        "src=\"http",
        "href=\"http",
        "src=\"//",
        "href=\"//",
        "@import",
    ] {
        assert!(!page.contains(outside), "the page fetches {outside}...");
    }
    // /metrics and /status as before.
    assert!(http_get(maddr, "/metrics")
        .await
        .contains("coflowkit_daemons_connected 4"));
    assert!(http_get(maddr, "/status")
        .await
        .contains("\"scheduler\":\"varys\""));
    assert!(http_get(maddr, "/nope").await.starts_with("HTTP/1.0 404"));

    // Wait for coflows to be under way, then read the event stream: the history, then ticks
    // a second apart that list the coflows and the daemons, with bytes moving.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let evs = events(maddr, 3).await;
    assert_eq!(evs[0].0, "hello");
    assert!(!evs[0].1["history"].as_array().unwrap().is_empty());
    let ticks: Vec<_> = evs[1..].iter().filter(|(e, _)| e == "tick").collect();
    assert_eq!(ticks.len(), 2);
    let (t1, t2) = (&ticks[0].1, &ticks[1].1);
    assert!(t2["sample"]["t_s"].as_f64() > t1["sample"]["t_s"].as_f64());
    let live = &t2["live"];
    assert_eq!(live["scheduler"], "varys");
    assert_eq!(live["daemons"].as_array().unwrap().len(), HOSTS);
    assert!(live["daemons"]
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d["connected"] == true));
    let names: Vec<&str> = live["coflows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("job-")), "{live}");
    // Varys orders coflows (SEBF): the rows come in its priority order.
    assert_eq!(live["ordered"], true, "{live}");
    let places: Vec<Option<u64>> = (live["coflows"].as_array().unwrap().iter())
        .map(|c| c["order"].as_u64())
        .collect();
    check_order(&places, &live.to_string());
    let used: f64 = ticks
        .iter()
        .flat_map(|(_, t)| t["sample"]["up"].as_array().unwrap().clone())
        .filter_map(|u| u.as_f64())
        .sum();
    assert!(used > 0.0, "no uplink carried bytes: {ticks:?}");

    // The page in a real browser.
    let url = format!("http://{maddr}/");
    if let Some(secs) = hold {
        println!("dashboard at {url} for {secs} s");
        tokio::time::sleep(Duration::from_secs(secs)).await;
    }
    match chromium() {
        None => println!("NOT RUN: the browser check (no chromium; apt-get install chromium)"),
        Some(bin) => {
            let dir = tempfile::tempdir().unwrap();
            let dump = |wait: u64, n: u32| {
                let mut c = headless(&bin, &dir.path().join(format!("p{n}")), wait);
                let out = c
                    .arg("--dump-dom")
                    .arg(format!("{url}?hold={wait}"))
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                String::from_utf8(out.stdout).unwrap()
            };
            let dom1 = tokio::task::block_in_place(|| dump(3000, 1));
            let dom2 = tokio::task::block_in_place(|| dump(3000, 2));
            for dom in [&dom1, &dom2] {
                let rows = &dom[dom.find("<tbody>").unwrap_or(0)..];
                let rows = &rows[..rows.find("</table>").unwrap_or(rows.len())];
                assert!(rows.contains("<tr data-id="), "no coflow rows in\n{rows}");
                assert!(rows.contains(">job-"), "no coflow names in\n{rows}");
                // Each row carries its place in the scheduler's order, rows sorted by it.
                let places: Vec<Option<u64>> = rows
                    .split("data-order=\"")
                    .skip(1)
                    .map(|r| r[..r.find('"').unwrap()].parse().ok())
                    .collect();
                check_order(&places, rows);
                let first = places[0].unwrap();
                assert!(
                    rows.contains(&format!("<td class=\"order\">{first}</td>")),
                    "the order column does not show {first}: {rows}"
                );
                assert!(dom.contains("connected</td>"), "no daemon health in\n{dom}");
                assert_eq!(attr(dom, "up", "data-ports"), HOSTS as u64);
            }
            // The charts hold more samples on the second load: the history grows a sample a
            // second and the page draws what the stream sends.
            let (s1, s2) = (
                attr(&dom1, "up", "data-samples"),
                attr(&dom2, "up", "data-samples"),
            );
            assert!(s2 > s1, "charts did not grow: {s1} then {s2} samples");
            assert!(attr(&dom2, "latency", "data-samples") >= s2);
            // And the page took ticks from the stream while it was open.
            let ticks = attr(&dom2, "ticks", "data-n");
            println!("browser: {s1} then {s2} samples; {ticks} live ticks in the second load");
            assert!(ticks >= 1, "the page drew no live tick in 3 s");
            if let Ok(shot) = std::env::var("DASHBOARD_SCREENSHOT") {
                let shot = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../..")
                    .join(shot);
                let mut c = headless(&bin, &dir.path().join("shot"), 4000);
                let out = c
                    .arg(format!("--screenshot={}", shot.display()))
                    .arg(format!("{url}?hold=4000"))
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                println!("screenshot: {}", shot.display());
            }
        }
    }
    driver.abort();
}

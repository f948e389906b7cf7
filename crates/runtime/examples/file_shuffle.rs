//! A distributed shuffle of files with the coflow API: every mapper host splits its input file
//! into one partition per reducer (by a hash of each line) and `put`s the partitions; every
//! reducer `get`s its partition from every mapper and writes them out. The whole shuffle is one
//! coflow, so the coordinator schedules it as a unit.
//!
//! ```text
//! cargo run -p coflowkit-runtime --example file_shuffle -- [FILE ...]
//! ```
//!
//! With no files it makes three. It starts a coordinator and one daemon per file on loopback;
//! on real machines start `coflowkit coordinator` and `coflowkit daemon` instead and give each
//! host's client its coordinator and local daemon address (`ClientConfig::new`).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

use coflowkit_runtime::{
    coordinator, daemon, Client, ClientConfig, CoflowOptions, CoordinatorConfig, DaemonConfig,
    Token,
};
use coflowkit_sched::SchedulerKind;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let work = std::env::temp_dir().join(format!("file-shuffle-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let mut inputs: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if inputs.is_empty() {
        for m in 0..3 {
            let p = work.join(format!("input-{m}.txt"));
            let text: String = (0..20_000)
                .map(|i| format!("host {m} record {i}\n"))
                .collect();
            std::fs::write(&p, text)?;
            inputs.push(p);
        }
    }
    let hosts = inputs.len();

    // The cluster: a coordinator running Varys and a daemon per host at 200 Mbit/s.
    let token = Token::new("file-shuffle-example")?;
    let any = "127.0.0.1:0".parse()?;
    let coord = coordinator::spawn(
        CoordinatorConfig::new(token.clone(), SchedulerKind::Varys),
        any,
    )?;
    let caddr = coord.addr().to_string();
    let daemons: Vec<_> = (0..hosts)
        .map(|_| daemon::spawn(DaemonConfig::new(caddr.clone(), token.clone(), 25e6), any))
        .collect::<Result<_, _>>()?;
    let mut clients = Vec::new();
    for d in &daemons {
        let cfg = ClientConfig::new(&caddr, &d.addr().to_string(), token.clone());
        clients.push(Client::connect(cfg).await?);
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await; // daemons register

    // Driver: one coflow of hosts × hosts flows.
    let coflow = clients[0]
        .register(CoflowOptions::flows((hosts * hosts) as u32).name("file-shuffle"))
        .await?;

    // Mappers: partition and put (on their own host's daemon).
    let mut lines_in = 0usize;
    for (m, path) in inputs.iter().enumerate() {
        let text = std::fs::read_to_string(path)?;
        let mut parts = vec![String::new(); hosts];
        for line in text.lines() {
            let mut h = DefaultHasher::new();
            line.hash(&mut h);
            parts[(h.finish() % hosts as u64) as usize].push_str(line);
            parts[(h.finish() % hosts as u64) as usize].push('\n');
            lines_in += 1;
        }
        for (r, part) in parts.iter().enumerate() {
            clients[m]
                .put(coflow, &format!("m{m}-r{r}"), part.as_bytes())
                .await?;
        }
    }

    // Reducers: fetch every mapper's partition, concurrently.
    let started = std::time::Instant::now();
    let mut tasks = Vec::new();
    for (r, client) in clients.iter().enumerate() {
        let client = client.clone();
        let out = work.join(format!("output-{r}.txt"));
        tasks.push(tokio::spawn(async move {
            // All gets at once: the coflow is READY (scheduled) only when all hosts² have
            // started, so a reducer fetching one partition after another would wait forever.
            let gets: Vec<_> = (0..hosts)
                .map(|m| {
                    let c = client.clone();
                    tokio::spawn(async move { c.get(coflow, &format!("m{m}-r{r}")).await })
                })
                .collect();
            let mut all = Vec::new();
            for g in gets {
                all.extend(g.await.expect("get task")?);
            }
            std::fs::write(&out, &all).map_err(|e| coflowkit_runtime::Error::Io {
                what: out.display().to_string(),
                source: e,
            })?;
            Ok::<usize, coflowkit_runtime::Error>(all.iter().filter(|&&b| b == b'\n').count())
        }));
    }
    let mut lines_out = 0;
    for t in tasks {
        lines_out += t.await??;
    }
    clients[0].unregister(coflow).await?;
    println!(
        "shuffled {lines_in} lines from {hosts} hosts in {:.3} s; outputs in {}",
        started.elapsed().as_secs_f64(),
        work.display()
    );
    assert_eq!(lines_in, lines_out, "every line arrives exactly once");
    Ok(())
}

//! An emulated cluster whose NICs are real: one Linux network namespace per host, each joined to
//! a bridge in the root namespace by a veth pair, with a `tc` token-bucket filter (tbf) on both
//! ends of every veth: the host's end shapes what it sends (its uplink), the bridge's end what it
//! receives (its downlink). Rates may differ per host.
//!
//! A second, unshaped network carries the control plane: each host has a second veth (`ctl0`)
//! on a second bridge and /24, where the coordinator listens. Real NICs have shallow queues and
//! control messages are small, so a rate table or a register RPC does not wait behind a
//! host's queued data there; behind a 50 ms `tbf` queue it would.
//!
//! With racks ([`Racks`]), each rack's hosts sit on a bridge of their own, joined to the data
//! bridge (then the core) by a veth pair shaped by tbf to the core rate each way: cross-rack
//! traffic shares that link, as behind an oversubscribed top-of-rack switch.
//!
//! Everything is made with `ip` and `tc` and named with a per-run prefix (`ck<pid hex>-<run>`),
//! on a private /24 not routed anywhere else, so concurrent runs never collide. A
//! [`NetnsCluster`] removes what it made when dropped (also on errors and panics),
//! [`teardown_all`] does it from a signal handler, and every new cluster first sweeps what a
//! killed process (SIGKILL) left behind: names whose process is gone.
//!
//! Code runs inside a host through [`NetnsCluster::in_host`]: a thread that joined the namespace
//! (`setns`). A socket belongs to the namespace of the thread that creates it and a new thread
//! starts in the namespace of the thread that spawns it, so a daemon or a tokio runtime started
//! there has every socket inside the host.

use std::collections::HashMap;
use std::io::Write;
use std::net::Ipv4Addr;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use crate::error::{NetnsError, Result};
use crate::host::HostNs;

/// Bytes on the wire per byte of TCP payload with MTU 1500: a full segment carries 1448 bytes
/// (TCP timestamps on) in a 1514-byte frame as `tc` counts it. The rate of a host is the payload
/// rate the scheduler assigns; shaping the wire at the bare rate lets TCP deliver only 95.6% of
/// it (measured: an 8-host shuffle at 92% of the rate instead of 98%), the daemons' pacers run
/// ahead and the surplus piles up in socket buffers, which keep sending after a preemption.
pub const WIRE_PER_PAYLOAD: f64 = 1514.0 / 1448.0;

/// Each host's unshaped control NIC inside its namespace; `eth0` is the shaped data NIC.
pub const CONTROL_NIC: &str = "ctl0";

/// Most hosts on one /24 (the bridge takes .254).
pub const MAX_HOSTS: usize = 253;

/// Whether this process can build a cluster: root, with `ip` and `tc` installed. The error says
/// what is missing.
pub fn available() -> Result<()> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    if uid != 0 {
        return Err(NetnsError::NotRoot(uid));
    }
    for tool in ["ip", "tc"] {
        if Command::new(tool).arg("-V").output().is_err() {
            return Err(NetnsError::Missing(tool));
        }
    }
    Ok(())
}

/// For tests: whether a cluster can be built here; if not, says so on stderr
/// (`NOT RUN: <test>: <why>`) so a skipped test is visible in the output.
pub fn can_run(test: &str) -> bool {
    match available() {
        Ok(()) => true,
        Err(why) => {
            eprintln!("NOT RUN: {test}: {why}");
            false
        }
    }
}

/// One emulated host.
#[derive(Debug, Clone)]
pub struct NsHost {
    /// The namespace's name (`ip netns`).
    pub namespace: String,
    /// Its address on the bridge; its NIC inside the namespace is `eth0`.
    pub ip: Ipv4Addr,
    /// Its address on the control bridge (NIC [`CONTROL_NIC`], not shaped).
    pub control_ip: Ipv4Addr,
    /// Rate of its NIC each way, bytes of TCP payload per second (the wire carries
    /// [`WIRE_PER_PAYLOAD`] times more).
    pub bytes_per_s: f64,
}

/// The hosts, their bridge and their rate limits; removed on drop.
#[derive(Debug)]
pub struct NetnsCluster {
    run: u64,
    prefix: String,
    bridge: String,
    bridge_ip: Ipv4Addr,
    control_bridge: String,
    control_ip: Ipv4Addr,
    hosts: Vec<NsHost>,
    racks: u32,
}

/// What a run made, in the order to undo it.
#[derive(Debug, Default)]
struct Made {
    veths: Vec<String>,
    namespaces: Vec<String>,
    bridges: Vec<String>,
}

/// Every live cluster of this process, for [`teardown_all`].
static LIVE: Mutex<Option<HashMap<u64, Made>>> = Mutex::new(None);
/// Serialises subnet choice inside the process (across processes the start point differs).
static CREATING: Mutex<()> = Mutex::new(());
static RUNS: AtomicU64 = AtomicU64::new(0);

fn live() -> std::sync::MutexGuard<'static, Option<HashMap<u64, Made>>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Set once [`teardown_all`] ran: the process is exiting and must make nothing more.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Make something that must be undone (`ip args`) and record it, atomically with respect to
/// [`teardown_all`]: either it is made and recorded before a teardown, or refused after one.
fn make(run: u64, args: &[&str], made: impl FnOnce(&mut Made)) -> Result<()> {
    let mut g = live();
    if CLOSED.load(Ordering::SeqCst) {
        return Err(NetnsError::Config(
            "interrupted: the process is exiting".into(),
        ));
    }
    ip(args)?;
    made(g.get_or_insert_with(HashMap::new).entry(run).or_default());
    Ok(())
}

/// How to build a cluster beyond its rates.
#[derive(Debug, Clone, Default)]
pub struct ClusterOptions {
    /// MTU of the data NICs (both ends of each data veth and the data bridge); `None` keeps the
    /// kernel's 1500. Jumbo frames (9000) cut the per-packet cost of a datagram transport.
    pub mtu: Option<u32>,
}

/// Hosts in racks: which rack each host is in, and the rate of each rack's link to the core.
#[derive(Debug, Clone, PartialEq)]
pub struct Racks {
    /// Rack of each host (index = host), numbered from 0.
    pub of_host: Vec<u32>,
    /// Rate of each rack's link to the core, bytes of TCP payload per second, each way.
    pub core_bytes_per_s: f64,
}

/// Most racks a cluster can have (two hex digits in a link's name).
pub const MAX_RACKS: u32 = 256;

impl NetnsCluster {
    /// Build one host per rate (bytes of TCP payload per second, each way).
    pub fn create(rates_bytes_per_s: &[f64]) -> Result<NetnsCluster> {
        Self::create_with(rates_bytes_per_s, &ClusterOptions::default())
    }

    /// [`NetnsCluster::create`] with options.
    pub fn create_with(rates_bytes_per_s: &[f64], opts: &ClusterOptions) -> Result<NetnsCluster> {
        Self::build(rates_bytes_per_s, opts, None)
    }

    /// [`NetnsCluster::create_with`] with the hosts in racks behind shaped core links.
    pub fn create_racked(
        rates_bytes_per_s: &[f64],
        opts: &ClusterOptions,
        racks: &Racks,
    ) -> Result<NetnsCluster> {
        if racks.of_host.len() != rates_bytes_per_s.len() {
            return Err(NetnsError::Config(format!(
                "racks: {} hosts placed, the cluster has {}",
                racks.of_host.len(),
                rates_bytes_per_s.len()
            )));
        }
        if let Some(r) = racks.of_host.iter().find(|&&r| r >= MAX_RACKS) {
            return Err(NetnsError::Config(format!(
                "rack {r}: racks are numbered 0 to {}",
                MAX_RACKS - 1
            )));
        }
        let c = racks.core_bytes_per_s;
        if !(c.is_finite() && c >= 1000.0) {
            return Err(NetnsError::Config(format!(
                "core link rate {c} bytes/s: must be at least 1000 bytes/s (8 kbit/s) and finite"
            )));
        }
        Self::build(rates_bytes_per_s, opts, Some(racks))
    }

    fn build(
        rates_bytes_per_s: &[f64],
        opts: &ClusterOptions,
        racks: Option<&Racks>,
    ) -> Result<NetnsCluster> {
        if let Some(mtu) = opts.mtu {
            // 68 is IPv4's minimum; 65535 is the most a veth or bridge accepts.
            if !(68..=65535).contains(&mtu) {
                return Err(NetnsError::Config(format!(
                    "MTU {mtu}: must be 68 to 65535 bytes"
                )));
            }
        }
        let n = rates_bytes_per_s.len();
        if n == 0 || n > MAX_HOSTS {
            return Err(NetnsError::Config(format!(
                "a network-namespace cluster has 1 to {MAX_HOSTS} hosts (one /24), not {n}"
            )));
        }
        for (h, &r) in rates_bytes_per_s.iter().enumerate() {
            // tc takes whole bits per second; below 8 kbit/s its burst arithmetic breaks down.
            if !(r.is_finite() && r >= 1000.0) {
                return Err(NetnsError::Config(format!(
                    "host {h}: NIC rate {r} bytes/s: must be at least 1000 bytes/s (8 kbit/s) and finite"
                )));
            }
        }
        available()?;
        sweep_stale();
        let pid = std::process::id();
        let run = RUNS.fetch_add(1, Ordering::Relaxed);
        // At most 15 bytes per link name: "ck" + 6 hex digits of the pid + "-" + 2 digits +
        // "h" (data) or "c" (control) + 2 hex digits of the host.
        let prefix = format!("ck{pid:x}-{}", run % 100);
        let mut cluster = NetnsCluster {
            run,
            bridge: format!("{prefix}b"),
            control_bridge: format!("{prefix}k"),
            prefix,
            bridge_ip: Ipv4Addr::UNSPECIFIED,
            control_ip: Ipv4Addr::UNSPECIFIED,
            hosts: Vec::new(),
            racks: 0,
        };
        // From here on, dropping `cluster` undoes whatever was made.
        let (subnet, control_subnet) = {
            let _one_at_a_time = CREATING.lock().unwrap_or_else(|p| p.into_inner());
            let seed = (pid as u64) << 32 | run;
            // The data bridge's address is up before the second choice, which so avoids it.
            let subnet = bridge(run, &cluster.bridge, seed)?;
            let control_subnet = bridge(run, &cluster.control_bridge, seed)?;
            cluster.bridge_ip = host_ip(subnet, 253);
            cluster.control_ip = host_ip(control_subnet, 253);
            (subnet, control_subnet)
        };
        if let Some(r) = racks {
            cluster.racks = r.of_host.iter().max().map_or(0, |&m| m + 1);
            cluster.add_racks(r.core_bytes_per_s)?;
        }
        for (h, &rate) in rates_bytes_per_s.iter().enumerate() {
            let ns = format!("{}h{h:x}", cluster.prefix);
            let veth = ns.clone();
            make(run, &["netns", "add", &ns], |m| {
                m.namespaces.push(ns.clone())
            })?;
            make(
                run,
                &[
                    "link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &ns,
                ],
                |m| m.veths.push(veth.clone()),
            )?;
            if let Some(mtu) = opts.mtu {
                let mtu = mtu.to_string();
                ip(&["link", "set", &veth, "mtu", &mtu])?;
                ip(&["-n", &ns, "link", "set", "eth0", "mtu", &mtu])?;
            }
            let master = match racks {
                Some(r) => cluster.rack_bridge(r.of_host[h]),
                None => cluster.bridge.clone(),
            };
            ip(&["link", "set", &veth, "master", &master, "up"])?;
            if let Some(mtu) = opts.mtu {
                ip(&["link", "set", &cluster.bridge, "mtu", &mtu.to_string()])?;
            }
            let addr = host_ip(subnet, h);
            ip(&[
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{addr}/24"),
                "dev",
                "eth0",
            ])?;
            ip(&["-n", &ns, "link", "set", "eth0", "up"])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
            // The control NIC: no qdisc of ours, so nothing queues control behind data.
            let cveth = format!("{}c{h:x}", cluster.prefix);
            make(
                run,
                &[
                    "link",
                    "add",
                    &cveth,
                    "type",
                    "veth",
                    "peer",
                    "name",
                    CONTROL_NIC,
                    "netns",
                    &ns,
                ],
                |m| m.veths.push(cveth.clone()),
            )?;
            ip(&[
                "link",
                "set",
                &cveth,
                "master",
                &cluster.control_bridge,
                "up",
            ])?;
            let control_ip = host_ip(control_subnet, h);
            ip(&[
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{control_ip}/24"),
                "dev",
                CONTROL_NIC,
            ])?;
            ip(&["-n", &ns, "link", "set", CONTROL_NIC, "up"])?;
            let tbf = tbf_args(rate);
            let tbf: Vec<&str> = tbf.iter().map(String::as_str).collect();
            // Downlink: what the bridge sends into the host.
            tc(&[&["qdisc", "replace", "dev", &veth, "root"], &tbf[..]].concat())?;
            // Uplink: what the host sends.
            tc(&[
                &["-n", &ns, "qdisc", "replace", "dev", "eth0", "root"],
                &tbf[..],
            ]
            .concat())?;
            cluster.hosts.push(NsHost {
                namespace: ns,
                ip: addr,
                control_ip,
                bytes_per_s: rate,
            });
        }
        Ok(cluster)
    }

    /// Rack bridges `<prefix>r<k>`, each joined to the data bridge by the veth pair
    /// `<prefix>u<k>` (in the rack bridge: what leaves the rack) / `<prefix>d<k>` (in the data
    /// bridge: what enters it), tbf at the core rate on both.
    fn add_racks(&mut self, core_bytes_per_s: f64) -> Result<()> {
        let run = self.run;
        let tbf = tbf_args(core_bytes_per_s);
        let tbf: Vec<&str> = tbf.iter().map(String::as_str).collect();
        for k in 0..self.racks {
            let br = self.rack_bridge(k);
            make(run, &["link", "add", &br, "type", "bridge"], |m| {
                m.bridges.push(br.clone())
            })?;
            ip(&["link", "set", &br, "up"])?;
            let (up, down) = self.uplink(k);
            make(
                run,
                &["link", "add", &up, "type", "veth", "peer", "name", &down],
                |m| m.veths.push(up.clone()),
            )?;
            ip(&["link", "set", &up, "master", &br, "up"])?;
            ip(&["link", "set", &down, "master", &self.bridge, "up"])?;
            tc(&[&["qdisc", "replace", "dev", &up, "root"], &tbf[..]].concat())?;
            tc(&[&["qdisc", "replace", "dev", &down, "root"], &tbf[..]].concat())?;
        }
        Ok(())
    }

    fn rack_bridge(&self, k: u32) -> String {
        format!("{}r{k:x}", self.prefix)
    }

    /// The veth pair of rack `k`'s core link: (rack end, core end).
    fn uplink(&self, k: u32) -> (String, String) {
        (
            format!("{}u{k:x}", self.prefix),
            format!("{}d{k:x}", self.prefix),
        )
    }

    /// Racks (0 without).
    pub fn racks(&self) -> u32 {
        self.racks
    }

    /// Bytes (on the wire, as tc counts them) that left rack `k` through its core link and
    /// that entered it: what crossed the core, for checking a topology-aware transfer.
    pub fn core_bytes(&self, k: u32) -> Result<(u64, u64)> {
        if k >= self.racks {
            return Err(NetnsError::Config(format!(
                "no rack {k} (the cluster has {})",
                self.racks
            )));
        }
        let (up, down) = self.uplink(k);
        Ok((sent_bytes(&up)?, sent_bytes(&down)?))
    }

    /// The per-run prefix of every name (namespaces, links).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    pub fn bridge(&self) -> &str {
        &self.bridge
    }

    /// The root namespace's address on the (shaped) data bridge.
    pub fn bridge_ip(&self) -> Ipv4Addr {
        self.bridge_ip
    }

    /// The unshaped control bridge (`ck<pid>-<run>k`).
    pub fn control_bridge(&self) -> &str {
        &self.control_bridge
    }

    /// The root namespace's address on the control bridge: where a coordinator outside the
    /// hosts listens, so that control messages skip the hosts' shaped NIC queues.
    pub fn control_ip(&self) -> Ipv4Addr {
        self.control_ip
    }

    pub fn hosts(&self) -> &[NsHost] {
        &self.hosts
    }

    /// A handle on host `h`'s namespace, to enter it from any thread or start processes in it.
    pub fn host_ns(&self, h: usize) -> Result<HostNs> {
        let host = self.hosts.get(h).ok_or_else(|| {
            NetnsError::Config(format!(
                "no host {h} (the cluster has {})",
                self.hosts.len()
            ))
        })?;
        HostNs::open(&host.namespace)
    }

    /// Run `f` on a thread inside host `h`'s namespace. Sockets it opens, and threads it starts
    /// (a tokio runtime's workers), belong to the host.
    pub fn in_host<T: Send>(&self, h: usize, f: impl FnOnce() -> T + Send) -> Result<T> {
        self.host_ns(h)?.run(f)
    }

    /// A command that runs inside host `h`'s namespace (environment and working directory as
    /// this process's, as with any [`Command`]).
    pub fn command(&self, h: usize, program: impl AsRef<std::ffi::OsStr>) -> Result<Command> {
        Ok(self.host_ns(h)?.command(program))
    }

    /// Remove everything now; errors are reported (dropping removes too, but only logs them).
    pub fn teardown(mut self) -> Result<()> {
        let made = live().as_mut().and_then(|m| m.remove(&self.run));
        self.run = u64::MAX;
        made.map_or(Ok(()), undo)
    }
}

impl Drop for NetnsCluster {
    fn drop(&mut self) {
        let made = live().as_mut().and_then(|m| m.remove(&self.run));
        if let Some(made) = made {
            if let Err(e) = undo(made) {
                tracing::warn!("removing network namespace cluster {}: {e}", self.prefix);
            }
        }
    }
}

/// Remove every cluster of this process and refuse to make more (for a Ctrl-C handler, before
/// exiting).
pub fn teardown_all() {
    let all: Vec<Made> = {
        let mut g = live();
        CLOSED.store(true, Ordering::SeqCst);
        g.as_mut()
            .map(|m| m.drain().map(|(_, v)| v).collect())
            .unwrap_or_default()
    };
    for made in all {
        if let Err(e) = undo(made) {
            let _ = writeln!(
                std::io::stderr(),
                "removing a network namespace cluster: {e}"
            );
        }
    }
}

/// Delete the host-side veths first (each takes its peer with it, at once; a namespace's own
/// teardown is asynchronous), then the namespaces, then the bridges. Keeps going past failures
/// and reports the first.
fn undo(made: Made) -> Result<()> {
    let mut first = None;
    let mut keep = |r: Result<String>| {
        if let Err(e) = r {
            if !gone(&e) {
                first.get_or_insert(e);
            }
        }
    };
    for v in &made.veths {
        keep(ip(&["link", "del", v]));
    }
    for ns in &made.namespaces {
        keep(ip(&["netns", "del", ns]));
    }
    for b in &made.bridges {
        keep(ip(&["link", "del", b]));
    }
    first.map_or(Ok(()), Err)
}

/// An error meaning the thing is already gone.
fn gone(e: &NetnsError) -> bool {
    matches!(e, NetnsError::Command { why, .. }
        if why.contains("Cannot find device") || why.contains("No such file"))
}

/// Remove namespaces and links of earlier runs whose process no longer exists.
fn sweep_stale() {
    let dead = |name: &str| match run_pid(name) {
        Some(pid) => !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        None => false,
    };
    if let Ok(list) = ip(&["-o", "link", "show"]) {
        for name in list.lines().filter_map(link_name).filter(|n| dead(n)) {
            let _ = ip(&["link", "del", name]);
        }
    }
    if let Ok(list) = ip(&["netns", "list"]) {
        for name in list.lines().filter_map(|l| l.split_whitespace().next()) {
            if dead(name) {
                let _ = ip(&["netns", "del", name]);
            }
        }
    }
}

/// `3: ck1a2b-0h1@if2: <...` → `ck1a2b-0h1`.
fn link_name(line: &str) -> Option<&str> {
    let name = line.split(':').nth(1)?.trim();
    Some(name.split('@').next().unwrap_or(name))
}

/// The process id in a name made by [`NetnsCluster::create`]: `ck<pid hex>-<run>` followed by
/// `b` (data bridge), `k` (control bridge), `h<hex>` (namespace, data veth), `c<hex>`
/// (control veth), `r<hex>` (rack bridge) or `u<hex>`/`d<hex>` (a rack's core link).
pub fn run_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("ck")?;
    let (pid, rest) = rest.split_once('-')?;
    let split = rest.find(|c: char| !c.is_ascii_digit())?;
    let (run, tail) = rest.split_at(split);
    // The kind is ASCII, so slicing past it stays on a character boundary.
    let kind = tail.as_bytes()[0];
    if !matches!(kind, b'b' | b'k' | b'h' | b'c' | b'r' | b'u' | b'd') {
        return None;
    }
    let host = &tail[1..];
    let hex = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit());
    let well_formed = hex(pid)
        && !run.is_empty()
        && run.chars().all(|c| c.is_ascii_digit())
        && match kind {
            b'b' | b'k' => host.is_empty(),
            _ => hex(host),
        };
    if !well_formed {
        return None;
    }
    u32::from_str_radix(pid, 16).ok()
}

/// Namespaces and links of the root namespace made by the cluster with this prefix
/// ([`NetnsCluster::prefix`]), or by any cluster of a process with `ck<pid hex>-`: what is left
/// behind, if anything.
pub fn leftovers(prefix: &str) -> Result<Vec<String>> {
    let ours = |n: &str| {
        run_pid(n).is_some()
            && n.strip_prefix(prefix).is_some_and(|rest| {
                prefix.ends_with('-') || rest.starts_with(['b', 'k', 'h', 'c', 'r', 'u', 'd'])
            })
    };
    let mut out = Vec::new();
    for l in ip(&["netns", "list"])?.lines() {
        if let Some(n) = l.split_whitespace().next().filter(|n| ours(n)) {
            out.push(format!("namespace {n}"));
        }
    }
    for n in ip(&["-o", "link", "show"])?.lines().filter_map(link_name) {
        if ours(n) {
            out.push(format!("link {n}"));
        }
    }
    Ok(out)
}

/// Make bridge `name` with the root namespace's address .254 on a free /24; that /24.
fn bridge(run: u64, name: &str, seed: u64) -> Result<[u8; 2]> {
    let subnet = free_subnet(seed)?;
    make(run, &["link", "add", name, "type", "bridge"], |m| {
        m.bridges.push(name.to_string())
    })?;
    ip(&[
        "addr",
        "add",
        &format!("{}/24", host_ip(subnet, 253)),
        "dev",
        name,
    ])?;
    ip(&["link", "set", name, "up"])?;
    Ok(subnet)
}

/// Host `i`'s address (.1 up); the bridge is .254.
fn host_ip(subnet: [u8; 2], i: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, subnet[0], subnet[1], i as u8 + 1)
}

/// A 10.X.Y.0/24 (X in 200..=250) that overlaps no address or route of the root namespace,
/// probing from a point that depends on the process and run (concurrent processes start apart).
fn free_subnet(seed: u64) -> Result<[u8; 2]> {
    let routes = ip(&["-4", "-o", "route", "show", "table", "all"])?;
    let addrs = ip(&["-4", "-o", "addr", "show"])?;
    let taken: Vec<(u32, u32)> = routes
        .split_whitespace()
        .chain(addrs.split_whitespace())
        .filter_map(parse_net)
        .collect();
    let count = 51 * 256;
    let start = (seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize % count;
    for k in 0..count {
        let c = (start + k) % count;
        let net = [200 + (c / 256) as u8, (c % 256) as u8];
        let base = u32::from(Ipv4Addr::new(10, net[0], net[1], 0));
        let overlaps = taken.iter().any(|&(b, len)| {
            let mask = |l: u32| if l == 0 { 0 } else { u32::MAX << (32 - l) };
            let m = mask(len.min(24));
            b & m == base & m
        });
        if !overlaps {
            return Ok(net);
        }
    }
    Err(NetnsError::NoSubnet)
}

/// `10.1.2.0/24` or `10.1.2.3` → (address, prefix length).
fn parse_net(tok: &str) -> Option<(u32, u32)> {
    let (a, len) = match tok.split_once('/') {
        Some((a, l)) => (a, l.parse::<u32>().ok().filter(|&l| l <= 32)?),
        None => (tok, 32),
    };
    Some((u32::from(a.parse::<Ipv4Addr>().ok()?), len))
}

/// A token-bucket filter for a NIC of `bytes_per_s` of TCP payload: on the wire that is
/// [`WIRE_PER_PAYLOAD`] times more. The bucket holds 5 ms at the rate, at least 32 KiB (2 ms and
/// 16 KiB cost about a point of throughput in the 8-host shuffle; a 64 KiB TSO burst larger than
/// the bucket is split by tbf itself). The queue holds 50 ms (10 ms and 5 ms measured no better,
/// within the run-to-run noise of the 60-coflow replay).
fn tbf_args(bytes_per_s: f64) -> Vec<String> {
    let bits = (bytes_per_s * WIRE_PER_PAYLOAD * 8.0).round() as u64;
    let burst = ((bytes_per_s * 0.005) as u64).max(32 * 1024);
    vec![
        "tbf".into(),
        "rate".into(),
        format!("{bits}bit"),
        "burst".into(),
        format!("{burst}b"),
        "latency".into(),
        "50ms".into(),
    ]
}

/// Bytes a qdisc sent (`tc -s qdisc show dev D`: "Sent N bytes ...").
fn sent_bytes(dev: &str) -> Result<u64> {
    let out = tc(&["-s", "qdisc", "show", "dev", dev])?;
    parse_sent(&out).ok_or_else(|| NetnsError::Command {
        command: format!("tc -s qdisc show dev {dev}"),
        why: format!("no \"Sent N bytes\" in: {}", out.trim()),
    })
}

fn parse_sent(tc_out: &str) -> Option<u64> {
    let rest = tc_out.split("Sent ").nth(1)?;
    rest.split_whitespace().next()?.parse().ok()
}

fn ip(args: &[&str]) -> Result<String> {
    exec("ip", args)
}

fn tc(args: &[&str]) -> Result<String> {
    exec("tc", args)
}

/// Run a command; a failure names the command line and carries its stderr.
pub(crate) fn exec(program: &str, args: &[&str]) -> Result<String> {
    let command = format!("{program} {}", args.join(" "));
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| NetnsError::Command {
            command: command.clone(),
            why: e.to_string(),
        })?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(NetnsError::Command {
            command,
            why: if why.is_empty() {
                format!("exit status {}", out.status)
            } else {
                why
            },
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_their_process() {
        assert_eq!(run_pid("ck1f3a-0h0"), Some(0x1f3a));
        assert_eq!(run_pid("ck1f3a-99hfc"), Some(0x1f3a));
        assert_eq!(run_pid("ck1f3a-2b"), Some(0x1f3a));
        assert_eq!(run_pid("ck1f3a-2k"), Some(0x1f3a));
        assert_eq!(run_pid("ck1f3a-99cfc"), Some(0x1f3a));
        assert_eq!(run_pid("ck1f3a-9r2"), Some(0x1f3a));
        assert_eq!(run_pid("ck1f3a-9u2"), Some(0x1f3a));
        assert_eq!(run_pid("ck1f3a-9d1f"), Some(0x1f3a));
        for not_ours in [
            "ck1f3a-2kx",
            "ck1f3a-2c",
            "ck1f3a-2x1",
            "ck1f3a-2é1",
            "ck1f3a-2bx",
            "ck-0h1",
            "ckzz-0h1",
            "ck12-h1",
            "eth0",
            "ck12-0h",
            "ck12",
            "ck12-ah1",
        ] {
            assert_eq!(run_pid(not_ours), None, "{not_ours}");
        }
    }

    #[test]
    fn tc_statistics_give_the_bytes_sent() {
        let out = "qdisc tbf 8001: root refcnt 2 rate 10Mbit burst 32Kb lat 50ms \n Sent 123456 bytes 90 pkt (dropped 0, overlimits 3 requeues 0) \n backlog 0b 0p requeues 0\n";
        assert_eq!(parse_sent(out), Some(123456));
        assert_eq!(parse_sent("qdisc noqueue 0: root"), None);
    }

    #[test]
    fn link_lines_give_names() {
        assert_eq!(
            link_name("7: ck1a-0h2@if2: <BROADCAST,MULTICAST,UP> mtu 1500"),
            Some("ck1a-0h2")
        );
        assert_eq!(link_name("1: lo: <LOOPBACK,UP>"), Some("lo"));
    }

    #[test]
    fn networks_parse() {
        assert_eq!(
            parse_net("10.200.3.0/24"),
            Some((u32::from(Ipv4Addr::new(10, 200, 3, 0)), 24))
        );
        assert_eq!(
            parse_net("192.0.2.2"),
            Some((u32::from(Ipv4Addr::new(192, 0, 2, 2)), 32))
        );
        assert_eq!(parse_net("default"), None);
        assert_eq!(parse_net("10.0.0.0/33"), None);
    }

    #[test]
    fn tbf_shapes_the_wire_rate_of_the_payload_rate_with_a_floor_on_the_burst() {
        assert_eq!(
            tbf_args(12_500_000.0),
            [
                "tbf",
                "rate",
                "104558011bit",
                "burst",
                "62500b",
                "latency",
                "50ms"
            ]
        );
        assert_eq!(tbf_args(1000.0)[4], "32768b");
    }
}

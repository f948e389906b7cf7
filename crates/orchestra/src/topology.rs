//! Racks: which host is in which rack (the configured topology of CornetTopology), and the
//! emulated cluster the broadcast runs on.

use coflowkit_testbed::NetnsCluster;

use crate::OrchestraError;

/// Receivers split evenly over `count` racks in host order; the source sits in the middle
/// rack, as the controller did in rack B of the thesis' three racks in a line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Racks {
    pub count: u32,
    /// The rate of each rack's link to the core, bits per second, each way (None: as fast as
    /// the hosts' links together, i.e. not oversubscribed).
    pub core_rate_bps: Option<f64>,
}

impl Default for Racks {
    fn default() -> Self {
        Racks {
            count: 1,
            core_rate_bps: None,
        }
    }
}

impl Racks {
    /// Rack of each of `hosts` hosts (host 0 the source).
    pub fn of_hosts(&self, hosts: u32) -> Vec<u32> {
        let k = self.count.max(1);
        let receivers = hosts.saturating_sub(1).max(1);
        let mut v = vec![k / 2];
        v.extend(
            (0..hosts.saturating_sub(1)).map(|i| (i as u64 * k as u64 / receivers as u64) as u32),
        );
        v
    }
}

/// The emulated cluster: one namespace per host at `rate_bps`; with racks, each rack's hosts
/// on a bridge of their own, joined to the cluster's bridge (now the core) by a veth pair
/// shaped by tbf to the core rate each way, so cross-rack traffic shares that link.
pub struct Cluster {
    net: Option<NetnsCluster>,
    /// Rack bridges and uplink veths we added (removed before the cluster).
    extra: Vec<String>,
}

impl Cluster {
    pub fn net(&self) -> &NetnsCluster {
        self.net.as_ref().expect("present until teardown")
    }

    pub fn teardown(mut self) -> Result<(), OrchestraError> {
        remove(std::mem::take(&mut self.extra));
        match self.net.take() {
            Some(n) => n
                .teardown()
                .map_err(|e| OrchestraError::Netns(format!("tearing the cluster down: {e}"))),
            None => Ok(()),
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        remove(std::mem::take(&mut self.extra));
    }
}

fn remove(links: Vec<String>) {
    for l in links.iter().rev() {
        let _ = std::process::Command::new("ip")
            .args(["link", "del", l])
            .output();
    }
}

fn ip(args: &[&str]) -> Result<(), OrchestraError> {
    exec("ip", args)
}

fn exec(program: &str, args: &[&str]) -> Result<(), OrchestraError> {
    let out = std::process::Command::new(program)
        .args(args)
        .output()
        .map_err(|e| OrchestraError::Netns(format!("{program} {}: {e}", args.join(" "))))?;
    if !out.status.success() {
        return Err(OrchestraError::Netns(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// tbf for a link of `bps` bits of TCP payload per second, as the testbed shapes hosts.
fn tbf(bps: f64) -> Vec<String> {
    let bytes = bps / 8.0;
    let bits = (bytes * coflowkit_testbed::WIRE_PER_PAYLOAD * 8.0).round() as u64;
    let burst = ((bytes * 0.005) as u64).max(32 * 1024);
    [
        "tbf",
        "rate",
        &format!("{bits}bit"),
        "burst",
        &format!("{burst}b"),
        "latency",
        "50ms",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

pub fn build_cluster(hosts: u32, rate_bps: f64, racks: &Racks) -> Result<Cluster, OrchestraError> {
    let net = NetnsCluster::create(&vec![rate_bps / 8.0; hosts as usize])
        .map_err(|e| OrchestraError::Netns(e.to_string()))?;
    let mut c = Cluster {
        net: Some(net),
        extra: Vec::new(),
    };
    if racks.count <= 1 {
        return Ok(c);
    }
    let core_bps = racks.core_rate_bps.unwrap_or(rate_bps * hosts as f64);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 10;
    // At most 15 bytes: "o" + the pid in hex (<= 7) + run + kind + rack.
    let tag = format!("o{:x}{run}", std::process::id());
    let core = c.net().bridge().to_string();
    for k in 0..racks.count {
        let (br, up, down) = (
            format!("{tag}r{k}"),
            format!("{tag}u{k}"),
            format!("{tag}d{k}"),
        );
        ip(&["link", "add", &br, "type", "bridge"])?;
        c.extra.push(br.clone());
        ip(&["link", "set", &br, "up"])?;
        ip(&["link", "add", &up, "type", "veth", "peer", "name", &down])?;
        c.extra.push(up.clone());
        ip(&["link", "set", &up, "master", &br, "up"])?;
        ip(&["link", "set", &down, "master", &core, "up"])?;
        let t = tbf(core_bps);
        let t: Vec<&str> = t.iter().map(String::as_str).collect();
        // `up` sends from the rack into the core (its uplink), `down` from the core into it.
        exec(
            "tc",
            &[&["qdisc", "replace", "dev", &up, "root"][..], &t].concat(),
        )?;
        exec(
            "tc",
            &[&["qdisc", "replace", "dev", &down, "root"][..], &t].concat(),
        )?;
    }
    let of = racks.of_hosts(hosts);
    for (h, host) in c.net().hosts().to_vec().iter().enumerate() {
        // The host's veth in the root namespace is named as its namespace.
        ip(&[
            "link",
            "set",
            &host.namespace,
            "master",
            &format!("{tag}r{}", of[h]),
        ])?;
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receivers_fill_racks_in_order_and_the_source_is_in_the_middle() {
        let r = Racks {
            count: 3,
            core_rate_bps: None,
        };
        assert_eq!(
            r.of_hosts(16),
            [1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2]
        );
        assert_eq!(Racks::default().of_hosts(4), [0, 0, 0, 0]);
        assert_eq!(
            Racks {
                count: 2,
                core_rate_bps: None
            }
            .of_hosts(2),
            [1, 0]
        );
    }
}

//! Parsing of the `fetch` commands' lists: node capacities (`160mbit:8,320mbit:8`), flows
//! (`0-2,1-2`) and policies (`random,gss,pgss`).

use anyhow::{bail, Context, Result};
use coflowkit_model::units::parse_rate_bps;
use coflowkit_sched::select::Policy;

/// The most nodes the `fetch` commands take (`--nodes`, the counts of `--rates`): per-node
/// tables of some tens of bytes stay well under a GB.
pub const MAX_NODES: usize = 1 << 24;

/// The most nodes of `fetch util` and `fetch bench`, as `fetch sim --nodes`: every node keeps
/// a list of all other nodes, so their state grows as n^2 (pass 33, B3: 10^9 nodes aborted).
pub const MAX_PAIR_NODES: usize = 65_536;

/// Bytes held per (node, other node) pair by `fetch util`/`fetch bench` (an 8-byte source in
/// a pending list, held twice, and a little more): the estimate checked against memory.
pub const PAIR_BYTES: u64 = 24;

/// Refuses a node count of `fetch util`/`fetch bench` above [`MAX_PAIR_NODES`], or whose n^2
/// state would not fit in memory, naming `flag`.
pub fn check_pair_nodes(n: usize, flag: &str) -> Result<()> {
    if n > MAX_PAIR_NODES {
        bail!("{flag} {n}: more than the {MAX_PAIR_NODES} nodes the simulation takes");
    }
    let need = (n as u64)
        .saturating_mul(n as u64)
        .saturating_mul(PAIR_BYTES);
    coflowkit_simcmd::sim_memory::fits(need, 0).map_err(|short| {
        anyhow::anyhow!(
            "{flag} {n}: every node lists all the others ({n}^2 pairs, about {PAIR_BYTES} bytes \
             each), which would need {}",
            short.describe()
        )
    })
}

/// Node capacities in bits per second from `RATE[:COUNT],...` (COUNT nodes at RATE, in order).
pub fn parse_rates(text: &str) -> Result<Vec<f64>> {
    let mut out = Vec::new();
    for (i, item) in text.split(',').enumerate() {
        let item = item.trim();
        let (rate, count) = match item.split_once(':') {
            Some((r, c)) => {
                let n: usize = c.trim().parse().ok().filter(|&n| n > 0).with_context(|| {
                    format!(
                        "--rates item {} `{item}`: node count `{c}` must be a positive integer",
                        i + 1
                    )
                })?;
                (r, n)
            }
            None => (item, 1),
        };
        let bps =
            parse_rate_bps(rate).with_context(|| format!("--rates item {} `{item}`", i + 1))?;
        let total = out.len().saturating_add(count);
        if total > MAX_NODES {
            bail!(
                "--rates item {} `{item}`: {total} nodes so far, more than the {MAX_NODES} the \
                 simulation takes",
                i + 1
            );
        }
        out.resize(total, bps);
    }
    Ok(out)
}

/// `--rates` reconciled with `--nodes`: a single rate without a count is repeated for every
/// node; otherwise the counts must add up to `--nodes` when it is given.
pub fn node_rates(
    rates: Option<&str>,
    nodes: Option<usize>,
    default_nodes: usize,
) -> Result<Vec<f64>> {
    let text = rates.unwrap_or("1gbit");
    let single = !text.contains(',') && !text.contains(':');
    let mut v = parse_rates(text)?;
    if let Some(n) = nodes.filter(|&n| n > MAX_NODES) {
        bail!("--nodes {n}: more than the {MAX_NODES} nodes the simulation takes");
    }
    if single {
        v = vec![v[0]; nodes.unwrap_or(default_nodes)];
    }
    if let Some(n) = nodes {
        if v.len() != n {
            bail!("--rates describes {} nodes but --nodes is {n}", v.len());
        }
    }
    if v.is_empty() {
        bail!("--rates describes no nodes");
    }
    Ok(v)
}

/// Flows `SRC-DST,...` over `nodes` nodes (0-based indices).
pub fn parse_flows(text: &str, nodes: usize) -> Result<Vec<(u32, u32)>> {
    text.split(',')
        .enumerate()
        .map(|(i, item)| {
            let item = item.trim();
            let bad = |why: String| anyhow::anyhow!("--flows item {} `{item}`: {why}", i + 1);
            let (s, d) = item
                .split_once('-')
                .ok_or_else(|| bad("expected SRC-DST (node indices)".into()))?;
            let node = |t: &str, role: &str| -> Result<u32> {
                let n: u32 = t
                    .trim()
                    .parse()
                    .map_err(|_| bad(format!("{role} `{t}` is not a node index")))?;
                if n as usize >= nodes {
                    return Err(bad(format!("{role} node {n} out of range 0..{nodes}")));
                }
                Ok(n)
            };
            Ok((node(s, "source")?, node(d, "destination")?))
        })
        .collect()
}

pub fn parse_policies(text: &str) -> Result<Vec<Policy>> {
    let mut out: Vec<Policy> = Vec::new();
    for item in text.split(',') {
        let p: Policy = item.parse()?;
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_expand_counts_in_order() {
        let v = parse_rates("160mbit:2,320mbit:1").unwrap();
        assert_eq!(v, vec![160e6, 160e6, 320e6]);
        assert_eq!(parse_rates("6,6,12").unwrap(), vec![6.0, 6.0, 12.0]);
        let e = parse_rates("160mbit:0").unwrap_err().to_string();
        assert!(e.contains("item 1"), "{e}");
        let e = format!("{:#}", parse_rates("1gbit,fast:2").unwrap_err());
        assert!(
            e.contains("item 2") && e.contains("invalid rate `fast`"),
            "{e}"
        );
    }

    #[test]
    fn node_counts_must_agree() {
        assert_eq!(node_rates(Some("1gbit"), Some(3), 16).unwrap().len(), 3);
        assert_eq!(node_rates(None, None, 16).unwrap().len(), 16);
        assert!(node_rates(Some("1gbit:2,2gbit:2"), Some(3), 16).is_err());
    }

    #[test]
    fn flows_are_checked_against_the_nodes() {
        assert_eq!(parse_flows("0-2, 1-2", 3).unwrap(), vec![(0, 2), (1, 2)]);
        let e = parse_flows("0-2,1-3", 3).unwrap_err().to_string();
        assert!(
            e.contains("item 2 `1-3`: destination node 3 out of range 0..3"),
            "{e}"
        );
        assert!(parse_flows("0>2", 3).is_err());
    }
}

//! The broadcast mechanisms a transfer can use (spec §2.2-2.3, Table 4.1).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::OrchestraError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mechanism {
    /// Cornet: large blocks, slots, controller-given peer sets, no tit-for-tat.
    Cornet,
    /// Cornet whose controller prefers peers of the receiver's rack (configured topology).
    CornetTopology,
    /// Cornet whose controller learns racks from block transfer times.
    CornetClustering,
    /// Pipelined chain: each receiver fetches from the one before it (d = 1).
    Chain,
    /// Pipelined d-ary tree rooted at the source.
    Tree { d: u32 },
    /// HDFS-like: the source writes R replicas (a pipeline), then every other receiver reads
    /// each block from a random replica.
    Hdfs { r: u32 },
    /// BitTorrent-like swarm: small chunks, per-chunk hashes, rarest first, tit-for-tat choking.
    BitTorrent,
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mechanism::Cornet => write!(f, "cornet"),
            Mechanism::CornetTopology => write!(f, "cornet-topology"),
            Mechanism::CornetClustering => write!(f, "cornet-clustering"),
            Mechanism::Chain => write!(f, "chain"),
            Mechanism::Tree { d: 2 } => write!(f, "tree"),
            Mechanism::Tree { d } => write!(f, "tree{d}"),
            Mechanism::Hdfs { r } => write!(f, "hdfs{r}"),
            Mechanism::BitTorrent => write!(f, "bittorrent"),
        }
    }
}

impl FromStr for Mechanism {
    type Err = OrchestraError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        let num = |rest: &str, what: &str| -> Result<u32, OrchestraError> {
            rest.parse::<u32>().ok().filter(|&n| n >= 1).ok_or_else(|| {
                OrchestraError::Bad(format!(
                    "mechanism `{s}`: {what} must be a whole number >= 1"
                ))
            })
        };
        Ok(match t.as_str() {
            "cornet" => Mechanism::Cornet,
            "cornet-topology" => Mechanism::CornetTopology,
            "cornet-clustering" => Mechanism::CornetClustering,
            "chain" => Mechanism::Chain,
            "tree" => Mechanism::Tree { d: 2 },
            "bittorrent" | "bt" => Mechanism::BitTorrent,
            _ if t.starts_with("tree") => Mechanism::Tree { d: num(&t[4..], "the tree's degree")? },
            _ if t.starts_with("hdfs") => Mechanism::Hdfs { r: num(&t[4..], "the replica count")? },
            _ => {
                return Err(OrchestraError::Bad(format!(
                    "unknown mechanism `{s}` (cornet, cornet-topology, cornet-clustering, chain, tree, treeD, hdfsR, bittorrent)"
                )))
            }
        })
    }
}

impl Mechanism {
    /// A Cornet variant (swarm with controller-given peer sets and large blocks).
    pub fn is_cornet(&self) -> bool {
        matches!(
            self,
            Mechanism::Cornet | Mechanism::CornetTopology | Mechanism::CornetClustering
        )
    }

    /// Parse a comma-separated list (`cornet,tree,chain`).
    pub fn parse_list(s: &str) -> Result<Vec<Mechanism>, OrchestraError> {
        s.split(',')
            .filter(|p| !p.trim().is_empty())
            .map(str::parse)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let all = Mechanism::parse_list(
            "cornet,cornet-topology,cornet-clustering,tree,tree4,chain,hdfs3,hdfs10,bittorrent",
        )
        .unwrap();
        assert_eq!(all.len(), 9);
        assert_eq!(all[3], Mechanism::Tree { d: 2 });
        assert_eq!(all[4], Mechanism::Tree { d: 4 });
        assert_eq!(all[7], Mechanism::Hdfs { r: 10 });
        for m in all {
            assert_eq!(m.to_string().parse::<Mechanism>().unwrap(), m);
        }
        let e = "hdfs0".parse::<Mechanism>().unwrap_err().to_string();
        assert!(e.contains("hdfs0") && e.contains("replica"), "{e}");
        let e = "torrent".parse::<Mechanism>().unwrap_err().to_string();
        assert!(e.contains("unknown mechanism `torrent`"), "{e}");
    }
}

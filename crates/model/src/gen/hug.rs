//! The workloads of HUG's cluster experiments (thesis §7.7.2; spec §5.2 "HUG evaluation"):
//!
//! - [`host_level`], Fig 7.10: two coflows on one machine. A sends one flow 0 -> 1; B sends `n`
//!   flows from the same machine 0 to `n` others (2..=n+1). Per-flow fairness gives A 1/(n+1)
//!   of machine 0's uplink; HUG keeps it at 1/2 whatever `n`.
//! - [`network_level`], Fig 7.11: three coflows with one VM on each of `hosts` machines, A a
//!   permutation `i -> (i + hosts/2) % hosts`, B all-to-all (every ordered pair of distinct
//!   machines: a VM's flow to itself crosses no link), C a permutation `j -> (j + hosts/4) %
//!   hosts`, arriving at the given times. Per-flow fairness lets B's `hosts - 1` flows per link
//!   take all but 1/hosts of every link; HUG splits every link equally.
//!
//! A permutation is not a mapper x reducer product, so the network-level trace is writable in
//! Sincronia's flow-explicit format only (`trace gen hug-net --format sincronia`).

use super::GenError;
use crate::{Coflow, Flow, Trace};

/// 2^20 bytes, the unit of both trace formats.
const MB: f64 = 1_048_576.0;

fn positive(field: &'static str, x: f64) -> Result<(), GenError> {
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        Err(GenError::BadSpec {
            field,
            why: format!("{x}: a flow's MiB must be a positive number"),
        })
    }
}

/// Fig 7.10 on `n + 2` machines, every flow `mb` MiB, both coflows at t = 0 (ids 1 = A, 2 = B).
pub fn host_level(n: u32, mb: f64) -> Result<Trace, GenError> {
    positive("mb", mb)?;
    if n == 0 || n > 100_000 {
        return Err(GenError::BadSpec {
            field: "n",
            why: format!("{n}: B's flows; ask for 1 to 100,000"),
        });
    }
    let bytes = mb * MB;
    let a = Coflow::new(
        1,
        0.0,
        vec![Flow {
            src: 0,
            dst: 1,
            bytes,
        }],
    );
    let b = Coflow::new(
        2,
        0.0,
        (2..n + 2).map(|dst| Flow { src: 0, dst, bytes }).collect(),
    );
    Ok(Trace {
        ports: n + 2,
        coflows: vec![a, b],
    })
}

/// Fig 7.11 on `hosts` machines: every flow `mb` MiB; A, B and C (ids 1, 2, 3) arrive at
/// `arrivals_s`.
pub fn network_level(hosts: u32, mb: f64, arrivals_s: [f64; 3]) -> Result<Trace, GenError> {
    positive("mb", mb)?;
    if !(4..=1000).contains(&hosts) {
        return Err(GenError::BadSpec {
            field: "hosts",
            why: format!(
                "{hosts}: ask for 4 to 1000 (C's shift hosts/4 must not be 0; B has \
                 hosts x (hosts - 1) flows)"
            ),
        });
    }
    for a in arrivals_s {
        if !(a.is_finite() && a >= 0.0) {
            return Err(GenError::BadSpec {
                field: "arrivals_s",
                why: format!("{a}: must be a finite number of seconds, at least 0"),
            });
        }
    }
    let bytes = mb * MB;
    let shift = |id: u64, by: u32, at: f64| {
        let flows = (0..hosts)
            .map(|i| Flow {
                src: i,
                dst: (i + by) % hosts,
                bytes,
            })
            .collect();
        Coflow::new(id, at, flows)
    };
    let all_to_all = (0..hosts)
        .flat_map(|i| (0..hosts).filter(move |&j| j != i).map(move |j| (i, j)))
        .map(|(src, dst)| Flow { src, dst, bytes })
        .collect();
    Ok(Trace {
        ports: hosts,
        coflows: vec![
            shift(1, hosts / 2, arrivals_s[0]),
            Coflow::new(2, arrivals_s[1], all_to_all),
            shift(3, hosts / 4, arrivals_s[2]),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_level_puts_a_and_b_on_machine_0() {
        let t = host_level(3, 2.0).unwrap();
        assert_eq!(t.ports, 5);
        let pairs = |c: &Coflow| c.flows.iter().map(|f| (f.src, f.dst)).collect::<Vec<_>>();
        assert_eq!(pairs(&t.coflows[0]), [(0, 1)]);
        assert_eq!(pairs(&t.coflows[1]), [(0, 2), (0, 3), (0, 4)]);
        assert!(t.coflows.iter().all(|c| c.arrival_s == 0.0));
        assert_eq!(t.coflows[1].bytes(), 3.0 * 2.0 * MB);
        assert!(host_level(0, 1.0).is_err());
        assert!(host_level(2, 0.0).is_err() && host_level(2, f64::NAN).is_err());
    }

    #[test]
    fn network_level_is_two_permutations_and_an_all_to_all() {
        let t = network_level(8, 1.0, [0.0, 1.0, 2.0]).unwrap();
        assert_eq!(t.ports, 8);
        let [a, b, c] = &t.coflows[..] else {
            panic!("three coflows")
        };
        assert_eq!((a.arrival_s, b.arrival_s, c.arrival_s), (0.0, 1.0, 2.0));
        // Permutations: every machine sends one flow and receives one, none to itself.
        for (co, by) in [(a, 4), (c, 2)] {
            assert_eq!(co.flows.len(), 8);
            let mut dsts: Vec<u32> = co.flows.iter().map(|f| f.dst).collect();
            dsts.sort_unstable();
            assert_eq!(dsts, (0..8).collect::<Vec<_>>());
            assert!(co.flows.iter().all(|f| f.dst == (f.src + by) % 8));
        }
        assert_eq!(b.flows.len(), 8 * 7);
        assert!(b.flows.iter().all(|f| f.src != f.dst));
        let mut pairs: Vec<_> = b.flows.iter().map(|f| (f.src, f.dst)).collect();
        pairs.dedup();
        assert_eq!(pairs.len(), 56);
        assert!(network_level(3, 1.0, [0.0; 3]).is_err());
        assert!(network_level(8, 1.0, [0.0, -1.0, 0.0]).is_err());
    }
}

//! Lower bounds on completion time (spec §1.4), in timesteps, as exact fractions: the ideal
//! bound (the most loaded host link) and the core bound (the most loaded ToR-core link).

use coflowkit_shuffle::matrix::PacketMatrix;

use crate::topology::Topology;

/// A time in timesteps as `num / den`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Steps {
    pub num: u64,
    pub den: u64,
}

impl Steps {
    pub fn whole(x: u64) -> Steps {
        Steps { num: x, den: 1 }
    }

    pub fn value(&self) -> f64 {
        self.num as f64 / self.den as f64
    }

    pub fn max(self, o: Steps) -> Steps {
        if self.num as u128 * o.den as u128 >= o.num as u128 * self.den as u128 {
            self
        } else {
            o
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Max over hosts of packets out or in (local data excluded).
    pub ideal: Steps,
    /// Max over ToR-core links (both directions) of packets / capacity.
    pub core: Steps,
}

impl Bounds {
    pub fn new(m: &PacketMatrix, topo: &Topology, core_milli: u64) -> Bounds {
        let n = m.n;
        let mut host = 0;
        for i in 0..n {
            host = host.max(m.out_network(i)).max(m.in_network(i));
        }
        let mut up = vec![0u64; topo.racks];
        let mut down = vec![0u64; topo.racks];
        for i in 0..n {
            for j in 0..n {
                let (ri, rj) = (topo.rack(i), topo.rack(j));
                if ri != rj {
                    up[ri] += m.get(i, j);
                    down[rj] += m.get(i, j);
                }
            }
        }
        let link = up.iter().chain(&down).copied().max().unwrap_or(0);
        Bounds {
            ideal: Steps::whole(host),
            core: Steps {
                num: link * 1000,
                den: core_milli,
            },
        }
    }

    /// The binding lower bound (MADD's Gamma).
    pub fn lower(&self) -> Steps {
        self.ideal.max(self.core)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Placement;

    #[test]
    fn uniform_four_racks_put_three_quarters_on_the_core() {
        // Spec §12 item 6: 4 racks, uniform messages: 75% core is just enough, 50% gives 2/3.
        let n = 160;
        let m = PacketMatrix {
            n,
            packets: vec![16; n * n],
        };
        let topo = Topology::new(n, 4, Placement::Random, 3);
        let full = Bounds::new(&m, &topo, topo.core_milli(0.75));
        assert_eq!(full.ideal.value(), 159.0 * 16.0);
        assert_eq!(full.core.value(), 120.0 * 40.0 * 16.0 / 30.0);
        // With the diagonal local, 120 of a node's 159 messages cross: 75.5%, a hair over.
        assert!(full.ideal.value() / full.core.value() > 0.99);
        let half = Bounds::new(&m, &topo, topo.core_milli(0.5));
        let rate = full.ideal.value() / half.lower().value() * 25.0;
        assert!((rate - 16.56).abs() < 0.01, "{rate}"); // 2/3 of 25 with the diagonal excluded
                                                        // 8 racks: 87.5% crosses; only 90% core is enough.
        let topo8 = Topology::new(320, 8, Placement::Block, 0);
        let m8 = PacketMatrix {
            n: 320,
            packets: vec![16; 320 * 320],
        };
        let b = |f| Bounds::new(&m8, &topo8, topo8.core_milli(f));
        assert!(b(0.9).core.value() <= b(0.9).ideal.value());
        assert!(b(0.75).core.value() > b(0.75).ideal.value());
    }
}

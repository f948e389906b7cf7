//! What BASHuffler keeps in the ResourceManager (spec C2): link capacities, the pattern of
//! scheduled flows (a multiset of (src, dst), across all jobs), per-node load counts and a
//! seeded RNG. Requests come in, sources go out; the state is the only memory.

use coflowkit_model::Fabric;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::bandwidth::Bandwidth;
use super::{gss, optimal, pgss, random, Policy, SelectError, SelectOptions, Source};

#[derive(Debug, Clone)]
pub struct ClusterState {
    bw: Bandwidth,
    present: Vec<bool>,
    pattern: Vec<(u32, u32)>,
    load: Vec<u64>,
    rng: ChaCha8Rng,
    opts: SelectOptions,
    order: Vec<u32>,
    candidates: Vec<Source>,
    seen: Vec<bool>,
}

impl ClusterState {
    /// Every port of `fabric` registered (capacities in bytes per second).
    pub fn new(fabric: Fabric, seed: u64, opts: SelectOptions) -> Self {
        let n = fabric.ports();
        ClusterState {
            bw: Bandwidth::new(fabric),
            present: vec![true; n],
            pattern: Vec::new(),
            load: vec![0; n],
            rng: ChaCha8Rng::seed_from_u64(seed),
            opts,
            order: Vec::new(),
            candidates: Vec::new(),
            seen: vec![false; n],
        }
    }

    pub fn nodes(&self) -> usize {
        self.present.len()
    }

    /// A NodeManager registers (or re-registers) its capacities; ids beyond the current range
    /// grow the cluster, the gap staying deregistered.
    pub fn register_node(&mut self, node: u32, up: f64, down: f64) -> Result<(), SelectError> {
        for c in [up, down] {
            if !(c > 0.0 && c.is_finite()) {
                return Err(SelectError::BadCapacity(c));
            }
        }
        let mut fabric = self.bw.fabric().clone();
        let n = node as usize;
        if n >= self.present.len() {
            fabric.up_bytes_per_s.resize(n + 1, 0.0);
            fabric.down_bytes_per_s.resize(n + 1, 0.0);
            self.present.resize(n + 1, false);
            self.load.resize(n + 1, 0);
            self.seen.resize(n + 1, false);
        }
        fabric.up_bytes_per_s[n] = up;
        fabric.down_bytes_per_s[n] = down;
        self.present[n] = true;
        self.bw.set_fabric(fabric);
        Ok(())
    }

    /// A node leaves: its capacities, its flows (either end) and its load count go.
    pub fn deregister_node(&mut self, node: u32) -> Result<(), SelectError> {
        self.check(node)?;
        self.pattern.retain(|&(s, d)| s != node && d != node);
        self.load[node as usize] = 0;
        self.present[node as usize] = false;
        let mut fabric = self.bw.fabric().clone();
        fabric.up_bytes_per_s[node as usize] = 0.0;
        fabric.down_bytes_per_s[node as usize] = 0.0;
        self.bw.set_fabric(fabric);
        Ok(())
    }

    /// A shuffle (reduce task) begins: each source node's load count grows by the number of map
    /// outputs it holds for this task.
    pub fn on_shuffle_start(&mut self, outputs: &[Source]) -> Result<(), SelectError> {
        for s in outputs {
            self.check(s.node)?;
        }
        for s in outputs {
            self.load[s.node as usize] += u64::from(s.outputs);
        }
        Ok(())
    }

    /// Up to `k` sources for fetchers on `dst` from `pending`, each added to the pattern (and
    /// its load count lowered by one) before the next is chosen (spec A8.3). `opt` chooses all
    /// `k` jointly. Fewer than `k` come back only when `pending` holds fewer outputs.
    pub fn select(
        &mut self,
        policy: Policy,
        dst: u32,
        pending: &[Source],
        k: usize,
    ) -> Result<Vec<u32>, SelectError> {
        self.check(dst)?;
        self.candidates.clear();
        for s in pending {
            self.check(s.node)?;
            if s.outputs == 0 {
                return Err(SelectError::EmptySource(s.node));
            }
            if std::mem::replace(&mut self.seen[s.node as usize], true) {
                for t in pending {
                    self.seen[t.node as usize] = false;
                }
                return Err(SelectError::DuplicateSource(s.node));
            }
            self.candidates.push(*s);
        }
        for s in pending {
            self.seen[s.node as usize] = false;
        }
        let available: u64 = pending.iter().map(|s| u64::from(s.outputs)).sum();
        let k = k.min(available as usize);
        let tol = self.bw.tie_tolerance(self.opts.tie_tolerance);
        let picks = if policy == Policy::Opt {
            optimal::pick(
                &mut self.bw,
                &self.pattern,
                dst,
                &self.candidates,
                k,
                &mut self.rng,
                tol,
                self.opts.max_combinations,
            )?
        } else {
            let mut picks = Vec::with_capacity(k);
            for _ in 0..k {
                let c = &self.candidates;
                let src = match policy {
                    Policy::Random => random::pick(&mut self.rng, c),
                    Policy::Gss => gss::pick(
                        &mut self.bw,
                        &self.pattern,
                        dst,
                        c,
                        &mut self.rng,
                        &mut self.order,
                        tol,
                    ),
                    Policy::Pgss | Policy::Opt => pgss::pick(
                        &mut self.bw,
                        &self.pattern,
                        dst,
                        c,
                        &self.load,
                        self.opts.heaviest,
                        &mut self.rng,
                        &mut self.order,
                        tol,
                    ),
                };
                self.commit(src, dst);
                picks.push(src);
                // One output of `src` is now taken.
                let i = self.candidates.iter().position(|s| s.node == src).unwrap();
                self.candidates[i].outputs -= 1;
                if self.candidates[i].outputs == 0 {
                    self.candidates.remove(i);
                }
            }
            return Ok(picks);
        };
        for &src in &picks {
            self.commit(src, dst);
        }
        Ok(picks)
    }

    /// Record a flow chosen elsewhere (a fetch already running when BASHuffler starts, or a
    /// test's starting pattern). Load counts are untouched.
    pub fn add_flow(&mut self, src: u32, dst: u32) -> Result<(), SelectError> {
        self.check(src)?;
        self.check(dst)?;
        self.pattern.push((src, dst));
        Ok(())
    }

    fn commit(&mut self, src: u32, dst: u32) {
        self.pattern.push((src, dst));
        let l = &mut self.load[src as usize];
        *l = l.saturating_sub(1);
    }

    /// A fetch finished: its flow leaves the pattern.
    pub fn release(&mut self, src: u32, dst: u32) -> Result<(), SelectError> {
        let i = self
            .pattern
            .iter()
            .rposition(|&f| f == (src, dst))
            .ok_or(SelectError::NoSuchFlow { src, dst })?;
        self.pattern.swap_remove(i);
        Ok(())
    }

    /// The scheduled flows, in no particular order.
    pub fn pattern(&self) -> &[(u32, u32)] {
        &self.pattern
    }

    pub fn load(&self, node: u32) -> u64 {
        self.load.get(node as usize).copied().unwrap_or(0)
    }

    /// Sum of the max-min rates of the pattern, bytes per second.
    pub fn utilization(&mut self) -> f64 {
        self.bw.total(&self.pattern, &[])
    }

    /// Max-min rate of each pattern flow, in [`ClusterState::pattern`] order.
    pub fn rates(&mut self) -> Vec<f64> {
        self.bw.rates(&self.pattern, &[]).to_vec()
    }

    /// Max-min evaluations run so far (utilization queries included).
    pub fn evaluations(&self) -> u64 {
        self.bw.evaluations()
    }

    /// Their work: flows filled and ports reset ([`Bandwidth::work`]).
    pub fn evaluation_work(&self) -> u64 {
        self.bw.work()
    }

    pub fn fabric(&self) -> &Fabric {
        self.bw.fabric()
    }

    fn check(&self, node: u32) -> Result<(), SelectError> {
        match self.present.get(node as usize) {
            None => Err(SelectError::UnknownNode {
                node,
                nodes: self.present.len(),
            }),
            Some(false) => Err(SelectError::Absent(node)),
            Some(true) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;

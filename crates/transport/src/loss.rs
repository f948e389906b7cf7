//! Loss injected in user space at send time, from a seed: each datagram is dropped, sent twice,
//! or held back and sent after the next one (reordering), each with its own probability.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Probabilities per datagram (0 = off) and the seed of the random choices.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LossInjection {
    pub drop: f64,
    pub duplicate: f64,
    pub reorder: f64,
    pub seed: u64,
}

impl LossInjection {
    pub fn is_off(&self) -> bool {
        self.drop <= 0.0 && self.duplicate <= 0.0 && self.reorder <= 0.0
    }

    pub fn validate(&self) -> Result<(), String> {
        for (name, p) in [
            ("drop", self.drop),
            ("duplicate", self.duplicate),
            ("reorder", self.reorder),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("loss injection: {name} = {p} is not a probability"));
            }
        }
        Ok(())
    }
}

/// Applies a [`LossInjection`] to a stream of outgoing datagrams.
#[derive(Debug)]
pub struct Injector<T> {
    cfg: LossInjection,
    rng: ChaCha8Rng,
    held: Option<T>,
    pub dropped: u64,
    pub duplicated: u64,
    pub reordered: u64,
}

impl<T: Clone> Injector<T> {
    pub fn new(cfg: LossInjection) -> Injector<T> {
        Injector {
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            cfg,
            held: None,
            dropped: 0,
            duplicated: 0,
            reordered: 0,
        }
    }

    /// What to put on the wire for `d`, in order (pushed onto `out`).
    pub fn apply(&mut self, d: T, out: &mut Vec<T>) {
        if self.cfg.is_off() {
            out.push(d);
            return;
        }
        if self.rng.gen_bool(self.cfg.drop.clamp(0.0, 1.0)) {
            self.dropped += 1;
            return;
        }
        let dup = self.rng.gen_bool(self.cfg.duplicate.clamp(0.0, 1.0));
        if self.held.is_none() && self.rng.gen_bool(self.cfg.reorder.clamp(0.0, 1.0)) {
            self.reordered += 1;
            if dup {
                self.duplicated += 1;
                out.push(d.clone());
            }
            self.held = Some(d);
            return;
        }
        out.push(d.clone());
        if dup {
            self.duplicated += 1;
            out.push(d);
        }
        if let Some(h) = self.held.take() {
            out.push(h);
        }
    }

    /// A datagram still held back (to send when nothing else comes, so none is lost by
    /// reordering alone).
    pub fn flush(&mut self, out: &mut Vec<T>) {
        if let Some(h) = self.held.take() {
            out.push(h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cfg: LossInjection, n: u32) -> (Vec<u32>, Injector<u32>) {
        let mut inj = Injector::new(cfg);
        let mut out = Vec::new();
        for i in 0..n {
            inj.apply(i, &mut out);
        }
        inj.flush(&mut out);
        (out, inj)
    }

    #[test]
    fn off_passes_everything_in_order() {
        let (out, _) = run(LossInjection::default(), 100);
        assert_eq!(out, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn rates_are_near_their_probabilities_and_the_seed_decides() {
        let cfg = LossInjection {
            drop: 0.1,
            duplicate: 0.05,
            reorder: 0.05,
            seed: 3,
        };
        let (out, inj) = run(cfg, 20_000);
        let near = |x: u64, p: f64| (x as f64 - p * 20_000.0).abs() < p * 20_000.0 * 0.2;
        assert!(near(inj.dropped, 0.1), "{}", inj.dropped);
        assert!(inj.duplicated > 500, "{}", inj.duplicated);
        assert!(inj.reordered > 400, "{}", inj.reordered);
        // Every datagram not dropped goes out at least once; none is invented.
        let mut seen = out.clone();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len() as u64, 20_000 - inj.dropped);
        assert_eq!(out.len() as u64, 20_000 - inj.dropped + inj.duplicated);
        assert!(out.windows(2).any(|w| w[0] > w[1]), "nothing reordered");
        assert_eq!(run(cfg, 1000).0, run(cfg, 1000).0);
        assert_ne!(
            run(cfg, 1000).0,
            run(LossInjection { seed: 4, ..cfg }, 1000).0
        );
    }
}

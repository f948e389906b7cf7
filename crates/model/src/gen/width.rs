//! Drawing a coflow's shape: `mappers x reducers` flows with the product in a width range.
//!
//! Method: the mapper count is drawn uniformly among the counts `m <= ports` for which some
//! reducer count `r <= ports` puts `m x r` in `[min, max]`; then `r` is drawn uniformly among
//! those that do. Both are uniform (given the range), and the product always lands in range;
//! the product itself is not uniform over `[min, max]` (a width that factors many ways is
//! likelier), as in any mapper/reducer model.

use rand::Rng;

#[derive(Debug, Clone)]
pub(crate) struct WidthPlan {
    min: usize,
    max: usize,
    ports: usize,
    mapper_counts: Vec<usize>,
}

impl WidthPlan {
    /// `None` if no `m x r` with `m, r <= ports` lies in `[min, max]`.
    pub fn new(min: usize, max: usize, ports: usize) -> Option<Self> {
        let mapper_counts: Vec<usize> = (1..=ports.min(max))
            .filter(|&m| {
                let (lo, hi) = reducer_range(min, max, ports, m);
                lo <= hi
            })
            .collect();
        (!mapper_counts.is_empty()).then_some(WidthPlan {
            min,
            max,
            ports,
            mapper_counts,
        })
    }

    /// (mappers, reducers).
    pub fn draw(&self, rng: &mut impl Rng) -> (usize, usize) {
        let m = self.mapper_counts[rng.gen_range(0..self.mapper_counts.len())];
        let (lo, hi) = reducer_range(self.min, self.max, self.ports, m);
        (m, rng.gen_range(lo..=hi))
    }
}

/// Reducer counts `r` with `m x r` in `[min, max]` and `1 <= r <= ports`.
fn reducer_range(min: usize, max: usize, ports: usize, m: usize) -> (usize, usize) {
    (min.div_ceil(m).max(1), (max / m).min(ports))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn products_land_in_range() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for (min, max, ports) in [(1, 1, 5), (7, 7, 10), (51, 20_000, 150), (51, 1000, 16)] {
            let plan = WidthPlan::new(min, max, ports).unwrap();
            for _ in 0..1000 {
                let (m, r) = plan.draw(&mut rng);
                assert!(m <= ports && r <= ports && (min..=max).contains(&(m * r)));
            }
        }
    }

    #[test]
    fn unreachable_widths_are_refused() {
        assert!(WidthPlan::new(17, 20, 4).is_none());
        assert!(WidthPlan::new(7, 7, 6).is_none());
    }
}

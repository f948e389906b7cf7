//! The general generator (thesis §5.2): a random CDF of message sizes, rows filled from it
//! (preliminary matrix, rows sum to N), then destinations reassigned by the column-sum interval
//! walk, after the greedy placement of Figure 5.5 (or a random order) so few messages split.
//!
//! Hitting a target skewness is our addition (spec §13 item 16): see `SkewMethod`.

use std::collections::BTreeSet;

use rand::seq::SliceRandom;
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::cdf::{CdfInterp, ShapeCdf};
use super::{MatrixError, ShuffleMatrix};

/// How a row is brought to sum N (thesis §5.2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RowFill {
    /// Draw until the running sum passes N, truncate the last element; top up the last of N.
    #[default]
    Truncate,
    /// Draw N elements and scale them to sum N.
    Scale,
}

/// The order of the preliminary messages before the interval walk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Placement {
    /// Figure 5.5: sorted by size into the emptiest columns, columns paired head/tail.
    #[default]
    Greedy,
    /// Step 1 of Figure 5.4: one random order.
    Random,
}

/// How the generator reaches the requested skewness.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum SkewMethod {
    /// One random CDF shape from the seed; bisection over the spread parameter p in [0, 2]
    /// on the same random numbers, then up to `corrections` re-aims on the final skewness;
    /// up to `shapes` CDF shapes while the result misses the tolerance.
    Bisect { corrections: usize, shapes: usize },
    /// The thesis' sample-and-bucket: fresh random CDF and spread per try, keep the matrix
    /// whose skewness is closest, stop within the tolerance or after `tries`.
    Sample { tries: usize },
    /// One random CDF on the thesis' linear x axis (0, N]; the target is ignored.
    Literal,
}

impl Default for SkewMethod {
    fn default() -> Self {
        SkewMethod::Bisect {
            corrections: 3,
            shapes: 4,
        }
    }
}

/// Options of the general generator; `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneralOptions {
    pub row_fill: RowFill,
    pub placement: Placement,
    pub interp: CdfInterp,
    /// Interior points of the random CDF, drawn uniformly in this range per matrix.
    pub min_points: usize,
    pub max_points: usize,
    pub skew_method: SkewMethod,
    /// Low end of the log size axis, as a power of N: sizes reach down to N^-log_floor
    /// (default 1: from 1/N to N average messages, symmetric around the average; 0: no
    /// message below the average before truncation and splitting).
    pub log_floor: f64,
    /// Absolute skewness error at which the search stops.
    pub tolerance: f64,
}

impl Default for GeneralOptions {
    fn default() -> Self {
        GeneralOptions {
            row_fill: RowFill::Truncate,
            placement: Placement::Greedy,
            interp: CdfInterp::Step,
            min_points: 1,
            max_points: 10,
            skew_method: SkewMethod::default(),
            log_floor: 1.0,
            tolerance: 0.002,
        }
    }
}

/// What the interval walk did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WalkStats {
    /// Messages that crossed an interval boundary.
    pub splits: usize,
    /// Pieces added to a cell that already held data from the same sender.
    pub merges: usize,
    /// The most intervals one message touched (at most 2 when sizes are at most N).
    pub max_intervals: usize,
}

/// Message size of shape coordinate t in (0, 1] at spread p in [0, 2], on a log axis whose
/// low end is N^-floor: with e1 = (1 + floor) t - floor in (-floor, 1], the size is N^(p e1)
/// for p <= 1 (p = 0: every message 1, skewness 0) and N^(e1 + (1 - e1)(p - 1)) above (p = 2:
/// every message N, skewness 1). The spread grows with p, so does skewness on fixed random
/// numbers (monotone when floor = 0, nearly so otherwise; the search tolerates that).
fn size_of(n: f64, t: f64, p: f64, floor: f64) -> f64 {
    let e1 = (1.0 + floor) * t - floor;
    let e = if p <= 1.0 {
        p * e1
    } else {
        e1 + (1.0 - e1) * (p - 1.0)
    };
    n.powf(e)
}

/// The preliminary matrix as one list of (sender, size), rows summing to N.
struct Prelim {
    msgs: Vec<(usize, f64)>,
    sum_sq: f64,
}

impl Prelim {
    fn skewness(&self, n: usize) -> f64 {
        if n <= 1 {
            return 0.0;
        }
        let nn = (n * n) as f64;
        // The mean of a normalized matrix is exactly 1.
        let var = (self.sum_sq / nn - 1.0).max(0.0);
        (var / (n - 1) as f64).sqrt()
    }
}

/// Fills every row from `draw(row, k)` (the k-th element drawn for the row).
fn fill_rows(n: usize, fill: RowFill, mut draw: impl FnMut(usize, usize) -> f64) -> Prelim {
    let nf = n as f64;
    let mut msgs = Vec::with_capacity(n * n);
    let mut sum_sq = 0.0;
    for i in 0..n {
        match fill {
            RowFill::Truncate => {
                let mut sum = 0.0;
                for k in 0..n {
                    let s = draw(i, k);
                    if sum + s >= nf || k == n - 1 {
                        // Truncate the element that passes N, or top up the N-th one.
                        let last = nf - sum;
                        if last > 0.0 {
                            msgs.push((i, last));
                            sum_sq += last * last;
                        }
                        break;
                    }
                    msgs.push((i, s));
                    sum_sq += s * s;
                    sum += s;
                }
            }
            RowFill::Scale => {
                let row: Vec<f64> = (0..n).map(|k| draw(i, k)).collect();
                let total: f64 = row.iter().sum();
                for s in row {
                    let v = s * nf / total;
                    msgs.push((i, v));
                    sum_sq += v * v;
                }
            }
        }
    }
    Prelim { msgs, sum_sq }
}

/// Most interior points of the random CDF (the thesis draws 1 to 10). Each shape sorts its
/// points, and a search draws a few hundred shapes: 2^64 - 1 overflowed the capacity, 2^32
/// asked for 20 GB, and 10^8 took more than 30 s for 4 nodes.
pub const MAX_CDF_POINTS: usize = 10_000;

/// The general generator: a normalized n x n matrix whose skewness is close to `target`
/// (exactly 0 at target 0; see docs/shuffle-matrices.md for how close elsewhere).
pub fn general(
    n: usize,
    target: f64,
    opts: &GeneralOptions,
    rng: &mut impl Rng,
) -> Result<ShuffleMatrix, MatrixError> {
    if opts.min_points == 0 || opts.min_points > opts.max_points || opts.max_points > MAX_CDF_POINTS
    {
        return Err(MatrixError::spec(
            "cdf points",
            &format!(
                "range {}..={} must be non-empty, start at 1 or more and end at {MAX_CDF_POINTS} \
                 at most",
                opts.min_points, opts.max_points
            ),
        ));
    }
    if !(opts.log_floor.is_finite() && opts.log_floor >= 0.0) {
        return Err(MatrixError::spec(
            "log floor",
            &format!("{} must be finite and not negative", opts.log_floor),
        ));
    }
    let nf = n as f64;
    let new_shape = |rng: &mut _| {
        let k = rng_points(opts, rng);
        ShapeCdf::random(k, opts.interp, rng)
    };
    match opts.skew_method {
        SkewMethod::Literal => {
            let shape = new_shape(rng);
            let prelim = fill_rows(n, opts.row_fill, |_, _| {
                nf * shape.quantile(rng.gen::<f64>()).max(f64::MIN_POSITIVE)
            });
            Ok(place_and_walk(n, prelim, opts.placement, rng).0)
        }
        SkewMethod::Sample { tries } => {
            let mut best: Option<(f64, Prelim)> = None;
            for _ in 0..tries.max(1) {
                let shape = new_shape(rng);
                let p = rng.gen_range(0.0..=2.0);
                let prelim = fill_rows(n, opts.row_fill, |_, _| {
                    size_of(nf, shape.quantile(rng.gen::<f64>()), p, opts.log_floor)
                });
                let err = (prelim.skewness(n) - target).abs();
                if best.as_ref().map_or(f64::INFINITY, |b| b.0) > err {
                    best = Some((err, prelim));
                }
                if err <= opts.tolerance {
                    break;
                }
            }
            let prelim = best.expect("at least one try").1;
            Ok(place_and_walk(n, prelim, opts.placement, rng).0)
        }
        SkewMethod::Bisect {
            corrections,
            shapes,
        } => {
            // Scaled rows of N equal sizes are uniform again, so beyond p = 1 (where sizes
            // start converging on N) scaling loses skewness: search only where it grows.
            let p_max = match opts.row_fill {
                RowFill::Truncate => 2.0,
                RowFill::Scale => 1.0,
            };
            let mut best: Option<(f64, ShuffleMatrix)> = None;
            // Another CDF shape only when one misses (small N: row filling makes jumps).
            for _ in 0..shapes.max(1) {
                let shape = new_shape(rng);
                // Common random numbers: every trial maps the same quantiles through its p.
                let u: Vec<f64> = (0..n * n).map(|_| rng.gen::<f64>()).collect();
                let t: Vec<f64> = u.iter().map(|&u| shape.quantile(u)).collect();
                let prelim_at = |p: f64| {
                    fill_rows(n, opts.row_fill, |i, k| {
                        size_of(nf, t[i * n + k], p, opts.log_floor)
                    })
                };
                let mut aim = target;
                for _ in 0..=corrections {
                    let p = bisect(aim, p_max, opts.tolerance / 4.0, |p| {
                        prelim_at(p).skewness(n)
                    });
                    let m = place_and_walk(n, prelim_at(p), opts.placement, rng).0;
                    let got = m.skewness();
                    let err = (got - target).abs();
                    if best.as_ref().map_or(f64::INFINITY, |b| b.0) > err {
                        best = Some((err, m));
                    }
                    if err <= opts.tolerance {
                        return Ok(best.expect("just set").1);
                    }
                    // Splits and merges move the final skewness a little: re-aim by the miss.
                    aim = (aim + target - got).clamp(0.0, 1.0);
                }
            }
            Ok(best.expect("at least one round").1)
        }
    }
}

fn rng_points(opts: &GeneralOptions, rng: &mut impl Rng) -> usize {
    rng.gen_range(opts.min_points..=opts.max_points)
}

/// The p in [0, p_max] whose skewness `f(p)` is closest to `aim` that bisection finds.
fn bisect(aim: f64, p_max: f64, tol: f64, f: impl Fn(f64) -> f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, p_max);
    let (f_lo, f_hi) = (f(lo), f(hi));
    if aim <= f_lo {
        return lo;
    }
    if aim >= f_hi {
        return hi;
    }
    let mut best = (f64::INFINITY, lo);
    for _ in 0..48 {
        let mid = 0.5 * (lo + hi);
        let v = f(mid);
        if (v - aim).abs() < best.0 {
            best = ((v - aim).abs(), mid);
        }
        if (v - aim).abs() <= tol {
            break;
        }
        if v < aim {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    best.1
}

/// Orders the preliminary messages, then reassigns destinations by the interval walk.
fn place_and_walk(
    n: usize,
    prelim: Prelim,
    placement: Placement,
    rng: &mut impl Rng,
) -> (ShuffleMatrix, WalkStats) {
    let (msgs, receivers) = match placement {
        Placement::Random => {
            let mut msgs = prelim.msgs;
            msgs.shuffle(rng);
            (msgs, (0..n).collect())
        }
        Placement::Greedy => greedy_order(n, prelim.msgs, rng),
    };
    let (w, stats) = interval_walk(n, &msgs, &receivers);
    (ShuffleMatrix { n, w }, stats)
}

/// Figure 5.5: the message order and the receiver of each interval, left to right.
fn greedy_order(
    n: usize,
    mut msgs: Vec<(usize, f64)>,
    rng: &mut impl Rng,
) -> (Vec<(usize, f64)>, Vec<usize>) {
    let nf = n as f64;
    // Step 1: by descending length, ties random (shuffle, then a stable sort).
    msgs.shuffle(rng);
    msgs.sort_by(|a, b| b.1.total_cmp(&a.1));
    // Step 2.1: each message into its own row, in the free cell whose column has the most
    // free space left. Columns sit in an ordered set keyed by (free space, random tag): the
    // largest key not yet used by the row wins, and a fresh tag on every update breaks ties
    // uniformly at random. O(log n) per message plus the row's used columns skipped.
    let mut cell = vec![0.0f64; n * n];
    let mut used = vec![false; n * n];
    let mut free = vec![nf; n];
    let mut tag: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
    let mut by_free: BTreeSet<(u64, u64, usize)> =
        (0..n).map(|j| (ord_key(free[j]), tag[j], j)).collect();
    for &(i, s) in &msgs {
        let row_used = &used[i * n..(i + 1) * n];
        // A row holds at most n messages, so a free cell always exists.
        let &(_, _, best) = by_free
            .iter()
            .rev()
            .find(|&&(_, _, j)| !row_used[j])
            .expect("a free cell in every row");
        by_free.remove(&(ord_key(free[best]), tag[best], best));
        used[i * n + best] = true;
        cell[i * n + best] = s;
        free[best] -= s;
        tag[best] = rng.gen();
        by_free.insert((ord_key(free[best]), tag[best], best));
    }
    // Step 2.2: columns by ascending free space (overcommitted first), ties random.
    let mut cols: Vec<usize> = (0..n).collect();
    cols.shuffle(rng);
    cols.sort_by(|&a, &b| free[a].total_cmp(&free[b]));
    // Step 2.3: take the head or the tail, whichever keeps |cumulative free space| smaller.
    let mut order = Vec::with_capacity(n);
    let (mut head, mut tail) = (0usize, n);
    let mut cum = 0.0;
    while head < tail {
        let a = (cum + free[cols[head]]).abs();
        let b = (cum + free[cols[tail - 1]]).abs();
        let take_head = a < b || (a == b && rng.gen::<bool>());
        let c = if take_head {
            head += 1;
            cols[head - 1]
        } else {
            tail -= 1;
            cols[tail]
        };
        cum += free[c];
        order.push(c);
    }
    // Step 3: column-major traversal in that column order; intervals in the same order.
    let mut out = Vec::with_capacity(msgs.len());
    for &j in &order {
        for i in 0..n {
            let s = cell[i * n + j];
            if used[i * n + j] && s > 0.0 {
                out.push((i, s));
            }
        }
    }
    (out, order)
}

/// A u64 whose order is the total order of `x` (sign bit flipped, negatives inverted).
fn ord_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

/// Figure 5.4: lays `msgs` (sender, size) end to end against n receiver intervals of length n
/// (interval k belongs to `receivers[k]`); each message goes to the receiver(s) whose interval
/// it covers, split at boundaries, merged when one sender lands twice in one interval.
/// Sizes are assumed to total n²; whatever is left at the end goes to the last interval.
pub fn interval_walk(
    n: usize,
    msgs: &[(usize, f64)],
    receivers: &[usize],
) -> (Vec<f64>, WalkStats) {
    assert_eq!(receivers.len(), n);
    let nf = n as f64;
    // Float dust: a message that overshoots its interval by less than this is not split.
    let eps = 1e-9 * nf;
    let mut w = vec![0.0f64; n * n];
    let mut stats = WalkStats::default();
    let (mut k, mut room) = (0usize, nf);
    for &(i, size) in msgs {
        let mut left = size;
        let mut touched = 0;
        while left > 0.0 {
            let last = k == n - 1;
            let take = if last || left <= room + eps {
                left
            } else {
                room
            };
            // take > 0: entering the loop, room > eps unless this is the last interval.
            let c = &mut w[i * n + receivers[k]];
            if *c > 0.0 {
                stats.merges += 1;
            }
            *c += take;
            touched += 1;
            left -= take;
            room -= take;
            if room <= eps && !last {
                k += 1;
                room = nf;
            }
        }
        if touched > 1 {
            stats.splits += 1;
        }
        stats.max_intervals = stats.max_intervals.max(touched);
    }
    (w, stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn cdf_points_past_the_bound_are_errors_not_panics() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for max_points in [usize::MAX, MAX_CDF_POINTS + 1] {
            let opts = GeneralOptions {
                max_points,
                ..GeneralOptions::default()
            };
            let e = general(4, 0.5, &opts, &mut rng).unwrap_err().to_string();
            assert!(
                e.contains("cdf points") && e.contains("10000 at most"),
                "{e}"
            );
        }
        let opts = GeneralOptions {
            min_points: MAX_CDF_POINTS,
            max_points: MAX_CDF_POINTS,
            ..GeneralOptions::default()
        };
        assert!(general(4, 0.5, &opts, &mut rng).is_ok());
    }

    #[test]
    fn spread_zero_is_uniform_and_two_is_a_permutation() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let m = general(12, 0.0, &GeneralOptions::default(), &mut rng).unwrap();
        assert_eq!(m.skewness(), 0.0);
        assert!(m.w.iter().all(|&x| (x - 1.0).abs() < 1e-12));
        let m = general(12, 1.0, &GeneralOptions::default(), &mut rng).unwrap();
        assert!((m.skewness() - 1.0).abs() < 1e-9, "{}", m.skewness());
    }

    #[test]
    fn greedy_placement_small_example() {
        // N = 3, rows {3}, {2, 1}, {1.5, 1.5}. Step 2.1 puts 3 alone in a column, 2 and one
        // 1.5 together (free -0.5), 1 and the other 1.5 together (free 0.5); step 2.3 pairs the
        // over- and under-committed columns, so exactly one message crosses a boundary.
        for seed in 0..20 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let prelim = Prelim {
                msgs: vec![(0, 3.0), (1, 2.0), (1, 1.0), (2, 1.5), (2, 1.5)],
                sum_sq: 0.0,
            };
            let (m, stats) = place_and_walk(3, prelim, Placement::Greedy, &mut rng);
            assert_eq!(stats.splits, 1, "seed {seed}");
            assert_eq!(stats.max_intervals, 2);
            let row0: Vec<f64> = (0..3).map(|j| m.get(0, j)).filter(|&x| x > 0.0).collect();
            assert_eq!(row0, vec![3.0], "the largest message is never split");
            for j in 0..3 {
                assert!((m.col_sum(j) - 3.0).abs() < 1e-12);
                assert!((m.row_sum(j) - 3.0).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn greedy_merges_far_less_than_random() {
        let n = 40;
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let shape = ShapeCdf::random(4, CdfInterp::Step, &mut rng);
        let mk = |rng: &mut ChaCha8Rng| {
            fill_rows(n, RowFill::Truncate, |_, _| {
                size_of(n as f64, shape.quantile(rng.gen()), 0.8, 0.0)
            })
        };
        let (mut g, mut r) = (WalkStats::default(), WalkStats::default());
        for _ in 0..5 {
            let a = place_and_walk(n, mk(&mut rng), Placement::Greedy, &mut rng).1;
            let b = place_and_walk(n, mk(&mut rng), Placement::Random, &mut rng).1;
            for (acc, x) in [(&mut g, a), (&mut r, b)] {
                acc.splits += x.splits;
                acc.merges += x.merges;
                acc.max_intervals = acc.max_intervals.max(x.max_intervals);
            }
        }
        // At most one split per boundary either way; merges are what greedy placement avoids.
        assert!(g.splits <= 5 * (n - 1) && r.splits <= 5 * (n - 1));
        assert!(g.max_intervals <= 2 && r.max_intervals <= 2);
        assert!(g.merges * 2 < r.merges, "greedy {g:?} random {r:?}");
    }
}

//! CornetClustering (spec §2.3 I-IV): racks learned from block transfer times, for clusters
//! whose placement nobody configured.
//!
//! I. A distance matrix over the receivers: the median block transfer time of each pair (both
//!    directions together); pairs that never swapped a block are missing.
//! II. Missing entries filled by a non-negative matrix factorisation fitted to the observed
//!    ones only (weighted multiplicative updates, after Lee and Seung; the thesis cites Mao and
//!    Saul's variant).
//! III. The receivers placed in the plane by non-metric multidimensional scaling: classical
//!    MDS (an eigendecomposition) to start, then SMACOF iterations against the isotonic
//!    regression of the distances on the dissimilarities (Kruskal), so only their order counts.
//! IV. A mixture of spherical Gaussians of fixed variance `sigma^2` fitted by EM for 1 to `k`
//!    clusters, the number chosen by BIC; each receiver's rack is its likeliest component.
//!
//! Pure functions of their inputs and a seed.

use nalgebra::{DMatrix, SymmetricEigen};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::controller::Transfer;

#[derive(Debug, Clone)]
pub struct ClusteringOptions {
    /// The Gaussians' standard deviation in seconds (thesis: 200 ms, "the typical intra-rack
    /// block transfer time"); `None`: the lower quartile of the observed distances.
    pub sigma_s: Option<f64>,
    /// Most clusters BIC may choose.
    pub max_clusters: usize,
    /// Rank of the factorisation that fills missing distances.
    pub rank: usize,
    pub seed: u64,
}

impl Default for ClusteringOptions {
    fn default() -> Self {
        ClusteringOptions {
            sigma_s: None,
            max_clusters: 6,
            rank: 3,
            seed: 1,
        }
    }
}

/// Racks of `hosts` hosts from the transfers seen so far. Receivers (hosts 1..) are clustered;
/// the source, whose transfers include the queue at its send slots, gets a rack of its own.
/// Nothing known (fewer than 2 receivers, or no transfer between receivers): all in rack 0.
pub fn racks_from_transfers(hosts: u32, seen: &[Transfer], o: &ClusteringOptions) -> Vec<u32> {
    let n = hosts.saturating_sub(1) as usize;
    let mut samples: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); n]; n];
    for t in seen {
        if t.from == 0 || t.to == 0 || t.from == t.to || t.from > n as u32 || t.to > n as u32 {
            continue;
        }
        let (a, b) = (t.from as usize - 1, t.to as usize - 1);
        samples[a][b].push(t.secs);
        samples[b][a].push(t.secs);
    }
    let d: Vec<Vec<Option<f64>>> = samples
        .into_iter()
        .map(|row| row.into_iter().map(median).collect())
        .collect();
    if n < 2 || d.iter().flatten().all(Option::is_none) {
        return vec![0; hosts as usize];
    }
    let labels = cluster(&d, o);
    let k = labels.iter().copied().max().unwrap_or(0) + 1;
    let mut out = vec![k as u32];
    out.extend(labels.iter().map(|&l| l as u32));
    out
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
}

/// Steps II-IV on a dissimilarity matrix with missing entries (the diagonal is ignored);
/// labels numbered in order of first appearance.
pub fn cluster(d: &[Vec<Option<f64>>], o: &ClusteringOptions) -> Vec<usize> {
    let n = d.len();
    if n < 2 {
        return vec![0; n];
    }
    let full = complete(d, o.rank.clamp(1, n), o.seed);
    let x = nonmetric_mds(&full, o.seed);
    let observed: Vec<f64> = (0..n)
        .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
        .filter_map(|(i, j)| d[i][j])
        .collect();
    let sigma = o
        .sigma_s
        .unwrap_or_else(|| quantile(&observed, 0.25))
        .max(1e-9);
    let labels = gmm_bic(&x, sigma, o.max_clusters.max(1), o.seed);
    canonical(&labels)
}

fn quantile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return 1.0;
    }
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// Labels renumbered 0, 1, ... in order of first appearance.
fn canonical(labels: &[usize]) -> Vec<usize> {
    let mut map = std::collections::HashMap::new();
    labels
        .iter()
        .map(|l| {
            let next = map.len();
            *map.entry(*l).or_insert(next)
        })
        .collect()
}

/// Step II: fill the missing entries of `d` (symmetric, non-negative) from a rank-`r`
/// non-negative factorisation `W H^T` fitted to the observed entries.
pub fn complete(d: &[Vec<Option<f64>>], r: usize, seed: u64) -> DMatrix<f64> {
    let n = d.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x4E4D46);
    let obs = DMatrix::from_fn(n, n, |i, j| {
        d[i][j].filter(|_| i != j).map_or(0.0, |v| v.max(0.0))
    });
    let mask = DMatrix::from_fn(n, n, |i, j| (i != j && d[i][j].is_some()) as u8 as f64);
    let scale = obs.iter().copied().fold(0.0, f64::max).max(1e-12);
    let mut w = DMatrix::from_fn(n, r, |_, _| rng.gen_range(0.1..1.0) * scale.sqrt());
    let mut h = DMatrix::from_fn(n, r, |_, _| rng.gen_range(0.1..1.0) * scale.sqrt());
    const EPS: f64 = 1e-12;
    for _ in 0..500 {
        let approx = (&w * h.transpose()).component_mul(&mask);
        let num = &obs * &h;
        let den = &approx * &h;
        w.zip_zip_apply(&num, &den, |x, a, b| *x *= a / (b + EPS));
        let approx = (&w * h.transpose()).component_mul(&mask);
        let num = obs.transpose() * &w;
        let den = approx.transpose() * &w;
        h.zip_zip_apply(&num, &den, |x, a, b| *x *= a / (b + EPS));
    }
    let fit = &w * h.transpose();
    DMatrix::from_fn(n, n, |i, j| {
        if i == j {
            0.0
        } else {
            match (d[i][j], d[j][i]) {
                (Some(a), _) | (None, Some(a)) => a,
                (None, None) => (fit[(i, j)] + fit[(j, i)]) / 2.0,
            }
        }
    })
}

/// Step III: points in the plane whose distances are ordered as the dissimilarities are
/// (Kruskal's non-metric MDS by SMACOF), scaled to match them in least squares.
pub fn nonmetric_mds(d: &DMatrix<f64>, seed: u64) -> Vec<[f64; 2]> {
    let n = d.nrows();
    let mut x = classical_mds(d, seed);
    let pairs: Vec<(usize, usize)> = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .collect();
    let mut order: Vec<usize> = (0..pairs.len()).collect();
    order.sort_by(|&a, &b| d[pairs[a]].total_cmp(&d[pairs[b]]));
    let mut last_stress = f64::INFINITY;
    for _ in 0..300 {
        let dist: Vec<f64> = pairs.iter().map(|&(i, j)| dist2(x[i], x[j])).collect();
        // Disparities: the isotonic regression of the distances in dissimilarity order,
        // normalised so the configuration cannot shrink to a point.
        let fitted = isotonic(&order.iter().map(|&p| dist[p]).collect::<Vec<_>>());
        let mut dhat = vec![0.0; pairs.len()];
        for (k, &p) in order.iter().enumerate() {
            dhat[p] = fitted[k];
        }
        let norm = (dhat.iter().map(|v| v * v).sum::<f64>() / pairs.len() as f64)
            .sqrt()
            .max(1e-12);
        dhat.iter_mut().for_each(|v| *v /= norm);
        let stress: f64 = dist
            .iter()
            .zip(&dhat)
            .map(|(a, b)| (a - b).powi(2))
            .sum::<f64>()
            / dist.iter().map(|v| v * v).sum::<f64>().max(1e-12);
        // Guttman transform.
        let mut b = DMatrix::<f64>::zeros(n, n);
        for (p, &(i, j)) in pairs.iter().enumerate() {
            let v = if dist[p] > 1e-12 {
                -dhat[p] / dist[p]
            } else {
                0.0
            };
            b[(i, j)] = v;
            b[(j, i)] = v;
        }
        for i in 0..n {
            b[(i, i)] = -(0..n).filter(|&j| j != i).map(|j| b[(i, j)]).sum::<f64>();
        }
        let xm = DMatrix::from_fn(n, 2, |i, c| x[i][c]);
        let next = (b * xm) / n as f64;
        x = (0..n).map(|i| [next[(i, 0)], next[(i, 1)]]).collect();
        if (last_stress - stress).abs() < 1e-9 {
            break;
        }
        last_stress = stress;
    }
    // Back to the dissimilarities' units: the scale that best fits them.
    let (mut num, mut den) = (0.0, 0.0);
    for &(i, j) in &pairs {
        let e = dist2(x[i], x[j]);
        num += e * d[(i, j)];
        den += e * e;
    }
    let s = if den > 0.0 { num / den } else { 1.0 };
    x.iter().map(|p| [p[0] * s, p[1] * s]).collect()
}

fn dist2(a: [f64; 2], b: [f64; 2]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

/// Torgerson's classical MDS: the top two eigenvectors of the double-centred squared
/// dissimilarities; a little seeded jitter keeps coincident points apart for SMACOF.
fn classical_mds(d: &DMatrix<f64>, seed: u64) -> Vec<[f64; 2]> {
    let n = d.nrows();
    let sq = d.map(|v| v * v);
    let row: Vec<f64> = (0..n).map(|i| sq.row(i).mean()).collect();
    let all = sq.mean();
    let b = DMatrix::from_fn(n, n, |i, j| -0.5 * (sq[(i, j)] - row[i] - row[j] + all));
    let eig = SymmetricEigen::new(b);
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]));
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x4D4453);
    let spread = d.iter().copied().fold(0.0, f64::max).max(1e-9) * 1e-3;
    (0..n)
        .map(|i| {
            let c = |k: usize| {
                let e = idx.get(k).copied().unwrap_or(0);
                eig.eigenvectors[(i, e)] * eig.eigenvalues[e].max(0.0).sqrt()
            };
            [
                c(0) + rng.gen_range(-spread..spread),
                c(1) + rng.gen_range(-spread..spread),
            ]
        })
        .collect()
}

/// Pool adjacent violators: the non-decreasing sequence closest to `y` in least squares.
pub fn isotonic(y: &[f64]) -> Vec<f64> {
    let mut blocks: Vec<(f64, usize)> = Vec::new();
    for &v in y {
        blocks.push((v, 1));
        while blocks.len() > 1 {
            let (b, nb) = blocks[blocks.len() - 1];
            let (a, na) = blocks[blocks.len() - 2];
            if a <= b {
                break;
            }
            blocks.pop();
            let last = blocks.last_mut().expect("two blocks");
            *last = ((a * na as f64 + b * nb as f64) / (na + nb) as f64, na + nb);
        }
    }
    blocks
        .into_iter()
        .flat_map(|(v, c)| std::iter::repeat_n(v, c))
        .collect()
}

/// Step IV: the mixture of spherical Gaussians (variance `sigma^2`, fixed) with the best BIC
/// among 1..=`kmax` components; the likeliest component of each point.
pub fn gmm_bic(x: &[[f64; 2]], sigma: f64, kmax: usize, seed: u64) -> Vec<usize> {
    let n = x.len();
    let mut best: Option<(f64, Vec<usize>)> = None;
    for k in 1..=kmax.min(n) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (k as u64) << 8);
        // A few seeded restarts; the best likelihood wins.
        let mut fit: Option<(f64, Vec<usize>)> = None;
        for _ in 0..5 {
            let (ll, labels) = em(x, sigma, k, &mut rng);
            if fit.as_ref().is_none_or(|(b, _)| ll > *b) {
                fit = Some((ll, labels));
            }
        }
        let (ll, labels) = fit.expect("one restart");
        // Free parameters: k means in the plane and k - 1 weights.
        let p = (2 * k + k - 1) as f64;
        let bic = -2.0 * ll + p * (n as f64).ln();
        if best.as_ref().is_none_or(|(b, _)| bic < *b) {
            best = Some((bic, labels));
        }
    }
    best.map(|(_, l)| l).unwrap_or_default()
}

/// EM for means and weights; k-means++ starts. Returns the log-likelihood and labels.
fn em(x: &[[f64; 2]], sigma: f64, k: usize, rng: &mut ChaCha8Rng) -> (f64, Vec<usize>) {
    let n = x.len();
    let mut mu: Vec<[f64; 2]> = vec![x[rng.gen_range(0..n)]];
    while mu.len() < k {
        let w: Vec<f64> = x
            .iter()
            .map(|p| {
                mu.iter()
                    .map(|m| dist2(*p, *m).powi(2))
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        let total: f64 = w.iter().sum();
        let mut t = rng.gen_range(0.0..total.max(1e-300));
        let mut pick = n - 1;
        for (i, wi) in w.iter().enumerate() {
            if t < *wi {
                pick = i;
                break;
            }
            t -= wi;
        }
        mu.push(x[pick]);
    }
    let mut pi = vec![1.0 / k as f64; k];
    let s2 = sigma * sigma;
    let log_norm = -(2.0 * std::f64::consts::PI * s2).ln();
    let mut resp = vec![vec![0.0; k]; n];
    let mut ll = f64::NEG_INFINITY;
    for _ in 0..200 {
        // E step, in logs for the far tails.
        let mut new_ll = 0.0;
        for (i, p) in x.iter().enumerate() {
            let lp: Vec<f64> = (0..k)
                .map(|c| pi[c].max(1e-300).ln() + log_norm - dist2(*p, mu[c]).powi(2) / (2.0 * s2))
                .collect();
            let m = lp.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let sum: f64 = lp.iter().map(|v| (v - m).exp()).sum();
            new_ll += m + sum.ln();
            for c in 0..k {
                resp[i][c] = (lp[c] - m).exp() / sum;
            }
        }
        // M step: weights and means only (the variance is fixed).
        for c in 0..k {
            let w: f64 = resp.iter().map(|r| r[c]).sum();
            pi[c] = w / n as f64;
            if w > 1e-12 {
                mu[c] = [
                    resp.iter().zip(x).map(|(r, p)| r[c] * p[0]).sum::<f64>() / w,
                    resp.iter().zip(x).map(|(r, p)| r[c] * p[1]).sum::<f64>() / w,
                ];
            }
        }
        if (new_ll - ll).abs() < 1e-9 {
            ll = new_ll;
            break;
        }
        ll = new_ll;
    }
    let labels = resp
        .iter()
        .map(|r| (0..k).max_by(|&a, &b| r[a].total_cmp(&r[b])).unwrap_or(0))
        .collect();
    (ll, labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `racks[i]` is receiver i's rack; intra-rack pairs take `t_in`, others `t_out`, each
    /// entry off by up to ±`noise` (relative), a fraction `missing` of pairs unobserved.
    fn synthetic(
        racks: &[usize],
        t_in: f64,
        t_out: f64,
        noise: f64,
        missing: f64,
        seed: u64,
    ) -> Vec<Vec<Option<f64>>> {
        let n = racks.len();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut d = vec![vec![None; n]; n];
        for i in 0..n {
            for j in i + 1..n {
                if rng.gen_bool(missing) {
                    continue;
                }
                let base = if racks[i] == racks[j] { t_in } else { t_out };
                let v = base * (1.0 + rng.gen_range(-noise..=noise));
                d[i][j] = Some(v);
                d[j][i] = Some(v);
            }
        }
        d
    }

    #[test]
    fn isotonic_pools_violators() {
        assert_eq!(isotonic(&[1.0, 3.0, 2.0, 4.0]), [1.0, 2.5, 2.5, 4.0]);
        assert_eq!(isotonic(&[3.0, 2.0, 1.0]), [2.0, 2.0, 2.0]);
    }

    #[test]
    fn completion_recovers_a_low_rank_block_matrix() {
        let racks = [0, 0, 0, 1, 1, 1, 2, 2, 2];
        let d = synthetic(&racks, 0.2, 1.0, 0.0, 0.3, 3);
        let full = complete(&d, 3, 1);
        for i in 0..9 {
            for j in 0..9 {
                if i != j && d[i][j].is_none() {
                    let want = if racks[i] == racks[j] { 0.2 } else { 1.0 };
                    assert!(
                        (full[(i, j)] - want).abs() < 0.25,
                        "({i},{j}) {} vs {want}",
                        full[(i, j)]
                    );
                }
            }
        }
    }

    #[test]
    fn three_racks_of_ten_are_found_exactly() {
        // The thesis' DETERlab layout: 30 receivers, 3 racks; cross-rack blocks 5x slower.
        let racks: Vec<usize> = (0..30).map(|i| i / 10).collect();
        for seed in 0..5 {
            let d = synthetic(&racks, 0.2, 1.0, 0.15, 0.3, seed);
            let o = ClusteringOptions {
                sigma_s: Some(0.2),
                seed,
                ..Default::default()
            };
            assert_eq!(cluster(&d, &o), racks, "seed {seed}");
        }
    }

    #[test]
    fn one_flat_cluster_stays_one() {
        // As on EC2: no structure, a single cluster.
        let d = synthetic(&[0; 12], 0.2, 0.2, 0.15, 0.2, 9);
        let o = ClusteringOptions {
            sigma_s: Some(0.2),
            ..Default::default()
        };
        assert_eq!(cluster(&d, &o), vec![0; 12]);
    }

    #[test]
    fn transfers_become_racks_with_the_source_apart() {
        let mut seen = Vec::new();
        let rack = |h: u32| (h - 1) / 3;
        for a in 1..=6u32 {
            for b in 1..=6u32 {
                if a != b {
                    let secs = if rack(a) == rack(b) { 0.1 } else { 0.8 };
                    seen.push(Transfer {
                        from: a,
                        to: b,
                        secs,
                    });
                    seen.push(Transfer {
                        from: 0,
                        to: b,
                        secs: 3.0,
                    });
                }
            }
        }
        let o = ClusteringOptions {
            sigma_s: Some(0.1),
            ..Default::default()
        };
        assert_eq!(racks_from_transfers(7, &seen, &o), [2, 0, 0, 0, 1, 1, 1]);
        assert_eq!(racks_from_transfers(7, &[], &o), [0; 7]);
    }
}

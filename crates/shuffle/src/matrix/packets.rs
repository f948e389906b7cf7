//! Whole packets from a normalized matrix (spec §13 item 12): a controlled rounding. Every entry
//! becomes the floor or the ceiling of `w * avg_packets`, and every row and column keeps its
//! (whole) sum exactly. Which entries round up is a bipartite flow problem: row i must round up
//! r_i of its fractional entries and column j must take c_j of them; the fractional matrix itself
//! is a feasible fractional flow, so an integral one exists (integrality of max-flow). Larger
//! remainders are tried first, so the result is close to largest-remainder rounding.

use super::flow::Flow;
use super::{MatrixError, MatrixErrorKind, PacketMatrix, ShuffleMatrix};

/// Fractions closer than this to a whole number are that number (float dust of the generators).
const SNAP: f64 = 1e-9;

/// `m` scaled to `avg_packets` per average message, in whole packets with row and column sums
/// kept. Errors if a row or column sum is not a whole number of packets.
pub fn to_packets(m: &ShuffleMatrix, avg_packets: u64) -> Result<PacketMatrix, MatrixError> {
    let n = m.n;
    let a = avg_packets as f64;
    let mut base = vec![0u64; n * n];
    let mut frac = vec![0.0f64; n * n];
    for (k, &w) in m.w.iter().enumerate() {
        if !(w.is_finite() && w >= 0.0) {
            return Err(rounding(format!(
                "entry ({}, {}) is {w}, not a finite non-negative size",
                k / n,
                k % n
            )));
        }
        let x = w * a;
        let mut fl = x.floor();
        let mut fr = x - fl;
        if fr > 1.0 - SNAP {
            fl += 1.0;
            fr = 0.0;
        } else if fr < SNAP {
            fr = 0.0;
        }
        base[k] = fl as u64;
        frac[k] = fr;
    }
    let whole = |sum: f64, what: &str, idx: usize| -> Result<u64, MatrixError> {
        let r = sum.round();
        if (sum - r).abs() > 1e-6 * r.max(1.0) {
            return Err(rounding(format!(
                "{what} {idx} sums to {sum} packets, not a whole number"
            )));
        }
        Ok(r as u64)
    };
    // Round-ups each row and column needs.
    let s = 2 * n;
    let t = 2 * n + 1;
    let mut g = Flow::new(2 * n + 2);
    let mut need = 0u64;
    let mut edges: Vec<(usize, usize)> = Vec::new();
    for i in 0..n {
        let target = whole(m.row_sum(i) * a, "row", i)?;
        let floor_sum: u64 = base[i * n..(i + 1) * n].iter().sum();
        let r = target
            .checked_sub(floor_sum)
            .ok_or_else(|| rounding(format!("row {i}: floors already exceed the sum")))?;
        need += r;
        g.add(s, i, r);
        let mut js: Vec<usize> = (0..n).filter(|&j| frac[i * n + j] > 0.0).collect();
        // Added last = tried first: ascending order puts the largest remainders first.
        js.sort_by(|&x, &y| frac[i * n + x].total_cmp(&frac[i * n + y]).then(x.cmp(&y)));
        for j in js {
            edges.push((i * n + j, g.add(i, n + j, 1)));
        }
    }
    let mut col_need = vec![0u64; n];
    for j in 0..n {
        let target = whole(m.col_sum(j) * a, "column", j)?;
        let floor_sum: u64 = (0..n).map(|i| base[i * n + j]).sum();
        col_need[j] = target
            .checked_sub(floor_sum)
            .ok_or_else(|| rounding(format!("column {j}: floors already exceed the sum")))?;
        g.add(n + j, t, col_need[j]);
    }
    if col_need.iter().sum::<u64>() != need {
        return Err(rounding(format!(
            "rows need {need} round-ups but columns need {}",
            col_need.iter().sum::<u64>()
        )));
    }
    let got = g.max_flow(s, t);
    if got != need {
        return Err(rounding(format!(
            "only {got} of {need} round-ups can be placed"
        )));
    }
    for (k, e) in edges {
        base[k] += g.flow_on(e);
    }
    Ok(PacketMatrix { n, packets: base })
}

fn rounding(why: String) -> MatrixError {
    MatrixError::at("", 0, MatrixErrorKind::Rounding(why))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_round_with_both_sums_kept() {
        // Rows and columns of [[1.5, 0.5], [0.5, 1.5]] sum to 2; at 1 packet each entry is a
        // half, and exactly one per row and column may round up.
        let m = ShuffleMatrix {
            n: 2,
            w: vec![1.5, 0.5, 0.5, 1.5],
        };
        let p = to_packets(&m, 1).unwrap();
        assert_eq!(p.packets[0] + p.packets[1], 2);
        assert_eq!(p.packets[2] + p.packets[3], 2);
        assert_eq!(p.packets[0] + p.packets[2], 2);
        for (k, &x) in p.packets.iter().enumerate() {
            let exact = m.w[k];
            assert!(x as f64 == exact.floor() || x as f64 == exact.ceil());
        }
    }

    #[test]
    fn fractional_row_sum_is_refused() {
        let m = ShuffleMatrix { n: 1, w: vec![1.5] };
        let e = to_packets(&m, 1).unwrap_err();
        assert!(e.to_string().contains("row 0 sums to 1.5"), "{e}");
    }
}

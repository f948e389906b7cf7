//! `sim`'s multi-tenant measures for humans and scripts: per scheduler the isolation guarantee
//! and utilization at the first decision and over time, the spread of per-coflow progress, and
//! the slowdowns of Table 7.3 (docs/hug.md).

use std::fmt::Write as _;

use coflowkit_model::stats::percentile;
use coflowkit_model::Fabric;
use coflowkit_sched::tenant::metrics::TenantMetrics;
use serde_json::json;

use crate::report::{aligned, Run};

fn cell(x: f64, digits: usize) -> String {
    if x.is_finite() {
        format!("{x:.digits$}")
    } else {
        "-".into()
    }
}

/// Percentiles of per-coflow values (sorted copy).
fn spread(mut v: Vec<f64>) -> [f64; 4] {
    v.retain(|x| x.is_finite());
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return [f64::NAN; 4];
    }
    [
        v[0],
        percentile(&v, 50.0),
        percentile(&v, 90.0),
        v[v.len() - 1],
    ]
}

/// The multi-tenant table (measured runs only) and the slowdown table (every run).
pub fn tables(runs: &[Run], metrics: &[Option<TenantMetrics>], fabric: &Fabric) -> String {
    let link_bps = 8.0 * fabric.up_bytes_per_s.iter().copied().fold(0.0, f64::max);
    let mut rows = vec![[
        "scheduler",
        "IG first",
        "util first",
        "bneck min Mbps",
        "bneck p50",
        "bneck max",
        "IG avg",
        "IG min",
        "util avg",
        "progress p50",
        "decisions",
    ]
    .map(String::from)
    .to_vec()];
    for (r, m) in runs.iter().zip(metrics) {
        let Some(m) = m else { continue };
        let (ig0, u0, first) = match &m.first {
            Some(o) => (
                o.isolation_guarantee,
                o.utilization,
                spread(
                    o.coflows
                        .iter()
                        .map(|c| c.bottleneck_bytes_per_s * 8e-6)
                        .collect(),
                ),
            ),
            None => (f64::NAN, f64::NAN, [f64::NAN; 4]),
        };
        let life = spread(m.coflows.iter().map(|c| c.avg_progress).collect());
        rows.push(vec![
            r.name().to_string(),
            cell(ig0, 4),
            cell(u0, 4),
            cell(first[0], 3),
            cell(first[1], 3),
            cell(first[3], 3),
            cell(m.isolation_guarantee_avg, 4),
            cell(m.isolation_guarantee_min, 4),
            cell(m.utilization_avg, 4),
            cell(life[1], 4),
            m.decisions.to_string(),
        ]);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nmulti-tenant measures (progress: rate on the bottleneck over the coflow's MADD vector; \
         IG = lowest progress; util = used share of all {} links of up to {} Mbit/s; \
         'first' = the first decision, bneck = per-coflow bottleneck bandwidth there)",
        2 * fabric.ports(),
        cell(link_bps * 1e-6, 0)
    );
    out.push_str(&aligned(&rows));
    let mut rows = vec![["scheduler", "slowdown min", "max", "avg", "stdev"]
        .map(String::from)
        .to_vec()];
    for r in runs {
        let s = r.summary.slowdown;
        rows.push(vec![
            r.name().to_string(),
            cell(s.min, 2),
            cell(s.max, 2),
            cell(s.avg, 2),
            cell(s.stdev, 2),
        ]);
    }
    let _ = writeln!(
        out,
        "\nslowdown = CCT / CCT alone on the empty fabric (Table 7.3)"
    );
    out.push_str(&aligned(&rows));
    out
}

/// `results[i].tenant_metrics` for every measured run.
pub fn add_to_json(doc: &mut serde_json::Value, metrics: &[Option<TenantMetrics>]) {
    if let Some(results) = doc["results"].as_array_mut() {
        for (r, m) in results.iter_mut().zip(metrics) {
            if let Some(m) = m {
                r["tenant_metrics"] = json!(m);
            }
        }
    }
}

//! What a trace contains, in the terms the coflow papers use (width, length, size, bins): the
//! facts to check a reader against, and a quick look at a generated workload.

use std::collections::HashSet;
use std::fmt;

use serde::Serialize;

use crate::bins::Bin;
use crate::coflow::Trace;
use crate::stats::percentile;
use crate::units::MB;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BinStats {
    pub bin: Bin,
    pub coflows: usize,
    pub bytes: f64,
    /// Share of the trace's bytes, in percent.
    pub bytes_pct: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceStats {
    /// Fabric size from the header.
    pub ports: u32,
    /// Ports that appear as a source or destination of some flow.
    pub ports_used: usize,
    pub coflows: usize,
    pub flows: usize,
    /// Flows whose source port is their destination port.
    pub self_flows: usize,
    pub total_bytes: f64,
    pub total_mb: f64,
    /// `None` for a trace without coflows (likewise the size statistics below).
    pub first_arrival_ms: Option<f64>,
    pub last_arrival_ms: Option<f64>,
    pub single_flow_coflows: usize,
    /// Flows of the widest coflow.
    pub widest_coflow_flows: usize,
    /// Most distinct sources (mappers) in one coflow.
    pub max_mappers: usize,
    /// Most distinct destinations (reducers) in one coflow.
    pub max_reducers: usize,
    pub median_coflow_mb: Option<f64>,
    pub min_coflow_mb: Option<f64>,
    pub max_coflow_mb: Option<f64>,
    /// One entry per bin, in `Bin::ALL` order.
    pub bins: Vec<BinStats>,
}

impl TraceStats {
    pub fn of(trace: &Trace) -> Self {
        let mut ports_used = HashSet::new();
        let mut self_flows = 0;
        let (mut max_mappers, mut max_reducers) = (0, 0);
        let mut sizes_mb = Vec::with_capacity(trace.coflows.len());
        let mut bins: Vec<BinStats> = Bin::ALL
            .iter()
            .map(|&bin| BinStats {
                bin,
                coflows: 0,
                bytes: 0.0,
                bytes_pct: 0.0,
            })
            .collect();
        for c in &trace.coflows {
            let mut mappers = HashSet::new();
            let mut reducers = HashSet::new();
            for f in &c.flows {
                mappers.insert(f.src);
                reducers.insert(f.dst);
                self_flows += usize::from(f.src == f.dst);
            }
            max_mappers = max_mappers.max(mappers.len());
            max_reducers = max_reducers.max(reducers.len());
            ports_used.extend(mappers);
            ports_used.extend(reducers);
            let bytes = c.bytes();
            sizes_mb.push(bytes / MB);
            let b = &mut bins[Bin::ALL.iter().position(|&b| b == Bin::of(c)).unwrap()];
            b.coflows += 1;
            b.bytes += bytes;
        }
        let total_bytes = trace.bytes();
        for b in &mut bins {
            b.bytes_pct = if total_bytes > 0.0 {
                100.0 * b.bytes / total_bytes
            } else {
                0.0
            };
        }
        sizes_mb.sort_by(f64::total_cmp);
        let arrivals_ms = trace.coflows.iter().map(|c| c.arrival_s * 1000.0);
        TraceStats {
            ports: trace.ports,
            ports_used: ports_used.len(),
            coflows: trace.coflows.len(),
            flows: trace.flows(),
            self_flows,
            total_bytes,
            total_mb: total_bytes / MB,
            first_arrival_ms: arrivals_ms.clone().reduce(f64::min),
            last_arrival_ms: arrivals_ms.reduce(f64::max),
            single_flow_coflows: trace.coflows.iter().filter(|c| c.width() == 1).count(),
            widest_coflow_flows: trace.coflows.iter().map(|c| c.width()).max().unwrap_or(0),
            max_mappers,
            max_reducers,
            median_coflow_mb: (!sizes_mb.is_empty()).then(|| percentile(&sizes_mb, 50.0)),
            min_coflow_mb: sizes_mb.first().copied(),
            max_coflow_mb: sizes_mb.last().copied(),
            bins,
        }
    }
}

impl fmt::Display for TraceStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let opt = |v: Option<f64>| v.map_or("-".to_string(), num);
        let rows = [
            ("ports (header)", self.ports.to_string()),
            ("ports used", self.ports_used.to_string()),
            ("coflows", self.coflows.to_string()),
            ("flows", self.flows.to_string()),
            ("self-flows", self.self_flows.to_string()),
            ("total MB", num(self.total_mb)),
            ("first arrival ms", opt(self.first_arrival_ms)),
            ("last arrival ms", opt(self.last_arrival_ms)),
            ("single-flow coflows", self.single_flow_coflows.to_string()),
            (
                "widest coflow (flows)",
                self.widest_coflow_flows.to_string(),
            ),
            ("max mappers", self.max_mappers.to_string()),
            ("max reducers", self.max_reducers.to_string()),
            ("median coflow MB", opt(self.median_coflow_mb)),
            ("min coflow MB", opt(self.min_coflow_mb)),
            ("max coflow MB", opt(self.max_coflow_mb)),
        ];
        for (name, value) in rows {
            writeln!(f, "{name:<24}{value:>16}")?;
        }
        writeln!(f, "{:<24}{:>16}{:>10}", "bin", "coflows", "% bytes")?;
        for b in &self.bins {
            writeln!(
                f,
                "{:<24}{:>16}{:>10.2}",
                b.bin.name(),
                b.coflows,
                b.bytes_pct
            )?;
        }
        Ok(())
    }
}

/// Integral values as integers, others to three decimals: a table for people.
fn num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::read_path;
    use std::path::PathBuf;

    fn fb_path() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/traces/FB2010-1Hr-150-0.txt")
    }

    /// The facts of `specs/traces.md` and the D4 loader checks of `specs/bashuffler-saath.md`.
    #[test]
    fn facebook_trace_matches_the_published_facts() {
        let t = read_path(&fb_path()).unwrap();
        let s = TraceStats::of(&t);
        println!("{s}");
        assert_eq!((s.ports, s.coflows), (150, 526));
        assert_eq!(s.ports_used, 147);
        assert_eq!(s.first_arrival_ms, Some(0.0));
        assert_eq!(s.last_arrival_ms, Some(3_629_235.0));
        assert_eq!(s.flows, 706_397);
        assert_eq!(s.widest_coflow_flows, 21_170);
        assert!((s.total_mb - 35_533_534.0).abs() < 1e-3, "{}", s.total_mb);
        assert_eq!(s.single_flow_coflows, 123);
        assert_eq!(s.self_flows, 4_911);
        assert_eq!((s.max_mappers, s.max_reducers), (147, 145));
        assert_eq!(s.median_coflow_mb, Some(25.0));
        assert_eq!(s.min_coflow_mb, Some(1.0));
        assert!((s.max_coflow_mb.unwrap() - 8_501_205.0).abs() < 1e-6);
        let counts: Vec<usize> = s.bins.iter().map(|b| b.coflows).collect();
        assert_eq!(counts, vec![309, 90, 59, 68]);
        assert_eq!((s.bins[3].bytes_pct * 100.0).round() / 100.0, 99.07);

        // D4 spot checks and id order.
        let ids: Vec<u64> = t.coflows.iter().map(|c| c.id).collect();
        assert_eq!(ids, (1..=526).collect::<Vec<u64>>());
        assert_eq!(t.coflows[0].flows.len(), 1);
        assert_eq!(
            (t.coflows[0].flows[0].src, t.coflows[0].flows[0].dst),
            (22, 65)
        );
        assert_eq!(t.coflows[3].arrival_s, 15.531);
        assert_eq!(t.coflows[3].flows.len(), 27 * 116);
    }

    #[test]
    fn empty_trace_has_no_sizes() {
        let s = TraceStats::of(&Trace {
            ports: 4,
            coflows: vec![],
        });
        assert_eq!(
            (s.coflows, s.first_arrival_ms, s.median_coflow_mb),
            (0, None, None)
        );
        assert!(s.to_string().contains("coflows"));
    }
}

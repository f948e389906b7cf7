//! Sincronia's flow-explicit format (its workload generator and FB-upscaled traces):
//!
//! ```text
//! <ports> <coflows>
//! <id> <arrival ms> <flows> <sources> <destinations> (<src> <dst> <MB>)...
//! ```
//!
//! Every flow is listed, so any coflow is representable. A (src, dst) pair may repeat inside a
//! coflow in real files; each occurrence is its own flow. MB is 2^20 bytes.
//!
//! The declared source and destination counts are *not* always the distinct ports of the flows
//! in Sincronia's own files: its generator keeps the original mapper and reducer counts but moves
//! each self-flow to another destination (e.g. coflow 1 of `sincronia-400-0.9-FB-UPWS` declares
//! 2 destinations and its flows reach 3). See [`DeclaredCounts`].

use std::collections::HashSet;
use std::io::Write;

use super::error::{Field, TraceError, TraceErrorKind, WriteError};
use super::lines::{read_lines, FlowBudget, Line};
use super::num::{arrival_s_of_ms, ms_for, written};
use crate::coflow::{Coflow, Flow, Trace};
use crate::units::MB;

const FORMAT: &str = "sincronia";

/// How strictly the declared `<sources> <destinations>` counts are checked. The Trace does not
/// keep them: they are redundant with the flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeclaredCounts {
    /// Each count lies in `1..=flows`. Default, because Sincronia's own FB-derived files
    /// declare pre-relabelling reducer counts (106 of 400 and 136 of 526 coflows differ).
    #[default]
    Bounded,
    /// Each count equals the number of distinct sources (destinations) of the flows.
    Exact,
}

pub fn parse(text: &str, file: &str, counts: DeclaredCounts) -> Result<Trace, TraceError> {
    parse_limited(text, file, counts, super::DEFAULT_MAX_FLOWS)
}

/// [`parse`], holding at most `max_flows` flows.
pub fn parse_limited(
    text: &str,
    file: &str,
    counts: DeclaredCounts,
    max_flows: u64,
) -> Result<Trace, TraceError> {
    read_lines(text, file, max_flows, |line, ports, budget| {
        parse_line(line, ports, counts, budget)
    })
}

fn parse_line(
    line: &mut Line,
    ports: u32,
    counts: DeclaredCounts,
    budget: FlowBudget,
) -> Result<Coflow, TraceError> {
    let (_, id) = line.id("coflow id")?;
    let (_, ms) = line.ms("arrival ms")?;
    let (flows_field, n) = line.count("flow count")?;
    let (src_field, n_src) = line.count("source count")?;
    let (dst_field, n_dst) = line.count("destination count")?;
    budget.check(line, &flows_field, Some(n as u64), || {
        "as many `src dst MB` triples".to_string()
    })?;
    // Three tokens a flow; a count past usize / 3 cannot be on the line.
    let tokens = n.saturating_mul(3);
    line.expect_remaining(tokens, "flow `src dst MB`", &flows_field, n, "flows")?;
    let mut flows = Vec::with_capacity(n);
    for k in 1..=n {
        let (_, src) = line.port(&format!("flow {k} source port"), ports)?;
        let (_, dst) = line.port(&format!("flow {k} destination port"), ports)?;
        let (field, text) = line.token(&format!("flow {k} MB"))?;
        let bytes = line.mb_of(field, text)? * MB;
        flows.push(Flow { src, dst, bytes });
    }
    line.finish()?;

    let distinct_src = flows.iter().map(|f| f.src).collect::<HashSet<_>>().len();
    let distinct_dst = flows.iter().map(|f| f.dst).collect::<HashSet<_>>().len();
    check_count(line, counts, src_field, n_src, distinct_src, n, "sources")?;
    check_count(
        line,
        counts,
        dst_field,
        n_dst,
        distinct_dst,
        n,
        "destinations",
    )?;
    Ok(Coflow::new(id, arrival_s_of_ms(ms), flows))
}

fn check_count(
    line: &Line,
    counts: DeclaredCounts,
    field: Field,
    declared: usize,
    distinct: usize,
    flows: usize,
    what: &str,
) -> Result<(), TraceError> {
    let why = match counts {
        DeclaredCounts::Exact if declared != distinct => {
            format!("the flows have {distinct} distinct {what}")
        }
        DeclaredCounts::Bounded if declared > flows => format!("the coflow has only {flows} flows"),
        _ => return Ok(()),
    };
    Err(line.err(TraceErrorKind::DeclaredCount {
        field,
        declared,
        why,
    }))
}

/// Writes `trace` in Sincronia's format, flows in their order, declaring the distinct source
/// and destination counts. Integral MB print as integers, as in Sincronia's files.
pub fn write(trace: &Trace, out: &mut impl Write) -> Result<(), WriteError> {
    writeln!(out, "{} {}", trace.ports, trace.coflows.len())?;
    for c in &trace.coflows {
        super::check_writable(c, trace.ports, FORMAT)?;
        if !c.parents.is_empty() || c.compute_s != 0.0 {
            return Err(WriteError::Unrepresentable {
                id: c.id,
                format: FORMAT,
                why: "it has parents or a compute time, which only the coflow-benchmark format \
                      carries (`parents <P> <id>... compute <ms>`, docs/traces.md)"
                    .into(),
            });
        }
        if c.flows.is_empty() {
            return Err(WriteError::Unrepresentable {
                id: c.id,
                format: FORMAT,
                why: "it has no flows".into(),
            });
        }
        let n_src = c.flows.iter().map(|f| f.src).collect::<HashSet<_>>().len();
        let n_dst = c.flows.iter().map(|f| f.dst).collect::<HashSet<_>>().len();
        write!(
            out,
            "{} {} {} {n_src} {n_dst}",
            c.id,
            written(ms_for(c.arrival_s)),
            c.flows.len()
        )?;
        for f in &c.flows {
            // Division by 2^20 is exact, so the shortest round trip reads back the same bytes.
            write!(out, " {} {} {}", f.src, f.dst, written(f.bytes / MB))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "16 2\n0 28 2 1 1 0 3 1 0 3 1.5\n1 47 2 2 1 9 4 47 10 4 47\n";

    #[test]
    fn reads_every_flow_including_repeated_pairs() {
        let t = parse(TEXT, "s.txt", DeclaredCounts::Exact).unwrap();
        assert_eq!(t.ports, 16);
        let c = &t.coflows[0];
        assert_eq!((c.id, c.arrival_s), (0, 0.028));
        assert_eq!(
            c.flows,
            vec![
                Flow {
                    src: 0,
                    dst: 3,
                    bytes: MB
                },
                Flow {
                    src: 0,
                    dst: 3,
                    bytes: 1.5 * MB
                }
            ]
        );
    }

    #[test]
    fn writes_what_it_reads() {
        let t = parse(TEXT, "s.txt", DeclaredCounts::Exact).unwrap();
        let mut out = Vec::new();
        write(&t, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), TEXT);
    }

    #[test]
    fn declared_counts_bounded_by_default_exact_on_request() {
        // Two sources declared, one distinct: Sincronia's files do this after relabelling.
        let text = "16 1\n5 0 2 2 1 1 3 1 1 3 1\n";
        assert!(parse(text, "s.txt", DeclaredCounts::Bounded).is_ok());
        let e = parse(text, "s.txt", DeclaredCounts::Exact)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("s.txt:2: field 4 (source count): declares 2"),
            "{e}"
        );
        let e = parse("16 1\n5 0 1 2 1 1 3 1\n", "s.txt", DeclaredCounts::Bounded)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("field 4 (source count)") && e.contains("only 1 flows"),
            "{e}"
        );
    }
}

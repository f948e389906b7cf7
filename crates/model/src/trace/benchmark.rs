//! The coflow-benchmark format (the public Facebook trace), read exactly as CoflowSim reads it:
//!
//! ```text
//! <ports> <coflows>
//! <id> <arrival ms> <mappers> <mapper port>... <reducers> <reducer port>:<MB>...
//! ```
//!
//! - ports are 0-based; a port appears at most once among a coflow's mappers and once among its
//!   reducers (it may be both: the resulting self-flow is kept, as CoflowSim keeps it);
//! - MB is 2^20 bytes; arrival ms become seconds (`ms / 1000`);
//! - only reducer totals are known, so each reducer's bytes are split equally over all mappers:
//!   mappers x reducers flows, listed reducer by reducer, mappers in file order;
//! - a line may end with `parents <P> <parent id>... [compute <ms>]`, the DAG extension
//!   (`super::dag`): without it a line reads exactly as before.

use std::collections::HashMap;
use std::io::Write;

use super::dag::{self, COMPUTE, PARENTS};
use super::error::{Field, TraceError, TraceErrorKind, WriteError};
use super::lines::{read_lines, FlowBudget, Line, MAX_EXACT_MS};
use super::num::{arrival_s_of_ms, flow_bytes, ms_for, reducer_mb_for, written};
use crate::coflow::{Coflow, CoflowId, Flow, Trace};

const FORMAT: &str = "coflow-benchmark";

/// Relative tolerance within which a reducer's flows count as an equal split.
const EQUAL_SPLIT_TOLERANCE: f64 = 1e-9;

pub fn parse(text: &str, file: &str) -> Result<Trace, TraceError> {
    parse_limited(text, file, super::DEFAULT_MAX_FLOWS)
}

/// [`parse`], holding at most `max_flows` flows.
pub fn parse_limited(text: &str, file: &str, max_flows: u64) -> Result<Trace, TraceError> {
    let mut places: HashMap<CoflowId, Place> = HashMap::new();
    let mut trace = read_lines(text, file, max_flows, |line, ports, budget| {
        let (c, place) = parse_line(line, ports, budget)?;
        if let Some(p) = place {
            places.insert(c.id, p);
        }
        Ok(c)
    })?;
    if !places.is_empty() {
        check_dag(&mut trace, file, &places)?;
    }
    Ok(trace)
}

/// Where a coflow line's parents are: its line and the field of each parent id.
struct Place {
    line: usize,
    parent_fields: Vec<usize>,
    /// The field of the compute time, if the line has one.
    compute_field: Option<usize>,
}

/// The parents of a read trace as a DAG workload (`dag::check`), blaming the line and the
/// parent's field; then parents before children at equal arrivals.
fn check_dag(
    trace: &mut Trace,
    file: &str,
    places: &HashMap<CoflowId, Place>,
) -> Result<(), TraceError> {
    if let Err(f) = dag::check(&trace.coflows) {
        let c = &trace.coflows[f.coflow];
        let place = places.get(&c.id);
        let field = match (f.parent, place) {
            (Some(k), Some(p)) => Field::new(p.parent_fields[k], "parent id"),
            _ => Field::new(1, "coflow id"),
        };
        let line = place.map_or(0, |p| p.line);
        return Err(TraceError::new(
            file,
            line,
            TraceErrorKind::Dag { field, why: f.why },
        ));
    }
    dag::sort_for_replay(&mut trace.coflows);
    check_releases(trace, file, places)
}

/// A child is released no earlier than its parents' earliest releases plus its compute time:
/// that time must stay within 2^53 ms, where arrivals are bounded so that milliseconds stay
/// exact (adversarial pass 34, C13: an arrival near 2^53 ms plus a compute of 2^53 ms was
/// released at 1.8e16 ms, where a 1 KB coflow's CCT came out 0). `trace.coflows` is in replay
/// order: parents first.
fn check_releases(
    trace: &Trace,
    file: &str,
    places: &HashMap<CoflowId, Place>,
) -> Result<(), TraceError> {
    let mut earliest_ms: HashMap<CoflowId, f64> = HashMap::with_capacity(trace.coflows.len());
    for c in &trace.coflows {
        let arrival_ms = c.arrival_s * 1000.0;
        let after_parents = (c.parents.iter())
            .map(|p| earliest_ms.get(p).copied().unwrap_or(0.0))
            .fold(f64::NEG_INFINITY, f64::max);
        let release_ms = if c.parents.is_empty() {
            arrival_ms
        } else {
            arrival_ms.max(after_parents + c.compute_s * 1000.0)
        };
        if release_ms > MAX_EXACT_MS {
            let place = places.get(&c.id);
            let field = match place.and_then(|p| p.compute_field) {
                Some(k) => Field::new(k, "compute ms"),
                None => Field::new(1, "coflow id"),
            };
            return Err(TraceError::new(
                file,
                place.map_or(0, |p| p.line),
                TraceErrorKind::Dag {
                    field,
                    why: format!(
                        "coflow {} is released no earlier than {release_ms:e} ms (its parents' \
                         earliest release plus its compute time), past 2^53 ms, where \
                         milliseconds are no longer exact: shorten the compute times along \
                         this chain",
                        c.id
                    ),
                },
            ));
        }
        earliest_ms.insert(c.id, release_ms);
    }
    Ok(())
}

/// The DAG tail of a line, if it has one: `parents <P> <id>... [compute <ms>]`.
fn parse_parents(line: &mut Line, c: &mut Coflow) -> Result<Option<Place>, TraceError> {
    match line.peek() {
        Some(PARENTS) => {}
        Some(COMPUTE) => {
            return Err(line.err(TraceErrorKind::Dag {
                field: line.next_field("compute"),
                why: "a compute time needs parents: write `parents <P> <parent id>... compute \
                      <ms>`"
                    .into(),
            }))
        }
        _ => return Ok(None),
    }
    line.token(PARENTS)?;
    let (count_field, p) = line.count("parent count")?;
    line.expect_remaining(p, "parent id", &count_field, p, "parents")?;
    let mut parent_fields = Vec::with_capacity(p);
    for _ in 0..p {
        let (field, id) = line.id("parent id")?;
        parent_fields.push(field.index);
        c.parents.push(id);
    }
    let mut compute_field = None;
    if line.peek() == Some(COMPUTE) {
        line.token(COMPUTE)?;
        let (field, ms) = line.ms("compute ms")?;
        compute_field = Some(field.index);
        // -0 + 0 is +0.
        c.compute_s = arrival_s_of_ms(ms) + 0.0;
    }
    Ok(Some(Place {
        line: line.number,
        parent_fields,
        compute_field,
    }))
}

fn parse_line(
    line: &mut Line,
    ports: u32,
    budget: FlowBudget,
) -> Result<(Coflow, Option<Place>), TraceError> {
    let (_, id) = line.id("coflow id")?;
    let (_, ms) = line.ms("arrival ms")?;

    let (count_field, m) = line.count("mapper count")?;
    line.expect_remaining(m, "mapper port", &count_field, m, "mappers")?;
    let mut seen = HashMap::new();
    let mut mappers = Vec::with_capacity(m);
    for _ in 0..m {
        let (field, port) = line.port("mapper port", ports)?;
        no_repeat(line, &mut seen, field, port, "mapper")?;
        mappers.push(port);
    }

    let (count_field, r) = line.count("reducer count")?;
    // The line is short; the flows it implies are not.
    let flows = (m as u64).checked_mul(r as u64);
    budget.check(line, &count_field, flows, || {
        format!("{m} mappers x {r} reducers")
    })?;
    line.expect_remaining(r, "reducer port:MB", &count_field, r, "reducers")?;
    seen.clear();
    let mut reducers = Vec::with_capacity(r);
    for _ in 0..r {
        let (field, token) = line.token("reducer port:MB")?;
        let (port_text, mb_text) = token
            .split_once(':')
            .ok_or_else(|| line.bad_number(field.clone(), token, "`port:MB`"))?;
        let (field, port) =
            line.port_of(Field::new(field.index, "reducer port"), port_text, ports)?;
        let mb = line.mb_of(Field::new(field.index, "reducer MB"), mb_text)?;
        no_repeat(line, &mut seen, field, port, "reducer")?;
        reducers.push((port, mb));
    }
    let mut c = Coflow::new(id, arrival_s_of_ms(ms), Vec::new());
    let place = parse_parents(line, &mut c)?;
    line.finish()?;

    c.flows = reducers
        .iter()
        .flat_map(|&(dst, mb)| {
            let bytes = flow_bytes(mb, m);
            mappers.iter().map(move |&src| Flow { src, dst, bytes })
        })
        .collect();
    Ok((c, place))
}

fn no_repeat(
    line: &Line,
    seen: &mut HashMap<u32, usize>,
    field: Field,
    port: u32,
    role: &'static str,
) -> Result<(), TraceError> {
    if let Some(&first_index) = seen.get(&port) {
        return Err(line.err(TraceErrorKind::DuplicatePort {
            field,
            role,
            port,
            first_index,
        }));
    }
    seen.insert(port, field.index);
    Ok(())
}

/// Writes `trace` in the coflow-benchmark format. Fails, naming the coflow, unless every coflow
/// is a full mappers x reducers product whose flows into each reducer are equal (within a
/// relative 1e-9): only such coflows read back as themselves.
pub fn write(trace: &Trace, out: &mut impl Write) -> Result<(), WriteError> {
    // What the reader refuses is not written: parents must make a DAG workload.
    dag::check(&trace.coflows).map_err(|f| WriteError::Unrepresentable {
        id: trace.coflows[f.coflow].id,
        format: FORMAT,
        why: f.why,
    })?;
    writeln!(out, "{} {}", trace.ports, trace.coflows.len())?;
    for c in &trace.coflows {
        super::check_writable(c, trace.ports, FORMAT)?;
        let Shape { mappers, reducers } = shape(c).map_err(|why| WriteError::Unrepresentable {
            id: c.id,
            format: FORMAT,
            why,
        })?;
        write!(
            out,
            "{} {} {}",
            c.id,
            written(ms_for(c.arrival_s)),
            mappers.len()
        )?;
        for p in &mappers {
            write!(out, " {p}")?;
        }
        write!(out, " {}", reducers.len())?;
        for (p, mb) in &reducers {
            if *mb > super::MAX_MB {
                return Err(WriteError::Unrepresentable {
                    id: c.id,
                    format: FORMAT,
                    why: format!("reducer {p} receives {mb:e} MB, past the 2^33 MB a trace holds"),
                });
            }
            // `{:?}` is shortest-round-trip and keeps the original's `48.0` look.
            write!(out, " {p}:{mb:?}")?;
        }
        if !c.parents.is_empty() {
            write!(out, " {PARENTS} {}", c.parents.len())?;
            for p in &c.parents {
                write!(out, " {p}")?;
            }
            if c.compute_s != 0.0 {
                if c.compute_s * 1000.0 > MAX_EXACT_MS {
                    return Err(WriteError::Unrepresentable {
                        id: c.id,
                        format: FORMAT,
                        why: format!(
                            "compute time {:e} ms is past 2^53 ms, where milliseconds are no \
                             longer exact",
                            c.compute_s * 1000.0
                        ),
                    });
                }
                write!(out, " {COMPUTE} {}", ms_for(c.compute_s))?;
            }
        }
        writeln!(out)?;
    }
    Ok(())
}

/// A coflow as one benchmark line: mappers, and (reducer, MB), in first-appearance order.
struct Shape {
    mappers: Vec<u32>,
    reducers: Vec<(u32, f64)>,
}

/// The shape of `c`, if it is an equal-split mappers x reducers product.
fn shape(c: &Coflow) -> Result<Shape, String> {
    let mut mappers = Vec::new();
    let mut reducers = Vec::new();
    let mut cells = HashMap::with_capacity(c.flows.len());
    for f in &c.flows {
        if cells.insert((f.src, f.dst), f.bytes).is_some() {
            return Err(format!("flow {} -> {} appears twice", f.src, f.dst));
        }
        if !mappers.contains(&f.src) {
            mappers.push(f.src);
        }
        if !reducers.contains(&f.dst) {
            reducers.push(f.dst);
        }
    }
    if c.flows.is_empty() || c.flows.len() != mappers.len() * reducers.len() {
        return Err(format!(
            "its {} flows are not a full product of its {} mappers and {} reducers",
            c.flows.len(),
            mappers.len(),
            reducers.len()
        ));
    }
    let m = mappers.len();
    let mut out = Vec::with_capacity(reducers.len());
    for &dst in &reducers {
        let first = cells[&(mappers[0], dst)];
        for &src in &mappers[1..] {
            let b = cells[&(src, dst)];
            if (b - first).abs() > EQUAL_SPLIT_TOLERANCE * b.abs().max(first.abs()) {
                return Err(format!(
                    "reducer {dst} receives unequal flows ({first} bytes from {}, {b} from {src})",
                    mappers[0]
                ));
            }
        }
        out.push((dst, reducer_mb_for(first, m)));
    }
    Ok(Shape {
        mappers,
        reducers: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::MB;

    fn read(text: &str) -> Trace {
        parse(text, "t.txt").unwrap()
    }

    #[test]
    fn splits_reducer_bytes_equally_over_mappers() {
        let t = read("150 2\n1 0 1 22 1 65:1.0\n2 10833 2 104 132 1 140:48.0\n");
        assert_eq!(t.ports, 150);
        assert_eq!(
            t.coflows[0].flows,
            vec![Flow {
                src: 22,
                dst: 65,
                bytes: MB
            }]
        );
        let c = &t.coflows[1];
        assert_eq!(c.arrival_s, 10.833);
        assert_eq!(c.flows.len(), 2);
        assert!(c.flows.iter().all(|f| f.dst == 140 && f.bytes == 24.0 * MB));
    }

    #[test]
    fn keeps_self_flows() {
        let t = read("4 1\n0 0 2 1 2 2 1:4.0 3:2.0\n");
        let c = &t.coflows[0];
        assert_eq!(c.flows.len(), 4);
        assert!(c.flows.iter().any(|f| f.src == 1 && f.dst == 1));
    }

    #[test]
    fn sorts_by_arrival_stably() {
        let t = read("4 3\n1 50 1 0 1 1:1\n2 10 1 0 1 1:1\n3 50 1 0 1 1:1\n");
        let ids: Vec<_> = t.coflows.iter().map(|c| c.id).collect();
        assert_eq!(ids, vec![2, 1, 3]);
    }

    #[test]
    fn writes_what_it_reads() {
        let text = "150 2\n1 0 1 22 1 65:1.0\n2 10833 2 104 132 2 140:48.0 3:0.5\n";
        let t = read(text);
        let mut out = Vec::new();
        write(&t, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), text);
    }

    #[test]
    fn refuses_coflows_that_are_not_an_equal_split_product() {
        let mut t = read("4 1\n7 0 2 0 1 1 2:2.0\n");
        t.coflows[0].flows[1].bytes *= 2.0;
        let e = write(&t, &mut Vec::new()).unwrap_err().to_string();
        assert!(e.contains("coflow 7") && e.contains("unequal"), "{e}");
        // (0 -> 2, 1 -> 3): two mappers and two reducers but only two flows.
        t.coflows[0].flows[1].dst = 3;
        let e = write(&t, &mut Vec::new()).unwrap_err().to_string();
        assert!(e.contains("coflow 7") && e.contains("full product"), "{e}");
    }
}

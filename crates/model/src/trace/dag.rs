//! The DAG extension of the coflow-benchmark format (issue 18): a coflow line may end with
//!
//! ```text
//! ... <R> <reducer port>:<MB>... parents <P> <parent id>... [compute <ms>]
//! ```
//!
//! naming the coflows it depends on and the milliseconds of computation between its last
//! parent's end and its own start (its producing stage's compute; 0 when left out). A line
//! without the tail reads as before, so every old trace reads unchanged.
//!
//! What a set of coflows must satisfy to be a DAG workload, checked by the reader (naming file,
//! line and field) and by the writer (naming the coflow) alike: parents are coflows of the
//! trace, not the coflow itself, not named twice, form no cycle, and arrive no later than
//! their children (a child's arrival is the earliest it may start; it is released when its
//! parents have ended and its compute is done, see `Dependencies::StartsAfter`). A compute
//! time needs parents.

use std::collections::HashMap;

use crate::coflow::{Coflow, CoflowId};

/// Keyword that opens the parent list.
pub const PARENTS: &str = "parents";
/// Keyword that opens the compute time (after the parents).
pub const COMPUTE: &str = "compute";

/// What is wrong with a coflow's parents: the coflow (an index into the slice checked) and,
/// where one parent is to blame, its position in the coflow's parent list.
#[derive(Debug, Clone, PartialEq)]
pub struct DagFault {
    pub coflow: usize,
    pub parent: Option<usize>,
    pub why: String,
}

/// Checks `coflows` (in any order) as a DAG workload; the first fault in coflow order.
pub fn check(coflows: &[Coflow]) -> Result<(), DagFault> {
    let index: HashMap<CoflowId, usize> = (coflows.iter().enumerate())
        .map(|(i, c)| (c.id, i))
        .collect();
    let fault = |coflow, parent, why: String| {
        Err(DagFault {
            coflow,
            parent,
            why,
        })
    };
    // Each parent's first position in the list being checked: a repeat is found in O(1), so a
    // coflow with 100,000 parents costs 100,000 steps, not 5e9 (adversarial pass 34, C4).
    let mut first_at: HashMap<CoflowId, usize> = HashMap::new();
    for (i, c) in coflows.iter().enumerate() {
        first_at.clear();
        if !(c.compute_s.is_finite() && c.compute_s >= 0.0) {
            return fault(
                i,
                None,
                format!("compute time {} s is negative or not finite", c.compute_s),
            );
        }
        if c.parents.is_empty() && c.compute_s != 0.0 {
            return fault(
                i,
                None,
                format!(
                    "coflow {} has a compute time ({} s) but no parents: a coflow without \
                     parents starts at its arrival",
                    c.id, c.compute_s
                ),
            );
        }
        for (k, &p) in c.parents.iter().enumerate() {
            if p == c.id {
                return fault(i, Some(k), format!("coflow {p} names itself as a parent"));
            }
            if let Some(&first) = first_at.get(&p) {
                return fault(
                    i,
                    Some(k),
                    format!(
                        "parent {p} is named twice (first as parent {} of the list)",
                        first + 1
                    ),
                );
            }
            first_at.insert(p, k);
            let Some(&pi) = index.get(&p) else {
                return fault(
                    i,
                    Some(k),
                    format!("parent {p} is not a coflow of the trace"),
                );
            };
            let pa = coflows[pi].arrival_s;
            if pa > c.arrival_s {
                return fault(
                    i,
                    Some(k),
                    format!(
                        "parent {p} arrives at {} ms, after its child {} ({} ms): a coflow may \
                         not arrive before its parents (it is released when they end)",
                        super::num::ms_for(pa),
                        c.id,
                        super::num::ms_for(c.arrival_s)
                    ),
                );
            }
        }
    }
    if let Some((i, k, cycle)) = find_cycle(coflows, &index) {
        let path: Vec<String> = cycle.iter().map(|&j| coflows[j].id.to_string()).collect();
        return fault(
            i,
            Some(k),
            format!(
                "parent {} closes a cycle: {} (each waits for the next)",
                coflows[i].parents[k],
                path.join(" -> ")
            ),
        );
    }
    Ok(())
}

/// A cycle of parent edges, if any: the coflow whose parent closes it, that parent's position
/// in its list, and the cycle as coflow indices (each waiting for the next, back to the first).
/// Iterative depth-first search from each coflow in order, so a chain of any length is fine.
fn find_cycle(
    coflows: &[Coflow],
    index: &HashMap<CoflowId, usize>,
) -> Option<(usize, usize, Vec<usize>)> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut mark = vec![Mark::New; coflows.len()];
    for start in 0..coflows.len() {
        if mark[start] != Mark::New {
            continue;
        }
        // (coflow, next parent to follow)
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        mark[start] = Mark::OnPath;
        while let Some(top) = path.last_mut() {
            let (u, k) = *top;
            let parents = &coflows[u].parents;
            if k == parents.len() {
                mark[u] = Mark::Done;
                path.pop();
                continue;
            }
            top.1 += 1;
            let p = index[&parents[k]];
            match mark[p] {
                Mark::New => {
                    mark[p] = Mark::OnPath;
                    path.push((p, 0));
                }
                Mark::OnPath => {
                    let from = path.iter().position(|&(v, _)| v == p).expect("on the path");
                    let mut cycle: Vec<usize> = path[from..].iter().map(|&(v, _)| v).collect();
                    cycle.push(p);
                    return Some((u, k, cycle));
                }
                Mark::Done => {}
            }
        }
    }
    None
}

/// Each coflow's depth in its DAG (0 without parents, else 1 + its deepest parent's), by
/// index; `coflows` must have passed [`check`].
pub fn depths(coflows: &[Coflow]) -> Vec<u32> {
    let index: HashMap<CoflowId, usize> = (coflows.iter().enumerate())
        .map(|(i, c)| (c.id, i))
        .collect();
    let mut depth: Vec<Option<u32>> = vec![None; coflows.len()];
    for start in 0..coflows.len() {
        let mut stack = vec![start];
        while let Some(&u) = stack.last() {
            if depth[u].is_some() {
                stack.pop();
                continue;
            }
            let pending: Vec<usize> = (coflows[u].parents.iter())
                .map(|p| index[p])
                .filter(|&q| depth[q].is_none())
                .collect();
            if pending.is_empty() {
                let d = (coflows[u].parents.iter())
                    .map(|p| depth[index[p]].expect("done") + 1)
                    .max()
                    .unwrap_or(0);
                depth[u] = Some(d);
                stack.pop();
            } else {
                stack.extend(pending);
            }
        }
    }
    depth.into_iter().map(|d| d.expect("acyclic")).collect()
}

/// Sorts coflows by arrival, stably, then moves a child after its parents where an equal
/// arrival put it first (the least move: among coflows of one arrival, the earliest whose
/// parents are placed goes next), so an order that is already fine is kept: the order the
/// simulator admits coflows in. `coflows` must have passed [`check`].
pub fn sort_for_replay(coflows: &mut [Coflow]) {
    coflows.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
    if coflows.iter().all(|c| c.parents.is_empty()) {
        return;
    }
    let mut start = 0;
    while start < coflows.len() {
        let at = coflows[start].arrival_s;
        let end = start + coflows[start..].partition_point(|c| c.arrival_s == at);
        if end - start > 1 {
            order_run(&mut coflows[start..end]);
        }
        start = end;
    }
}

/// Kahn's algorithm over the parent edges inside one run of equal arrivals, taking the
/// earliest ready coflow each time.
fn order_run(run: &mut [Coflow]) {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let pos: HashMap<CoflowId, usize> = run.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
    let mut waiting = vec![0usize; run.len()];
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); run.len()];
    for (i, c) in run.iter().enumerate() {
        for p in &c.parents {
            if let Some(&j) = pos.get(p) {
                waiting[i] += 1;
                children[j].push(i);
            }
        }
    }
    if waiting.iter().all(|&w| w == 0) {
        return;
    }
    let mut ready: BinaryHeap<Reverse<usize>> = (0..run.len())
        .filter(|&i| waiting[i] == 0)
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(run.len());
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for &k in &children[i] {
            waiting[k] -= 1;
            if waiting[k] == 0 {
                ready.push(Reverse(k));
            }
        }
    }
    debug_assert_eq!(order.len(), run.len(), "checked acyclic");
    let mut taken: Vec<Option<Coflow>> = run.iter().cloned().map(Some).collect();
    for (slot, i) in run.iter_mut().zip(order) {
        *slot = taken[i].take().expect("each once");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coflow::Flow;

    fn c(id: CoflowId, arrival_s: f64, parents: &[CoflowId], compute_s: f64) -> Coflow {
        let mut c = Coflow::new(
            id,
            arrival_s,
            vec![Flow {
                src: 0,
                dst: 1,
                bytes: 1.0,
            }],
        );
        c.parents = parents.to_vec();
        c.compute_s = compute_s;
        c
    }

    #[test]
    fn a_diamond_passes_and_has_depths() {
        let v = vec![
            c(1, 0.0, &[], 0.0),
            c(2, 0.0, &[1], 1.0),
            c(3, 0.0, &[1], 0.0),
            c(4, 0.5, &[2, 3], 2.0),
        ];
        check(&v).unwrap();
        assert_eq!(depths(&v), vec![0, 1, 1, 2]);
    }

    #[test]
    fn each_fault_names_the_coflow_and_the_parent() {
        let f = check(&[c(1, 0.0, &[1], 0.0)]).unwrap_err();
        assert_eq!((f.coflow, f.parent), (0, Some(0)));
        assert!(f.why.contains("names itself"), "{}", f.why);
        let f = check(&[c(1, 0.0, &[], 0.0), c(2, 0.0, &[1, 1], 0.0)]).unwrap_err();
        assert_eq!((f.coflow, f.parent), (1, Some(1)));
        assert!(f.why.contains("named twice"), "{}", f.why);
        let f = check(&[c(2, 0.0, &[9], 0.0)]).unwrap_err();
        assert!(f.why.contains("parent 9 is not a coflow"), "{}", f.why);
        let f = check(&[c(1, 0.0, &[], 1.0)]).unwrap_err();
        assert_eq!((f.coflow, f.parent), (0, None));
        assert!(f.why.contains("no parents"), "{}", f.why);
        let f = check(&[c(1, 0.0, &[], 0.0), c(2, 0.0, &[1], f64::NAN)]).unwrap_err();
        assert!(f.why.contains("not finite"), "{}", f.why);
        let f = check(&[c(1, 0.0, &[], 0.0), c(2, 0.0, &[1], -1.0)]).unwrap_err();
        assert!(f.why.contains("negative"), "{}", f.why);
        let f = check(&[c(1, 2.0, &[], 0.0), c(2, 1.0, &[1], 0.0)]).unwrap_err();
        assert!(f.why.contains("after its child 2"), "{}", f.why);
    }

    #[test]
    fn a_cycle_is_named_in_full() {
        // 1 waits for 2, 2 for 3, 3 for 1; 4 hangs off the cycle.
        let v = vec![
            c(4, 0.0, &[1], 0.0),
            c(1, 0.0, &[2], 0.0),
            c(2, 0.0, &[3], 0.0),
            c(3, 0.0, &[1], 0.0),
        ];
        let f = check(&v).unwrap_err();
        assert_eq!((f.coflow, f.parent), (3, Some(0)));
        assert!(
            f.why.contains("parent 1 closes a cycle: 1 -> 2 -> 3 -> 1"),
            "{}",
            f.why
        );
    }

    #[test]
    fn a_long_chain_neither_overflows_nor_takes_long() {
        let n = 200_000;
        let v: Vec<Coflow> = (0..n)
            .map(|i| {
                let parents: Vec<CoflowId> = (i > 0).then(|| i - 1).into_iter().collect();
                c(i, 0.0, &parents, 0.0)
            })
            .collect();
        let mut rev = v.clone();
        rev.reverse();
        check(&rev).unwrap();
        assert_eq!(depths(&rev)[0], n as u32 - 1);
        sort_for_replay(&mut rev);
        assert!(rev.iter().enumerate().all(|(i, c)| c.id == i as u64));
    }

    #[test]
    fn equal_arrivals_move_only_children_ahead_of_their_parents() {
        // 3 (no parents) stays between 1 and its child 2; 5 moves after its parent 4.
        let mut v = vec![
            c(1, 0.0, &[], 0.0),
            c(3, 0.0, &[], 0.0),
            c(2, 0.0, &[1], 0.0),
            c(5, 1.0, &[4], 0.0),
            c(6, 1.0, &[], 0.0),
            c(4, 1.0, &[1], 0.0),
        ];
        sort_for_replay(&mut v);
        let ids: Vec<u64> = v.iter().map(|c| c.id).collect();
        assert_eq!(ids, vec![1, 3, 2, 6, 4, 5]);
    }

    /// Adversarial pass 34, C4: a repeated parent was looked for in the whole list before each
    /// parent, so one coflow with 100,000 parents cost 5e9 comparisons (a fan-in of 100,000
    /// did not finish in 60 s). 600,000 parents: 1.8e11 comparisons that way, far past the
    /// bound below in any build (a comparison a nanosecond is three minutes); about a second
    /// in a debug build now.
    #[test]
    fn a_fan_in_of_many_parents_is_checked_in_linear_time() {
        let n = 600_000u64;
        let mut coflows: Vec<Coflow> = (1..=n).map(|i| c(i, 0.0, &[], 0.0)).collect();
        let parents: Vec<CoflowId> = (1..=n).collect();
        coflows.push(c(n + 1, 0.0, &parents, 0.0));
        let t = std::time::Instant::now();
        check(&coflows).expect("a fan-in is a DAG");
        let took = t.elapsed().as_secs_f64();
        assert!(took < 20.0, "{took} s to check a fan-in of {n}");
        // A repeat is still found, naming its first place.
        coflows[n as usize].parents.push(7);
        let f = check(&coflows).unwrap_err();
        assert_eq!(f.parent, Some(n as usize));
        assert!(
            f.why.contains("named twice (first as parent 7"),
            "{}",
            f.why
        );
    }
}

//! Multi-wave coflows (Aalo §6.8, Table 6.4): a stage whose senders (mapper tasks) do not all
//! run at once but in waves, because a job gets fewer slots than it has tasks. Each coflow of a
//! trace becomes one *stage* of 1 to W waves, drawn from the thesis' distribution for "max
//! waves" W; its senders are split as evenly as can be over the waves (never more waves than
//! senders), and every wave is a coflow of its own whose parent is the wave before it.
//!
//! Replayed with `Dependencies::StartsAfter`, wave k+1 starts when wave k's flows have all
//! ended: a sender task that pushes its output holds its slot until the bytes are out, and the
//! next wave's tasks take the freed slots (a wave-wide barrier is our simplification of
//! slot-by-slot release; the thesis does not say). Aalo sees the waves of a stage as one
//! entity (its DAG rule, one coflow per stage); clairvoyant Varys sees one coflow per wave,
//! which is how the thesis says Varys must run them. A stage's completion time is the last
//! wave's end minus the stage's arrival ([`stage_of`] maps a wave back).
//!
//! [`split_slots`] is the thesis' setting without barriers (`--wave-timing overlap`): "Aalo
//! uses one coflow per stage and no barriers" (§6.8.3). A stage of W waves has as many sender
//! *slots* as its largest wave has senders (the thesis varied "the maximum number of concurrent
//! senders in each wave"); slot j runs the j-th sender of each wave in turn, so the j-th
//! sender of wave k+1 starts when the j-th sender of wave k has sent all its bytes (its task
//! ended and freed the slot), not when the whole wave has. Every sender's part of a wave (a
//! *task*) is a coflow of its own, parents `[first task of the stage, the task before it in its
//! slot]`: replayed with `Dependencies::StageSlots`, the first parent only puts the task in the
//! stage's DAG (Aalo's one entity per stage) and the second holds it until that task ended. A
//! stage of one wave stays one coflow, as under [`split`].

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::GenError;
use crate::{CoflowId, Trace};

/// Wave ids are `stage id * WAVE_IDS + wave index`.
pub const WAVE_IDS: u64 = 8;

/// Table 6.4: the fraction of coflows with 1, 2, 3, 4 waves, per "max waves".
pub fn table_6_4(max_waves: u32) -> Option<&'static [f64]> {
    match max_waves {
        1 => Some(&[1.0]),
        2 => Some(&[0.9, 0.1]),
        4 => Some(&[0.81, 0.09, 0.04, 0.06]),
        _ => None,
    }
}

/// Task ids of [`split_slots`]: `TASK_FLAG | (stage id * WAVE_IDS + wave) * SLOT_IDS + slot`.
pub const TASK_FLAG: u64 = 1 << 62;
/// Slots a stage of [`split_slots`] may have.
pub const SLOT_IDS: u64 = 1 << 10;

/// The stage a wave of [`split`] or a task of [`split_slots`] belongs to.
pub fn stage_of(wave: CoflowId) -> CoflowId {
    if wave & TASK_FLAG != 0 {
        (wave & !TASK_FLAG) / SLOT_IDS / WAVE_IDS
    } else {
        wave / WAVE_IDS
    }
}

/// Each coflow of `trace` with its senders (sorted) and its number of waves, drawn from Table
/// 6.4 in trace order (one draw per coflow, so [`split`] and [`split_slots`] agree).
fn draw(
    trace: &Trace,
    max_waves: u32,
    seed: u64,
    max_id: u64,
) -> Result<Vec<(Vec<u32>, usize)>, GenError> {
    let dist = table_6_4(max_waves).ok_or_else(|| GenError::BadSpec {
        field: "max waves",
        why: format!("{max_waves}: Table 6.4 of the thesis gives 1, 2 and 4"),
    })?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(trace.coflows.len());
    for c in &trace.coflows {
        if c.id > max_id {
            return Err(GenError::BadSpec {
                field: "coflow id",
                why: format!("{} is too large to number its waves", c.id),
            });
        }
        if !c.parents.is_empty() {
            return Err(GenError::BadSpec {
                field: "coflow parents",
                why: format!(
                    "coflow {} already has parents; waves split single stages",
                    c.id
                ),
            });
        }
        let u: f64 = rng.gen_range(0.0..1.0);
        let mut drawn = dist.len();
        let mut acc = 0.0;
        for (i, p) in dist.iter().enumerate() {
            acc += p;
            if u < acc {
                drawn = i + 1;
                break;
            }
        }
        let mut senders: Vec<u32> = c.flows.iter().map(|f| f.src).collect();
        senders.sort_unstable();
        senders.dedup();
        let w = drawn.min(senders.len()).max(1);
        out.push((senders, w));
    }
    Ok(out)
}

/// Split every coflow of `trace` into waves (see the module docs), seeded.
pub fn split(trace: &Trace, max_waves: u32, seed: u64) -> Result<Trace, GenError> {
    let drawn = draw(trace, max_waves, seed, u64::MAX / WAVE_IDS - 1)?;
    let mut coflows = Vec::with_capacity(trace.coflows.len());
    for (c, (senders, w)) in trace.coflows.iter().zip(drawn) {
        let m = senders.len();
        for j in 0..w {
            let part = &senders[j * m / w..(j + 1) * m / w];
            let mut wave = c.clone();
            wave.id = c.id * WAVE_IDS + j as u64;
            wave.flows = c
                .flows
                .iter()
                .filter(|f| part.binary_search(&f.src).is_ok())
                .copied()
                .collect();
            wave.parents = if j == 0 {
                vec![]
            } else {
                vec![c.id * WAVE_IDS + j as u64 - 1]
            };
            coflows.push(wave);
        }
    }
    Ok(Trace {
        ports: trace.ports,
        coflows,
    })
}

/// Split every coflow of `trace` into the waves [`split`] draws (same seed, same waves), each
/// wave into one task per sender, chained slot by slot (see the module docs): for
/// `--wave-timing overlap`, replayed with `Dependencies::StageSlots`.
pub fn split_slots(trace: &Trace, max_waves: u32, seed: u64) -> Result<Trace, GenError> {
    let max_id = (TASK_FLAG - 1) / SLOT_IDS / WAVE_IDS - 1;
    let drawn = draw(trace, max_waves, seed, max_id)?;
    let mut coflows = Vec::with_capacity(trace.coflows.len());
    for (c, (senders, w)) in trace.coflows.iter().zip(drawn) {
        if w == 1 {
            // One wave: nothing waits for a slot; the stage is the coflow, as under `split`.
            let mut one = c.clone();
            one.id = c.id * WAVE_IDS;
            coflows.push(one);
            continue;
        }
        let m = senders.len();
        let task =
            |k: usize, j: usize| TASK_FLAG | ((c.id * WAVE_IDS + k as u64) * SLOT_IDS + j as u64);
        // The task last run in each slot.
        let mut slot: Vec<Option<CoflowId>> = Vec::new();
        for k in 0..w {
            let part = &senders[k * m / w..(k + 1) * m / w];
            if part.len() as u64 > SLOT_IDS {
                return Err(GenError::BadSpec {
                    field: "coflow senders",
                    why: format!(
                        "coflow {} has {} senders in one wave; at most {SLOT_IDS} can be numbered",
                        c.id,
                        part.len()
                    ),
                });
            }
            if slot.len() < part.len() {
                slot.resize(part.len(), None);
            }
            for (j, &src) in part.iter().enumerate() {
                let mut t = c.clone();
                t.id = task(k, j);
                t.flows = c.flows.iter().filter(|f| f.src == src).copied().collect();
                t.parents = match (k, j, slot[j]) {
                    (0, 0, _) => vec![],
                    (_, _, None) => vec![task(0, 0)],
                    (_, _, Some(before)) => vec![task(0, 0), before],
                };
                slot[j] = Some(t.id);
                coflows.push(t);
            }
        }
    }
    Ok(Trace {
        ports: trace.ports,
        coflows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Coflow, Flow};

    fn trace(coflows: usize, senders: u32) -> Trace {
        Trace {
            ports: senders + 1,
            coflows: (0..coflows as u64)
                .map(|id| {
                    let flows = (0..senders)
                        .map(|s| Flow {
                            src: s,
                            dst: senders,
                            bytes: 1.0 + s as f64,
                        })
                        .collect();
                    Coflow::new(id, id as f64, flows)
                })
                .collect(),
        }
    }

    #[test]
    fn waves_follow_table_6_4_and_keep_every_flow_once() {
        let t = trace(4000, 8);
        let w = split(&t, 4, 3).unwrap();
        assert_eq!(w.flows(), t.flows());
        assert!((w.bytes() - t.bytes()).abs() < 1e-9);
        let mut count = [0usize; 4];
        for c in &t.coflows {
            let n = w.coflows.iter().filter(|x| stage_of(x.id) == c.id).count();
            count[n - 1] += 1;
        }
        // 4000 draws: each fraction within 2.5 points of the table's.
        for (got, want) in count.iter().zip(table_6_4(4).unwrap()) {
            let f = *got as f64 / 4000.0;
            assert!((f - want).abs() < 0.025, "{count:?}");
        }
        // A wave's parent is the wave before it, of the same stage, and the senders of one
        // stage's waves are disjoint.
        for x in &w.coflows {
            match x.id % WAVE_IDS {
                0 => assert!(x.parents.is_empty()),
                k => assert_eq!(x.parents, vec![x.id - 1], "{k}"),
            }
            for y in &w.coflows {
                if x.id != y.id && stage_of(x.id) == stage_of(y.id) {
                    assert!(x
                        .flows
                        .iter()
                        .all(|f| y.flows.iter().all(|g| g.src != f.src)));
                }
            }
        }
    }

    #[test]
    fn one_wave_is_the_trace_and_waves_never_outnumber_senders() {
        let t = trace(50, 3);
        let one = split(&t, 1, 1).unwrap();
        assert_eq!(one.coflows.len(), 50);
        assert!(one
            .coflows
            .iter()
            .zip(&t.coflows)
            .all(|(a, b)| a.flows == b.flows));
        let single = trace(200, 1);
        assert_eq!(split(&single, 4, 1).unwrap().coflows.len(), 200);
        assert!(split(&t, 3, 1).is_err());
    }
}

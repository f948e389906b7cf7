//! The state every reference simulator shares: admitted jobs, their reducers and flows, bytes
//! left, and when each finished. Flows are created once, reducer by reducer (ports ascending),
//! mappers ascending inside a reducer: the reference's iteration order.

use super::jobs::Job;
use super::units::STEP_MS;

#[derive(Debug, Clone)]
pub struct Flow {
    pub job: u32,
    pub reducer: u32,
    pub src: u32,
    pub dst: u32,
    pub size: f64,
    pub rem: f64,
    /// Current rate, bit/s (rate-based simulators only).
    pub bps: f64,
    pub done: bool,
}

#[derive(Debug, Clone)]
pub struct ReducerState {
    pub job: u32,
    pub port: u32,
    /// Its flows, mappers ascending (finished ones stay, marked done).
    pub flows: Vec<u32>,
    pub unfinished: usize,
    /// `shuffleBytesLeft`: what MADD's bottleneck reads.
    pub bytes_left: f64,
    /// `shuffleBytesPerRack`: what LCF compares (floored at 0).
    pub lcf_left: f64,
}

#[derive(Debug, Clone, Default)]
pub struct JobState {
    pub first_reducer: usize,
    pub reducers: usize,
    pub start_ms: Option<i64>,
    pub finish_ms: Option<i64>,
    pub unfinished_reducers: usize,
    /// `shuffleBytesCompleted`: what DARK's queues read.
    pub bytes_done: f64,
    pub fct_sum_ms: f64,
    pub fct_min_ms: f64,
    pub fct_max_ms: f64,
}

pub struct Book {
    pub jobs: Vec<Job>,
    pub state: Vec<JobState>,
    pub reducers: Vec<ReducerState>,
    pub flows: Vec<Flow>,
    /// Admitted, unfinished jobs, in admission order.
    pub active: Vec<u32>,
}

impl Book {
    pub fn new(jobs: Vec<Job>) -> Self {
        let mut state = Vec::with_capacity(jobs.len());
        let mut reducers = Vec::new();
        let mut flows = Vec::new();
        for (j, job) in jobs.iter().enumerate() {
            state.push(JobState {
                first_reducer: reducers.len(),
                reducers: job.reducers.len(),
                unfinished_reducers: job.reducers.len(),
                fct_min_ms: f64::INFINITY,
                fct_max_ms: f64::NEG_INFINITY,
                ..Default::default()
            });
            for (r, red) in job.reducers.iter().enumerate() {
                let id = reducers.len() as u32;
                let mut ids = Vec::with_capacity(job.mappers.len());
                for &src in &job.mappers {
                    ids.push(flows.len() as u32);
                    flows.push(Flow {
                        job: j as u32,
                        reducer: id,
                        src,
                        dst: red.port,
                        size: job.flow_bytes[r],
                        rem: job.flow_bytes[r],
                        bps: 0.0,
                        done: false,
                    });
                }
                reducers.push(ReducerState {
                    job: j as u32,
                    port: red.port,
                    unfinished: ids.len(),
                    flows: ids,
                    bytes_left: red.bytes,
                    lcf_left: red.lcf_bytes,
                });
            }
        }
        Book {
            jobs,
            state,
            reducers,
            flows,
            active: Vec::new(),
        }
    }

    pub fn reducers_of(&self, job: u32) -> std::ops::Range<usize> {
        let s = &self.state[job as usize];
        s.first_reducer..s.first_reducer + s.reducers
    }

    /// Unfinished flows of `job`, reducer by reducer.
    pub fn open_flows(&self, job: u32) -> impl Iterator<Item = u32> + '_ {
        self.reducers_of(job).flat_map(move |r| {
            self.reducers[r]
                .flows
                .iter()
                .copied()
                .filter(move |&f| !self.flows[f as usize].done)
        })
    }

    pub fn admit(&mut self, job: u32, now_ms: i64) {
        self.state[job as usize].start_ms = Some(now_ms);
        self.active.push(job);
    }

    /// Account `bytes` moved by flow `f`.
    pub fn moved(&mut self, f: u32, bytes: f64) {
        let flow = &mut self.flows[f as usize];
        flow.rem -= bytes;
        let r = &mut self.reducers[flow.reducer as usize];
        r.bytes_left -= bytes;
        r.lcf_left = (r.lcf_left - bytes).max(0.0);
        self.state[flow.job as usize].bytes_done += bytes;
    }

    /// Flow `f` moved its last bytes in the step ending at `end_ms`. Returns true when that
    /// finished its job (which then leaves `active`).
    pub fn finish_flow(&mut self, f: u32, end_ms: i64) -> bool {
        let flow = &mut self.flows[f as usize];
        debug_assert!(!flow.done);
        flow.done = true;
        let job = flow.job;
        let r = &mut self.reducers[flow.reducer as usize];
        r.unfinished -= 1;
        let s = &mut self.state[job as usize];
        let fct = (end_ms - s.start_ms.unwrap_or(0)) as f64;
        s.fct_sum_ms += fct;
        s.fct_min_ms = s.fct_min_ms.min(fct);
        s.fct_max_ms = s.fct_max_ms.max(fct);
        if r.unfinished > 0 {
            return false;
        }
        r.bytes_left = 0.0;
        s.unfinished_reducers -= 1;
        if s.unfinished_reducers > 0 {
            return false;
        }
        s.finish_ms = Some(end_ms);
        self.active.retain(|&j| j != job);
        true
    }

    /// End of the step that starts `steps` steps after `t0_ms`.
    pub fn step_end(t0_ms: i64, steps: u64) -> i64 {
        t0_ms + steps as i64 * STEP_MS
    }
}

//! Job-level results of a replay whose trace has DAGs (`Coflow::parents`): each job's JCT and
//! communication time (`coflowkit_flowsim::jobs`), the table `sim` prints and the JSON.

use coflowkit_flowsim::jobs::{jobs, JobOutcome, JobSummary};
use coflowkit_flowsim::SimOutput;
use coflowkit_model::Trace;
use serde::Serialize;

/// One run's jobs and their averages.
#[derive(Debug, Clone, Serialize)]
pub struct RunJobs {
    pub summary: JobSummary,
    pub jobs: Vec<JobOutcome>,
}

impl RunJobs {
    pub fn of(trace: &Trace, out: &SimOutput) -> anyhow::Result<RunJobs> {
        let jobs =
            jobs(trace, out).map_err(|e| anyhow::anyhow!("jobs of {}: {e}", out.scheduler))?;
        Ok(RunJobs {
            summary: JobSummary::of(&jobs),
            jobs,
        })
    }
}

fn secs(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.3}")
    } else {
        "-".into()
    }
}

/// The job table: one line per run, all jobs and those of more than one level.
pub fn table(names: &[&str], jobs: &[Option<RunJobs>]) -> Option<String> {
    if jobs.iter().all(Option::is_none) {
        return None;
    }
    let mut t = String::from(
        "jobs (DAGs of coflows; JCT: first release to last coflow end; comm: time with one of \
         its coflows active):\n",
    );
    let mut rows = vec![[
        "scheduler",
        "jobs",
        "avg JCT s",
        "p95 JCT s",
        "avg comm s",
        "p95 comm s",
        "multi-level jobs",
        "their avg JCT s",
        "their avg comm s",
    ]
    .map(String::from)
    .to_vec()];
    for (name, j) in names.iter().zip(jobs) {
        if let Some(j) = j {
            let s = &j.summary;
            rows.push(vec![
                name.to_string(),
                s.jobs.to_string(),
                secs(s.avg_jct_s),
                secs(s.p95_jct_s),
                secs(s.avg_comm_s),
                secs(s.p95_comm_s),
                s.multi_level_jobs.to_string(),
                secs(s.multi_level_avg_jct_s),
                secs(s.multi_level_avg_comm_s),
            ]);
        }
    }
    t += &crate::report::aligned(&rows);
    Some(t)
}

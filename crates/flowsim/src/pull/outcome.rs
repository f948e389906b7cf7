//! What a pull-based shuffle run produces, and the paper's metrics derived from it.

use serde::{Deserialize, Serialize};

/// One reduce task: shuffling from its start (its job's arrival) to its last fetch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskOutcome {
    pub job: u64,
    pub node: u32,
    pub start_s: f64,
    pub finish_s: f64,
    pub bytes: f64,
}

impl TaskOutcome {
    /// The task's average shuffle rate in bits per second (None for a task with nothing to
    /// fetch over the network).
    pub fn rate_bps(&self) -> Option<f64> {
        let d = self.finish_s - self.start_s;
        (self.bytes > 0.0 && d > 0.0).then(|| self.bytes * 8.0 / d)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobOutcome {
    pub id: u64,
    pub arrival_s: f64,
    /// From the job's arrival (all map outputs ready) to its last fetch.
    pub shuffle_time_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PullOutput {
    pub policy: String,
    /// From the first fetch ready to the last fetch done (spec A1).
    pub shuffle_time_s: f64,
    pub total_bytes: f64,
    /// The most the fabric can carry: min(sum of uplinks, sum of downlinks), bytes/s.
    pub capacity_bytes_per_s: f64,
    /// Time-average of the sum of fetch rates over the shuffle time, bytes/s.
    pub mean_rate_bytes_per_s: f64,
    /// Requests answered by the selection policy.
    pub decisions: u64,
    /// Rate recomputations (one per distinct completion or arrival time).
    pub events: u64,
    /// Work of every max-min fill, the events' and the selection's estimates: flows filled
    /// plus ports written by resets of the capacities. It grows with the running fetches and
    /// the candidates a policy scans, not with the nodes.
    #[serde(default)]
    pub rate_work: u64,
    /// Max-min evaluations of the policy (GSS and PGSS: one per candidate source scanned).
    #[serde(default)]
    pub evaluations: u64,
    /// Wall time spent inside the selection policy.
    pub select_wall_s: f64,
    pub wall_s: f64,
    pub tasks: Vec<TaskOutcome>,
    pub jobs: Vec<JobOutcome>,
    /// (time s, fraction of all bytes fetched): the paper's cumulative completion ratio.
    pub completion_curve: Vec<(f64, f64)>,
}

impl PullOutput {
    /// Mean over reduce tasks of their shuffle rate, bits per second (Fig. 6's metric).
    pub fn avg_task_rate_bps(&self) -> f64 {
        let rates: Vec<f64> = self
            .tasks
            .iter()
            .filter_map(TaskOutcome::rate_bps)
            .collect();
        if rates.is_empty() {
            0.0
        } else {
            rates.iter().sum::<f64>() / rates.len() as f64
        }
    }

    /// Mean rate over the shuffle as a fraction of the fabric's capacity.
    pub fn link_utilization(&self) -> f64 {
        if self.capacity_bytes_per_s > 0.0 {
            self.mean_rate_bytes_per_s / self.capacity_bytes_per_s
        } else {
            0.0
        }
    }
}

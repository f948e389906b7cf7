//! What a packet-level run counts, in one place: the engine's phases add to it, the report
//! reads it.

/// The counters of one run.
pub(crate) struct Metrics {
    /// Data packets to deliver in all, and delivered so far.
    pub(crate) data_total: u64,
    pub(crate) data_done: u64,
    /// Timestep of the last data packet received.
    pub(crate) last_rx: u64,
    /// Per host: timestep + 1 of its last data packet received and sent (0: none).
    pub(crate) host_rx_end: Vec<u64>,
    pub(crate) host_tx_end: Vec<u64>,
    /// Data packets sent by all hosts in each timestep.
    pub(crate) up_series: Vec<u32>,
    /// Messages completed in each timestep.
    pub(crate) done_series: Vec<u32>,
    /// Messages in all.
    pub(crate) messages: u64,
    /// Data packets delivered to hosts in each timestep.
    pub(crate) down_series: Vec<u32>,
    /// Peak data queued per switch, and in any one port.
    pub(crate) peak_switch: Vec<u64>,
    pub(crate) peak_port: u64,
    /// Packet hops taken.
    pub(crate) hops: u64,
    /// Audit: packets sent beyond what was granted, grant budgets exceeded.
    pub(crate) violations: u64,
    /// Per host: timesteps it spent preempted.
    pub(crate) preempted_steps: Vec<u64>,
    /// Sum over timesteps of the data queued per switch (for average occupancy).
    pub(crate) occupancy_sum: Vec<u64>,
    /// Peak data queued in one port of each class: ToR to host, ToR to core, core to ToR.
    pub(crate) peak_port_class: [u64; 3],
    /// Sum over timesteps of the data queued in each port class (same classes).
    pub(crate) class_sum: [u64; 3],
}

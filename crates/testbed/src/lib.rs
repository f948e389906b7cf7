//! An emulated cluster on one machine whose NICs are real: one Linux network namespace per
//! host, veth pairs to a shaped data bridge and an unshaped control bridge, `tc` token-bucket
//! filters on both ends of each data veth. Used by both real worlds (the runtime's daemons, the
//! UDP transport's ranks) for tests and benchmarks; see [`NetnsCluster`].
//!
//! Code runs in a host on a thread that joined its namespace ([`NetnsCluster::in_host`],
//! [`HostNs::enter`] for a runtime's threads) or as a process started in it
//! ([`NetnsCluster::command`]).

mod cluster;
mod error;
mod host;
pub mod htb;

pub use cluster::{
    available, can_run, leftovers, run_pid, teardown_all, ClusterOptions, NetnsCluster, NsHost,
    Racks, CONTROL_NIC, MAX_HOSTS, MAX_RACKS, WIRE_PER_PAYLOAD,
};
pub use error::{NetnsError, Result};
pub use host::HostNs;

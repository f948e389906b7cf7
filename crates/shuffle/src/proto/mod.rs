//! The shuffle protocols as sans-IO state machines (thesis ch. 3, listings 2-3): GRPF senders
//! and receivers with grants, overcommitment, windows, randomization and unscheduled data; the
//! baselines Hadoop-C, MADD pacing and lockstep; loss recovery. A driver owns the clock and
//! the wire: it hands a `Node` arriving packets and the time and polls it for packets and its
//! next timer (the contract: `node`).

pub mod clock;
pub mod config;
pub mod grpf_rx;
pub mod hadoop_rx;
pub mod heap;
pub mod inbox;
pub mod lockstep;
pub mod madd;
pub mod node;
pub mod packet;
pub mod priority;
pub mod recovery;
pub mod sender;
pub mod window;

pub use clock::Clock;
pub use config::{
    GrantOptions, GrantStart, Policy, Protocol, ProtocolError, PushOrder, Rounding, RxBasis,
    Unscheduled, Window, REAL_GRANT_BATCH,
};
pub use node::{Node, NodeSpec};
pub use packet::{Kind, Packet};
pub use recovery::Recovery;

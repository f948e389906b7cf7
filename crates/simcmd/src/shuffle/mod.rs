//! `coflowkit shuffle ...`'s shared flags and the packet-level run of `shuffle sim`.

pub mod matrix_args;
pub mod sim;
pub mod sim_opts;

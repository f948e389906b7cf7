//! Launching the ranks of a flash burst (spec millisort.md §8.1): rank and size from the
//! environment of whatever started us (our `--local`, `mpirun`, a PMI launcher, `srun`), a
//! rendezvous at rank 0 over TCP where every rank learns every rank's UDP address and the
//! session id, and the local launcher that starts M copies of a command. docs/launch.md
//! ("Launching ranks") says how to run under mpirun and srun.

pub mod env;
mod error;
pub mod interrupt;
pub mod local;
pub mod netns;
pub mod rendezvous;
pub mod secret;
pub mod world;

pub use env::{rank_from_env, Launcher, RankInfo};
pub use error::LaunchError;
pub use local::{run_local, run_ranks};
pub use netns::run_netns;
pub use rendezvous::Table;
pub use secret::Secret;
pub use world::{bootstrap, World};

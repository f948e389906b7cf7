//! The collectives, each a thin driver of its schedule in `crate::schedule`.

mod allgather;
mod alltoallv;
mod barrier;
mod tree;

#[cfg(test)]
mod tests;

//! The scheduling policies, one per file.

pub mod aalo;
pub mod aalo_uncoord;
pub mod dclas;
pub mod fair;
pub mod fifo_lm;
pub mod ordered;
pub mod pfp;
pub mod saath;
pub mod sincronia;
pub mod tenant_share;
#[cfg(test)]
pub(crate) mod test_world;
pub mod varys;
pub mod vc;
pub mod wss;

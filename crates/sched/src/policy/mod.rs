//! The scheduling policies, one per file.

pub mod fair;
pub mod ordered;
pub mod pfp;
pub mod varys;
pub mod wss;

//! Multi-tenant network sharing (thesis ch. 7, App. D): tenants (coflows) described by
//! correlation vectors over the links of a fabric, and the policies that share the links
//! among them: HUG (Algorithm 6), DRF, PS-P, per-flow fairness, and the naive
//! work-conserving rules HUG is measured against. Pure functions of the reported vectors; the
//! simulator and the coordinator are meant to call these same functions.

pub mod allocation;
pub mod board;
pub mod drf;
pub mod error;
pub mod estimate;
pub mod game;
pub mod gen;
pub mod hug;
pub mod madd;
pub mod metrics;
pub mod naive;
pub mod perflow;
pub mod psp;
pub mod spare;
pub mod vector;

pub use allocation::Allocation;
pub use board::Board;
pub use drf::drf;
pub use error::TenantError;
pub use estimate::NcVector;
pub use hug::{hug, HugOptions, Mode, Stage1};
pub use naive::{naive, SpareRule};
pub use perflow::{per_flow, TenantFlow};
pub use psp::psp;
pub use vector::{Links, SparseSpec, Tenant, TenantSpec, Tenants};

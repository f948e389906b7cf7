//! Rate-allocation building blocks shared by every policy.

pub mod blocked_share;
pub mod budget;
pub(crate) mod levels;
pub mod madd;
pub mod pair_index;
pub mod pairs;
pub mod portbits;
pub(crate) mod refill;
pub(crate) mod topup;
pub mod waterfill;

pub use blocked_share::share_among_blocked;
pub use budget::Budget;
pub use madd::{backfill, madd, madd_for, Backfill, LoadTable, PortLoads};
pub use pair_index::PairIndex;
pub use pairs::{fill_coflows, PairFill};
pub(crate) use refill::{Drift, Refill};
pub use refill::{LevelAnswer, NO_BOTTLENECK};
pub(crate) use topup::{Freed, TopUp};
pub use waterfill::{Demand, WaterFill};

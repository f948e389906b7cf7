//! Schedulers by name, with every option a user can set. The CLI, the benchmark and the runtime
//! all build schedulers here, so a name means the same policy everywhere.

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::alloc::Backfill;
use crate::policy::aalo::{Aalo, AaloConfig};
use crate::policy::aalo_uncoord::AaloUncoord;
use crate::policy::fair::Fair;
use crate::policy::fifo_lm::FifoLm;
use crate::policy::ordered::{Order, Ordered};
use crate::policy::pfp::Pfp;
use crate::policy::saath::{Saath, SaathConfig};
use crate::policy::sincronia::Sincronia;
use crate::policy::tenant_share::{TenantPolicy, TenantShare};
use crate::policy::varys::{Varys, VarysConfig};
use crate::policy::vc::VirtualCluster;
use crate::policy::wss::Wss;
use crate::tenant::{Board, HugOptions, Mode, NcVector, Stage1};
use crate::{FlowCompletion, Scheduler};

/// Every selectable scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedulerKind {
    Fair,
    Pfp,
    Fifo,
    Scf,
    Ncf,
    Tcf,
    Sebf,
    Wss,
    Varys,
    Aalo,
    Saath,
    Sincronia,
    /// Multi-tenant sharing, every coflow a tenant (not in `ALL`: not work-conserving by design).
    Hug,
    Drf,
    Psp,
    /// Non-preemptive FIFO (the thesis' Fig 6.1); `fifo` is the FIFO of its simulations.
    #[serde(rename = "fifo-strict")]
    FifoStrict,
    /// Baraat's FIFO with limited multiplexing (a baseline of the Aalo chapter).
    #[serde(rename = "fifo-lm")]
    FifoLm,
    /// Aalo without coordination: each sender queues coflows by the bytes it sent itself.
    #[serde(rename = "aalo-uncoord")]
    AaloUncoord,
    /// Virtual Cluster reservation (Oktopus), the deadline baseline of Varys's simulations.
    Vc,
}

impl SchedulerKind {
    pub const ALL: &'static [SchedulerKind] = &[
        SchedulerKind::Fair,
        SchedulerKind::Pfp,
        SchedulerKind::Fifo,
        SchedulerKind::Scf,
        SchedulerKind::Ncf,
        SchedulerKind::Tcf,
        SchedulerKind::Sebf,
        SchedulerKind::Wss,
        SchedulerKind::Varys,
        SchedulerKind::Aalo,
        SchedulerKind::Saath,
        SchedulerKind::Sincronia,
    ];

    /// The multi-tenant policies (issue 22), selectable by name but not part of `all`.
    pub const TENANT: &'static [SchedulerKind] =
        &[SchedulerKind::Hug, SchedulerKind::Drf, SchedulerKind::Psp];

    /// Baselines and variants selectable by name but not part of `all` (issue 18).
    pub const EXTRA: &'static [SchedulerKind] = &[
        SchedulerKind::FifoStrict,
        SchedulerKind::FifoLm,
        SchedulerKind::AaloUncoord,
        SchedulerKind::Vc,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::Fair => "fair",
            SchedulerKind::Pfp => "pfp",
            SchedulerKind::Fifo => "fifo",
            SchedulerKind::Scf => "scf",
            SchedulerKind::Ncf => "ncf",
            SchedulerKind::Tcf => "tcf",
            SchedulerKind::Sebf => "sebf",
            SchedulerKind::Wss => "wss",
            SchedulerKind::Varys => "varys",
            SchedulerKind::Aalo => "aalo",
            SchedulerKind::Saath => "saath",
            SchedulerKind::Sincronia => "sincronia",
            SchedulerKind::Hug => "hug",
            SchedulerKind::Drf => "drf",
            SchedulerKind::Psp => "psp",
            SchedulerKind::FifoStrict => "fifo-strict",
            SchedulerKind::FifoLm => "fifo-lm",
            SchedulerKind::AaloUncoord => "aalo-uncoord",
            SchedulerKind::Vc => "vc",
        }
    }
}

impl fmt::Display for SchedulerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Error)]
#[error("unknown scheduler `{0}`; choose from: {names}", names = SchedulerKind::ALL.iter().chain(SchedulerKind::TENANT).chain(SchedulerKind::EXTRA).map(|k| k.name()).collect::<Vec<_>>().join(", "))]
pub struct UnknownScheduler(pub String);

impl std::str::FromStr for SchedulerKind {
    type Err = UnknownScheduler;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SchedulerKind::ALL
            .iter()
            .chain(SchedulerKind::TENANT)
            .chain(SchedulerKind::EXTRA)
            .copied()
            .find(|k| k.name() == s.trim().to_ascii_lowercase())
            .ok_or_else(|| UnknownScheduler(s.to_string()))
    }
}

/// Every knob of every scheduler, with the documented defaults (see docs/choices.md).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SchedOptions {
    /// `fair`: at most this many concurrent flows per reducer per coflow (Hadoop uses 5).
    pub fair_max_per_reducer: Option<usize>,
    /// Work conservation of the ordering policies (fifo, scf, ncf, tcf, sebf).
    pub backfill: Backfill,
    /// What a single flow's end triggers for the ordering policies (fifo, scf, ncf, tcf,
    /// sebf), sincronia and pfp; see `VarysConfig`.
    #[serde(default)]
    pub on_flow_completion: FlowCompletion,
    pub varys: VarysConfig,
    #[serde(default)]
    pub aalo: AaloConfig,
    #[serde(default)]
    pub saath: SaathConfig,
    /// `hug`: the cooperative (work-conserving) variant instead of the strategy-proof one.
    #[serde(default)]
    pub hug_cooperative: bool,
    /// `hug`: how stage 1 finds the guarantees (Eq 7.2 when all elastic, the thesis' default;
    /// or multi-round DRF always).
    #[serde(default)]
    pub hug_stage1: Stage1,
    /// `hug`, `drf`, `psp`: the vector of a non-clairvoyant coflow that reports none (one unit
    /// per flow, all-ones on its links, or its measured rates; `tenant::estimate`).
    #[serde(default)]
    pub hug_vectors: NcVector,
    /// `fifo-lm`: a coflow that has sent more than this is heavy [default:
    /// [`FIFO_LM_HEAVY_BYTES`]; the CLI sets the trace's 80th percentile of coflow sizes].
    #[serde(default)]
    pub fifo_lm_heavy_bytes: Option<f64>,
    /// The ordering policies (fifo, scf, ncf, tcf, sebf): whether the coflows their MADD pass
    /// could not serve share the leftovers before work conservation, as the reference
    /// simulator's skipped coflows do [default: on for fifo only].
    #[serde(default)]
    pub blocked_share: Option<bool>,
    /// `aalo-uncoord`: coflows that arrive at the same instant are ordered by each sender on
    /// its own (a per-port seeded shuffle) instead of by one order every sender shares
    /// [default: off, the shared order].
    #[serde(default)]
    pub uncoord_local_ties: bool,
    /// `pfp`: order flows by bytes left only, even when coflows have deadlines (the
    /// reference's PDQ) [default: off, earliest deadline first].
    #[serde(default)]
    pub pfp_ignore_deadlines: bool,
}

/// `fifo-lm`'s heavy threshold when none is given: 100 MB.
pub const FIFO_LM_HEAVY_BYTES: f64 = 100.0 * 1048576.0;

impl SchedOptions {
    /// The same options with every policy reacting to a single flow's end by `how`.
    pub fn with_flow_completion(mut self, how: FlowCompletion) -> Self {
        self.on_flow_completion = how;
        self.varys.on_flow_completion = how;
        self.aalo.on_flow_completion = how;
        self.saath.on_flow_completion = how;
        self
    }
}

/// Build a fresh scheduler.
pub fn build(kind: SchedulerKind, opts: &SchedOptions) -> Box<dyn Scheduler> {
    let ordered = |o: Order| {
        let mut p = Ordered::new(o, opts.backfill, opts.on_flow_completion);
        p.share_blocked = opts
            .blocked_share
            .unwrap_or_else(|| o.shares_blocked_by_default());
        Box::new(p) as Box<dyn Scheduler>
    };
    match kind {
        SchedulerKind::Fair => Box::new(Fair::new(opts.fair_max_per_reducer)),
        SchedulerKind::Pfp => {
            let mut p = Pfp::new(opts.on_flow_completion);
            p.ignore_deadlines = opts.pfp_ignore_deadlines;
            Box::new(p)
        }
        SchedulerKind::Fifo => ordered(Order::Fifo),
        SchedulerKind::Scf => ordered(Order::Scf),
        SchedulerKind::Ncf => ordered(Order::Ncf),
        SchedulerKind::Tcf => ordered(Order::Tcf),
        SchedulerKind::Sebf => ordered(Order::Sebf),
        SchedulerKind::Wss => Box::<Wss>::default(),
        SchedulerKind::Varys => Box::new(Varys::new(opts.varys)),
        SchedulerKind::Aalo => Box::new(Aalo::new(opts.aalo)),
        SchedulerKind::Saath => Box::new(Saath::new(opts.saath)),
        SchedulerKind::Sincronia => Box::new(Sincronia::new(opts.on_flow_completion)),
        SchedulerKind::Hug | SchedulerKind::Drf | SchedulerKind::Psp => {
            let policy = tenant_policy(kind, opts).unwrap_or(TenantPolicy::Psp);
            Box::new(TenantShare::new(policy).with_nc_vector(opts.hug_vectors))
        }
        SchedulerKind::FifoStrict => ordered(Order::FifoStrict),
        SchedulerKind::FifoLm => Box::new(FifoLm::new(
            opts.fifo_lm_heavy_bytes.unwrap_or(FIFO_LM_HEAVY_BYTES),
        )),
        SchedulerKind::AaloUncoord => {
            Box::new(AaloUncoord::new(opts.aalo).with_local_ties(opts.uncoord_local_ties))
        }
        SchedulerKind::Vc => Box::new(VirtualCluster::new()),
    }
}

/// [`build`], with a multi-tenant policy (hug, drf, psp) reading tenants' reported vectors from
/// `board` and writing its shares there (the coordinator's; other kinds ignore the board).
pub fn build_with_board(
    kind: SchedulerKind,
    opts: &SchedOptions,
    board: &Board,
) -> Box<dyn Scheduler> {
    let Some(policy) = tenant_policy(kind, opts) else {
        return build(kind, opts);
    };
    Box::new(TenantShare::with_board(policy, board.clone()).with_nc_vector(opts.hug_vectors))
}

/// The multi-tenant policy `kind` names, if it names one.
fn tenant_policy(kind: SchedulerKind, opts: &SchedOptions) -> Option<TenantPolicy> {
    Some(match kind {
        SchedulerKind::Hug => TenantPolicy::Hug(HugOptions {
            mode: if opts.hug_cooperative {
                Mode::Cooperative
            } else {
                Mode::NonCooperative
            },
            stage1: opts.hug_stage1,
        }),
        SchedulerKind::Drf => TenantPolicy::Drf,
        SchedulerKind::Psp => TenantPolicy::Psp,
        _ => return None,
    })
}

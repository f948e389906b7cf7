//! What can be wrong with a multi-tenant input: every error names the tenant and the entry.
//! Names are quoted through `echo` (bounded, control characters shown, not sent: an ESC
//! sequence in a tenant's name reached the terminal; pass 34, C10).

use coflowkit_model::echo::echo;
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum TenantError {
    #[error("no tenants: an allocation needs at least one")]
    NoTenants,
    #[error("no links: give at least one capacity")]
    NoLinks,
    #[error("link {link}: capacity {value} is not a positive finite number")]
    BadCapacity { link: usize, value: f64 },
    #[error("{ports} ports need 2 x {ports} = {} link capacities, got {got}", 2 * (*ports as u128))]
    PortsMismatch { ports: usize, got: usize },
    #[error(
        "tenant '{}': vector has {got} entries, the fabric has {want} links",
        echo(tenant)
    )]
    Length {
        tenant: String,
        got: usize,
        want: usize,
    },
    #[error(
        "tenant '{}': entry {entry} is {value}; entries must be finite and >= 0",
        echo(tenant)
    )]
    BadEntry {
        tenant: String,
        entry: usize,
        value: f64,
    },
    #[error(
        "tenant '{}': link {link} is out of order or outside the {links} links",
        echo(tenant)
    )]
    BadLink {
        tenant: String,
        link: u32,
        links: usize,
    },
    #[error(
        "tenant '{}': flow {flow} uses port {port}, the fabric has {ports} ports",
        echo(tenant)
    )]
    BadPort {
        tenant: String,
        flow: usize,
        port: u32,
        ports: usize,
    },
    #[error(
        "tenant '{}': every entry is 0; a tenant must use at least one link",
        echo(tenant)
    )]
    AllZero { tenant: String },
    #[error(
        "tenant '{}': uplinks (entries 0..{ports}) sum to {up} but downlinks (entries \
         {ports}..{}) sum to {down}; a tenant receives what it sends",
        echo(tenant),
        2 * ports
    )]
    Unbalanced {
        tenant: String,
        ports: usize,
        up: f64,
        down: f64,
    },
    #[error("per-flow fairness needs a fabric of ports (uplinks then downlinks)")]
    NotAFabric,
    #[error(
        "flow {flow} (tenant {tenant}, {src} -> {dst}) is outside {ports} ports / {tenants} tenants"
    )]
    BadFlow {
        flow: usize,
        tenant: u32,
        src: u32,
        dst: u32,
        ports: usize,
        tenants: usize,
    },
    #[error(
        "tenant '{}': weight {value} is not a positive finite number",
        echo(tenant)
    )]
    BadWeight { tenant: String, value: f64 },
}

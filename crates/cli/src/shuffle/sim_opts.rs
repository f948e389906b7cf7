//! Simulation options shared by `shuffle sim` and `shuffle sweep` (SKELETON, owned by the
//! simulator side): flattened into both commands so they accept the same flags.

use coflowkit_pktsim::SimConfig;

#[derive(clap::Args, Debug, Clone)]
pub struct SimOpts {
    /// Racks of hosts around one logical core switch.
    #[arg(long, default_value_t = 1)]
    pub racks: usize,
}

impl SimOpts {
    /// The simulator configuration for one run of `protocol` (a name such as `grpf`,
    /// `hadoop-5`, `madd`) with `seed`.
    pub fn to_config(&self, protocol: &str, seed: u64) -> anyhow::Result<SimConfig> {
        Ok(SimConfig {
            racks: self.racks,
            protocol: protocol.to_string(),
            seed,
        })
    }
}

//! `coflowkit shuffle stats` (SKELETON).

#[derive(clap::Args)]
pub struct StatsArgs {}

pub fn run(_args: StatsArgs) -> anyhow::Result<()> {
    anyhow::bail!("shuffle stats: not implemented yet")
}

//! `coflowkit shuffle sweep` (SKELETON).

#[derive(clap::Args)]
pub struct SweepArgs {}

pub fn run(_args: SweepArgs) -> anyhow::Result<()> {
    anyhow::bail!("shuffle sweep: not implemented yet")
}

//! `coflowkit shuffle sim` (SKELETON).

#[derive(clap::Args)]
pub struct SimArgs {}

pub fn run(_args: SimArgs) -> anyhow::Result<()> {
    anyhow::bail!("shuffle sim: not implemented yet")
}

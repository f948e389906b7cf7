//! `coflowkit shuffle gen` (SKELETON).

#[derive(clap::Args)]
pub struct GenArgs {}

pub fn run(_args: GenArgs) -> anyhow::Result<()> {
    anyhow::bail!("shuffle gen: not implemented yet")
}

//! `ferry bench`: placeholder until the load generator lands.

use clap::Args;

/// Flags of `ferry bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {}

/// Runs the benchmark.
pub fn run(_args: BenchArgs) -> anyhow::Result<()> {
    anyhow::bail!("not yet")
}

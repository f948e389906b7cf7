//! `coflowkit shuffle sim`: one shuffle, packet by packet, under one protocol (the flags, the
//! run and its JSON; the binary prints the report).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use coflowkit_pktsim::{try_run_afforded, Progress, SimReport};
use coflowkit_shuffle::matrix::{
    check_nodes, generate_with, read_packet_matrix, GenSpec, PacketMatrix, SIM_BYTES_PER_MESSAGE,
};
use serde::Serialize;

use super::matrix_args::MatrixArgs;
use super::sim_opts::SimOpts;

#[derive(Args, Debug)]
pub struct SimArgs {
    /// A packet matrix file (as written by `shuffle gen`); otherwise one is generated.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["nodes", "skew"])]
    pub matrix: Option<PathBuf>,
    /// Nodes of the generated matrix.
    #[arg(long, default_value_t = 160)]
    pub nodes: usize,
    /// Message skewness of the generated matrix, in [0, 1].
    #[arg(long, default_value_t = 0.5)]
    pub skew: f64,
    /// grpf, grpt, srpt, hadoop (with --connections) or hadoop-C, madd, lockstep, push-rr,
    /// push-blocks.
    #[arg(long, short, default_value = "grpf")]
    pub protocol: String,
    /// Seed of the matrix and of every random choice in the run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also write the full report (with the utilization series) as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub gen: MatrixArgs,
    #[command(flatten)]
    pub sim: SimOpts,
}

/// The matrix a run uses: read from `--matrix` or generated from the flags.
pub fn matrix(
    path: &Option<PathBuf>,
    nodes: usize,
    skew: f64,
    seed: u64,
    gen: &MatrixArgs,
) -> Result<PacketMatrix> {
    // The simulator refuses fewer than 2 nodes too, but without saying where they came from.
    match path {
        Some(p) => {
            let m = read_packet_matrix(p)?;
            if m.n < 2 {
                bail!(
                    "{}: field 2 (node count) of the header: a shuffle needs at least 2 nodes, got {}",
                    p.display(),
                    m.n
                );
            }
            // As `--avg-packets 0` is refused: a bound and an optimality of 0 mean nothing.
            coflowkit_shuffle::matrix::check_packets_network_data(&p.display().to_string(), &m)?;
            crate::sim_memory::check_shuffle(m.n, SIM_BYTES_PER_MESSAGE)
                .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
            Ok(m)
        }
        None => {
            check_nodes(nodes).map_err(|e| anyhow::anyhow!("--nodes: {e}"))?;
            crate::sim_memory::check_shuffle(nodes, SIM_BYTES_PER_MESSAGE)
                .map_err(|e| anyhow::anyhow!("--nodes: {e}"))?;
            if nodes < 2 {
                bail!("--nodes: a shuffle needs at least 2 nodes, got {nodes}");
            }
            let spec = GenSpec {
                nodes,
                skew,
                avg_packets: gen.avg_packets,
                generator: gen.generator(),
                seed,
            };
            Ok(generate_with(&spec, &gen.options(nodes)?)?.packets)
        }
    }
}

#[derive(Serialize)]
struct JsonOut<'a> {
    seed: u64,
    #[serde(flatten)]
    report: &'a SimReport,
}

/// `coflowkit shuffle sim`'s run: the matrix from the flags, simulated under `--protocol`.
pub fn simulate(args: &SimArgs) -> Result<SimReport> {
    simulate_observed(args, |_| {})
}

/// [`simulate`], calling `seen` every 64 timesteps (a timestep of 3,000 nodes takes ~20 ms in
/// a debug build) with how far the run has come.
pub fn simulate_observed(args: &SimArgs, seen: impl FnMut(Progress)) -> Result<SimReport> {
    // Before the run, not after it (pass 34, C9).
    crate::outputs::check(&[crate::outputs::Out::file("--json", args.json.as_deref())])?;
    let m = matrix(&args.matrix, args.nodes, args.skew, args.seed, &args.gen)?;
    let cfg = args.sim.to_config(&args.protocol, args.seed)?;
    if std::env::var_os("COFLOWKIT_DEBUG").is_some() {
        let _ = writeln!(std::io::stderr(), "{cfg:?}");
    }
    // The preemption oracles replay every node over a horizon that grows with the mean
    // interval: refused before the run when it would not fit (adversarial pass 34, C3).
    let afford = |bytes: u64| crate::sim_memory::fits(bytes, 0).map_err(|s| s.describe());
    Ok(try_run_afforded(&m, &cfg, 1 << 6, seen, afford)?)
}

/// The report as `--json` writes it: the seed, then the report's fields.
pub fn json_text(args: &SimArgs, r: &SimReport, pretty: bool) -> Result<String> {
    let out = JsonOut {
        seed: args.seed,
        report: r,
    };
    Ok(if pretty {
        serde_json::to_string_pretty(&out)?
    } else {
        serde_json::to_string(&out)?
    })
}

/// Write `--json` if asked, then fail if the shuffle did not finish or broke an invariant.
pub fn finish(args: &SimArgs, r: &SimReport) -> Result<()> {
    if let Some(path) = &args.json {
        std::fs::write(path, json_text(args, r, true)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if !r.complete {
        bail!(
            "{}: the shuffle did not finish ({} of {} data packets delivered); raise --max-steps if it was only slow",
            r.protocol,
            r.delivered_packets,
            r.data_packets
        );
    }
    if r.violations > 0 {
        bail!(
            "{}: {} protocol invariant violations",
            r.protocol,
            r.violations
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        gen: MatrixArgs,
    }

    /// Adversarial pass 32, A7: an all-zero or diagonal-only matrix was scored bound 0,
    /// optimality 0; a matrix with one packet off the diagonal is still read.
    #[test]
    fn a_matrix_with_nothing_off_the_diagonal_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let gen = Cli::parse_from(["x"]).gen;
        for (name, text, ok) in [
            ("zero.m", "nodes 3 packets\n0 0 0\n0 0 0\n0 0 0\n", false),
            ("diag.m", "nodes 3 packets\n5 0 0\n0 5 0\n0 0 5\n", false),
            ("one.m", "nodes 3 packets\n5 0 0\n0 5 1\n0 0 5\n", true),
        ] {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            let got = matrix(&Some(p.clone()), 0, 0.0, 1, &gen);
            if ok {
                assert_eq!(got.unwrap().total_packets(), 16, "{name}");
            } else {
                let e = got.unwrap_err().to_string();
                assert!(
                    e.contains(name) && e.contains("off the diagonal is 0"),
                    "{e}"
                );
            }
        }
    }
}

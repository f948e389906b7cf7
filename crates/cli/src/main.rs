//! `coflowkit`: the command line. Thin by design: it parses arguments and calls the crates.
// Output goes through `out!`/`outln!` (errors, not panics, when stdout fails) and `err!`/
// `errln!` (a failed stderr is ignored, never a panic).
#![warn(clippy::print_stdout, clippy::print_stderr)]

#[macro_use]
mod out;

mod async_rt;
mod bench;
mod broadcast;
mod collective;
mod coordinator;
mod daemon;
mod error_text;
mod every;
mod fetch;
mod hug;
mod milliquery;
mod millisort;
mod ranks;
mod read_limited;
mod replay;
mod reproduce;
mod shuffle;
mod sim;
mod sortdata;
mod spill_dir;
mod status;
mod testbed_cmd;
mod tls_args;
mod trace_cmd;
mod transfers;

use std::process::ExitCode;

// The flags and result documents `sim` shares with the Python package.
use coflowkit_simcmd::{engine_args, fabric_args, plot, report, sched_args};

use clap::{Parser, Subcommand};

/// Schedule the network traffic of data-parallel jobs: simulate coflow schedulers on traces,
/// inspect and generate workloads.
#[derive(Parser)]
#[command(name = "coflowkit", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replay a coflow trace under one or more schedulers and compare them
    /// (default: the bundled Facebook trace, every scheduler).
    Sim(sim::SimArgs),
    /// Inspect, convert and generate coflow traces.
    #[command(subcommand)]
    Trace(trace_cmd::TraceCmd),
    /// Measure simulator speed: the FB trace (and an upscaled copy) under each scheduler.
    Bench(bench::BenchArgs),
    /// BASHuffler fetch-source selection: pull-based shuffle simulation, max-min rates.
    #[command(subcommand)]
    Fetch(fetch::FetchCmd),
    /// Flash-burst shuffles: generate shuffle matrices, simulate protocols packet by packet.
    #[command(subcommand)]
    Shuffle(shuffle::ShuffleCmd),
    /// Run the coordinator of a real cluster (the shared scheduler moving real bytes).
    Coordinator(coordinator::CoordinatorArgs),
    /// Run the daemon of one host of a real cluster.
    Daemon(daemon::DaemonArgs),
    /// Replay a trace as real transfers between local daemons, beside the simulator's CCTs.
    Replay(replay::ReplayArgs),
    /// Show what a coordinator knows: daemons, coflows, flows and their rates.
    Status(status::StatusArgs),
    /// Build the emulated cluster (network namespaces shaped by tbf) and run a command on it.
    Testbed(testbed_cmd::TestbedArgs),
    /// Group communication over the UDP transport: benchmarks of the collectives.
    #[command(subcommand)]
    Collective(collective::CollectiveCmd),
    /// Sort Benchmark records: generate them as gensort 1.5 does, check them as valsort does.
    #[command(subcommand)]
    Sortdata(sortdata::SortdataCmd),
    /// MilliSort: Sort Benchmark records sorted across ranks in a timed burst, validated
    /// globally; `--budget-ms` finds the largest input a time budget sorts.
    Millisort(millisort::MilliSortArgs),
    /// MilliQuery: the flash-burst paper's three SQL queries across many processes.
    #[command(subcommand)]
    Milliquery(milliquery::MilliqueryCmd),
    /// Orchestra broadcasts between real processes: Cornet and its baselines (chain, tree,
    /// HDFS-like, BitTorrent-like) with completion times beside the lower bound.
    Broadcast(broadcast::BroadcastArgs),
    /// Multi-tenant network sharing (HUG, DRF, PS-P) for given correlation vectors.
    #[command(subcommand)]
    Hug(hug::HugCmd),
    /// Regenerate a paper's results document: every row's value beside ours, the command and
    /// a verdict by a stated tolerance.
    #[command(subcommand)]
    Reproduce(reproduce::ReproduceCmd),
    /// Orchestra's transfer controllers on real bytes: random fetching, MADD against the
    /// standard shuffle, the inter-transfer controller (FIFO, priority, weighted fair) and an
    /// iterative job's broadcast + shuffle, between real processes.
    Transfers(transfers::TransfersArgs),
}

/// Structured logs on stderr for the long-running commands (RUST_LOG sets the level).
fn logs() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        // Its own report of a failed write is an `errln!`, which panics when stderr fails.
        .log_internal_errors(false)
        .try_init();
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return parse_failed(e),
    };
    let result = match cli.command {
        Command::Sim(a) => sim::run(a),
        Command::Trace(c) => trace_cmd::run(c),
        Command::Bench(a) => bench::run(a),
        Command::Fetch(c) => fetch::run(c),
        Command::Shuffle(c) => shuffle::run(c),
        Command::Coordinator(a) => coordinator::run(a),
        Command::Daemon(a) => daemon::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Testbed(a) => testbed_cmd::run(a),
        Command::Status(a) => status::run(a),
        Command::Collective(c) => collective::run(c),
        Command::Sortdata(c) => sortdata::run(c),
        Command::Millisort(a) => millisort::run(a),
        Command::Milliquery(c) => milliquery::run(c),
        Command::Broadcast(a) => broadcast::run(a),
        Command::Hug(c) => hug::run(c),
        Command::Reproduce(c) => reproduce::run(c),
        Command::Transfers(a) => transfers::run(a),
    };
    finish(result)
}

/// `--help` and `--version` (clap's "errors" bound for stdout) written through `out!`, so a
/// failed write is reported with exit 1 as for every command (`--version > /dev/full` exited
/// 0 silently; pass 33, B13). Usage errors keep clap's own text and status 2.
fn parse_failed(e: clap::Error) -> ExitCode {
    use std::io::IsTerminal;
    if e.use_stderr() || std::io::stdout().is_terminal() {
        // A terminal keeps clap's colours; a usage error goes to stderr.
        e.exit();
    }
    finish(out!("{}", e.render()).map_err(anyhow::Error::from))
}

fn finish(result: anyhow::Result<()>) -> ExitCode {
    // What the last `out!` left buffered fails here, not silently at exit.
    let result = result.and_then(|()| Ok(out::flush()?));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of stdout went away (`| head`): nothing more to say, to anyone.
        Err(e) if out::is_broken_pipe(&e) => ExitCode::from(out::BROKEN_PIPE_STATUS),
        Err(e) => {
            // Each cause once: `{:#}` repeats those the message already holds.
            let e = anyhow::anyhow!(error_text::chain(&e));
            errln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

//! `coflowkit sim`: replay a trace under several schedulers and compare them. The flags and the
//! run are `coflowkit_simcmd::sim`'s (shared with the Python package); this prints the table.

use anyhow::Result;
pub use coflowkit_simcmd::sim::SimArgs;
use coflowkit_simcmd::{report, sim};

pub fn run(args: SimArgs) -> Result<()> {
    let path = args.workload.trace_path();
    let trace = args.workload.read(&path)?;
    // As `replay`: an empty trace ran to a table of `-` with exit 0 (pass 33, B18).
    if trace.coflows.is_empty() {
        anyhow::bail!("{}: the trace has no coflows to simulate", path.display());
    }
    let done = sim::execute(&args, &path, trace)?;
    outln!(
        "{}: {} coflows, {} flows, {} ports{}",
        done.trace_name,
        done.trace.coflows.len(),
        done.trace.flows(),
        done.trace.ports,
        if args.deadlines.is_some() {
            ", with deadlines"
        } else {
            ""
        }
    )?;
    out!("{}", report::table(&done.runs, done.baseline.name()))?;
    if let Some(t) = done.tenant_tables() {
        out!("{t}")?;
    }
    if let Some(t) = done.stage_table() {
        out!("{t}")?;
    }
    if let Some(t) = done.job_table() {
        out!("{t}")?;
    }
    if let Some(file) = done.write_outputs(&args)? {
        outln!("CCT CDF: {}", file.display())?;
    }
    Ok(())
}

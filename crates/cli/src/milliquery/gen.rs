//! `milliquery gen`: the synthetic tables of spec millisort.md §8.4.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use coflowkit_milliquery::gen::{generate, GenParams};

#[derive(Args)]
pub struct GenArgs {
    /// Tablets per table (one per rank; 1 to 65536).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_RANKS as i64))]
    ranks: u32,
    /// Rows in each tablet (Q3: in each of its two tables).
    #[arg(long)]
    rows_per_rank: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output directory (gets q1/, q2/ and q3/).
    #[arg(long, short)]
    out: PathBuf,
}

/// Most ranks: four files each (q1, q2 and q3's two tables), so 262,144 files at most
/// (`--ranks 4294967295` reserved 100 GB before writing anything; pass 33, B2).
pub const MAX_RANKS: u32 = 65_536;

/// Fewest bytes a row takes on disk over the four tables, measured at seed 1: about 75 (q1 6,
/// q2 14, q3 25 + 29). The free-space check uses this lower estimate.
pub const ROW_BYTES_ESTIMATE: u64 = 64;

pub fn run(a: GenArgs) -> anyhow::Result<()> {
    crate::out::check_outputs(&[crate::out::Out::dir("--out", Some(&a.out))])?;
    check_room(&a)?;
    let files = generate(
        &a.out,
        a.ranks as usize,
        a.rows_per_rank,
        a.seed,
        &GenParams::default(),
    )
    .with_context(|| format!("generating into {}", a.out.display()))?;
    outln!(
        "wrote {} tablets ({} ranks x {} rows per table, seed {}) under {}",
        files.len(),
        a.ranks,
        a.rows_per_rank,
        a.seed,
        a.out.display()
    )?;
    Ok(())
}

/// Refuses tables that cannot fit in the free space of `--out`'s file system, at once rather
/// than after filling the disk (`--rows-per-rank 100000000000` wrote on silently; pass 33, B12).
fn check_room(a: &GenArgs) -> anyhow::Result<()> {
    let need = u64::from(a.ranks)
        .saturating_mul(a.rows_per_rank as u64)
        .saturating_mul(ROW_BYTES_ESTIMATE);
    // The nearest directory that exists: `--out` is created.
    let mut dir = a.out.as_path();
    while !dir.is_dir() {
        match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => dir = p,
            _ => {
                dir = std::path::Path::new(".");
                break;
            }
        }
    }
    let Some(free) = free_bytes(dir) else {
        return Ok(()); // writing names the problem
    };
    if need > free {
        anyhow::bail!(
            "--ranks {} x --rows-per-rank {}: about {need} bytes of tables (at least \
             {ROW_BYTES_ESTIMATE} bytes a row), but the file system of {} has {free} bytes free",
            a.ranks,
            a.rows_per_rank,
            a.out.display()
        );
    }
    Ok(())
}

/// Bytes free to an unprivileged user on `dir`'s file system.
fn free_bytes(dir: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `c` is a valid C string and `st` a properly sized, writable statvfs.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

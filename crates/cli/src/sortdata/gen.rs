//! `coflowkit sortdata gen`: gensort 1.5's records, written block by block; the next block is
//! generated (on every core) while the current one is written.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use coflowkit_sortdata::{checksum, par_checksum, par_generate_into, RecordKind, RECORD_LEN};

/// Records per block written (6.4 MB).
const BLOCK_RECORDS: u64 = 64 * 1024;

/// Most records one run generates: 10^13 (1 PB, ten times GraySort's 100 TB). More would not
/// end in any useful time even into /dev/null.
pub const MAX_RECORDS: u64 = 10_000_000_000_000;

#[derive(Args)]
pub struct GenArgs {
    /// Records to generate (gensort NUM_RECS), at most 10^13 (1 PB); into a file, at most what
    /// its file system has room for.
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=MAX_RECORDS))]
    pub records: u64,
    /// Number of the first record (gensort -b), decimal, up to 2^128 - 1.
    #[arg(long, default_value_t = 0)]
    pub offset: u128,
    /// ASCII records, for PennySort and JouleSort (gensort -a).
    #[arg(long)]
    pub ascii: bool,
    /// Skewed keys (gensort -s); with --ascii, skewed ASCII records.
    #[arg(long)]
    pub skewed: bool,
    /// Print the sum of the records' CRC-32 in hex on standard error (gensort -c).
    #[arg(long)]
    pub checksum: bool,
    /// Output file; `/dev/null` generates without writing, as gensort does.
    #[arg(short, long)]
    pub output: PathBuf,
}

pub fn run(a: GenArgs) -> Result<()> {
    crate::out::check_outputs(&[crate::out::Out::file("--output", Some(&a.output))])?;
    let kind = RecordKind::from_flags(a.ascii, a.skewed);
    let skip_output = a.output.as_os_str() == "/dev/null";
    let mut out = if skip_output {
        None
    } else {
        check_room(&a.output, a.records)?;
        let f =
            File::create(&a.output).with_context(|| format!("creating {}", a.output.display()))?;
        Some(f)
    };
    let block_len = (BLOCK_RECORDS.min(a.records) as usize) * RECORD_LEN;
    let (mut current, mut next) = (vec![0u8; block_len], vec![0u8; block_len]);
    let mut sum = 0u128;
    let mut done = 0u64;
    // Block `done..done + n` is generated into `current`; writing it overlaps generating the next.
    let mut n = fill(
        &mut current,
        a.offset,
        done,
        a.records,
        kind,
        a.checksum,
        &mut sum,
    );
    while n > 0 {
        let following = done + n;
        let (written, generated) = rayon::join(
            || match out.as_mut() {
                Some(f) => f.write_all(&current[..n as usize * RECORD_LEN]),
                None => Ok(()),
            },
            || {
                let mut s = 0u128;
                let m = fill(
                    &mut next, a.offset, following, a.records, kind, a.checksum, &mut s,
                );
                (m, s)
            },
        );
        written.with_context(|| format!("writing {}", a.output.display()))?;
        sum = sum.wrapping_add(generated.1);
        std::mem::swap(&mut current, &mut next);
        done = following;
        n = generated.0;
    }
    if let Some(f) = out.as_mut() {
        f.flush()
            .with_context(|| format!("writing {}", a.output.display()))?;
    }
    if a.checksum {
        errln!("{}", checksum::checksum_hex(sum));
    }
    Ok(())
}

/// Refuses a run whose records cannot fit on `path`'s file system (what it has free, plus what
/// an existing `path` holds, since it is truncated): told at once rather than after hours of
/// writing. Outputs that are not regular files (pipes, devices) are not checked.
fn check_room(path: &std::path::Path, records: u64) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let existing = std::fs::metadata(path).ok();
    if existing.as_ref().is_some_and(|m| !m.is_file()) {
        return Ok(());
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return Ok(());
    };
    // SAFETY: `c` is a valid C string and `st` a properly sized, writable statvfs.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Ok(()); // the create below names the problem
    }
    let free = (st.f_bavail as u64)
        .saturating_mul(st.f_frsize as u64)
        .saturating_add(existing.map_or(0, |m| m.len()));
    let need = records.saturating_mul(RECORD_LEN as u64);
    if need > free {
        bail!(
            "--records {records}: {need} bytes ({records} records of {RECORD_LEN}), but the file \
             system of {} has {free} bytes free",
            path.display()
        );
    }
    Ok(())
}

/// Generates records `offset + done ..` into `buf`, as many as fit and remain; adds their
/// checksum to `sum` when asked. Returns how many.
fn fill(
    buf: &mut [u8],
    offset: u128,
    done: u64,
    total: u64,
    kind: RecordKind,
    with_checksum: bool,
    sum: &mut u128,
) -> u64 {
    let n = (total - done).min((buf.len() / RECORD_LEN) as u64);
    let bytes = &mut buf[..n as usize * RECORD_LEN];
    par_generate_into(offset.wrapping_add(done as u128), kind, bytes);
    if with_checksum {
        *sum = sum.wrapping_add(par_checksum(bytes));
    }
    n
}

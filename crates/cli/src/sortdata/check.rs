//! `coflowkit sortdata check`: valsort 1.5. One file of records, or (`--summaries`) the
//! summaries of partitions checked across their boundaries; valsort's lines on standard error,
//! a non-zero exit status when records are out of order.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use coflowkit_sortdata::{Error, Summary, RECORD_LEN};
use rayon::prelude::*;

use crate::read_limited::read_limited;

/// Records read per block (4 MB), summarised on every core.
const BLOCK_RECORDS: usize = 40_000;
/// Records per parallel summary within a block.
const TASK_RECORDS: usize = 2_500;
/// Largest summary file read (bytes): 64 MiB, about 240,000 partition summaries.
pub const MAX_SUMMARY_FILE_BYTES: u64 = 64 << 20;

#[derive(Args)]
pub struct CheckArgs {
    /// The file of sorted records to check (valsort FILE_NAME).
    #[arg(required_unless_present = "summaries", conflicts_with = "summaries")]
    pub file: Option<PathBuf>,
    /// Check partitions from their summary files, in this order (valsort -s; each file holds one
    /// or more of valsort's 280-byte summaries, as `--summary` or `valsort -o` write them; at
    /// most 64 MiB per file).
    #[arg(long, num_args = 1..)]
    pub summaries: Vec<PathBuf>,
    /// Write the summary of what was checked here, in valsort's format (valsort -o).
    #[arg(long)]
    pub summary: Option<PathBuf>,
    /// Print nothing; only the exit status tells (valsort -q).
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(a: CheckArgs) -> Result<()> {
    crate::out::check_outputs(&[crate::out::Out::file("--summary", a.summary.as_deref())])?;
    let summary = match &a.file {
        Some(file) => summarise_file(file)?,
        None => combine_files(&a.summaries)?,
    };
    if let Some(out) = &a.summary {
        std::fs::write(out, summary.to_valsort_bytes())
            .with_context(|| format!("writing {}", out.display()))?;
    }
    if !a.quiet {
        err!("{}", summary.valsort_report());
    }
    if !summary.is_sorted() {
        // valsort's lines are the whole message: exit 1 without an extra error line.
        std::process::exit(1);
    }
    Ok(())
}

/// The summary of a file of records, refused unless it holds whole records, at least one.
fn summarise_file(path: &Path) -> Result<Summary> {
    let name = path.display();
    // A FIFO without a writer is not waited on for ever (nor a directory read).
    let mut f =
        coflowkit_model::input::open_input(path).with_context(|| format!("opening {name}"))?;
    let meta = f.metadata().with_context(|| format!("reading {name}"))?;
    // A character device (/dev/zero, /dev/urandom, a terminal) never ends: refused rather than
    // read forever. Files, block devices, pipes and sockets end.
    if meta.file_type().is_char_device() {
        bail!("{name}: a character device, not a file of records (it would never end)");
    }
    // A regular file is sized before it is read; a pipe is checked as it streams (below).
    if meta.is_file() {
        let len = meta.len();
        let partial = (len % RECORD_LEN as u64) as usize;
        if partial != 0 {
            let e = Error::PartialRecord {
                record: len / RECORD_LEN as u64,
                bytes: partial,
            };
            bail!("{name}: {len} bytes: {e}");
        }
    }
    let mut whole = Summary::default();
    let mut buf = vec![0u8; BLOCK_RECORDS * RECORD_LEN];
    loop {
        let n = read_full(&mut f, &mut buf).with_context(|| format!("reading {name}"))?;
        if n == 0 {
            break;
        }
        if n % RECORD_LEN != 0 {
            // A pipe, or a file that shrank while we read it, ended inside a record.
            let e = Error::PartialRecord {
                record: whole.records + (n / RECORD_LEN) as u64,
                bytes: n % RECORD_LEN,
            };
            bail!("{name}: {e}");
        }
        let parts: Vec<Summary> = buf[..n]
            .par_chunks(TASK_RECORDS * RECORD_LEN)
            .map(Summary::of)
            .collect();
        whole.append(&Summary::combine(&parts));
    }
    if whole.records == 0 {
        bail!("{name}: there must be at least one record to be validated");
    }
    Ok(whole)
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_full(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match f.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(k) => filled += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// The summary of the partitions summarised in `files`, in order.
fn combine_files(files: &[PathBuf]) -> Result<Summary> {
    let mut whole = Summary::default();
    let mut count = 0usize;
    for path in files {
        let name = path.display();
        let bytes = read_limited(path, MAX_SUMMARY_FILE_BYTES)?;
        let summaries = Summary::parse_valsort_file(&bytes).with_context(|| format!("{name}"))?;
        count += summaries.len();
        for (i, s) in summaries.iter().enumerate() {
            // Counts in a file are claims: their sums are checked (summary i is 0-based).
            whole
                .try_append(s)
                .with_context(|| format!("{name}: summary {i}"))?;
        }
    }
    if whole.records == 0 {
        // Name the files (a few, then how many more), as every other summary error does.
        let mut names: Vec<String> = (files.iter().take(4))
            .map(|p| p.display().to_string())
            .collect();
        if files.len() > 4 {
            names.push(format!("and {} more", files.len() - 4));
        }
        bail!(
            "{}: {count} summaries of 0 records in all: there must be at least one record to \
             be validated",
            names.join(", ")
        );
    }
    Ok(whole)
}

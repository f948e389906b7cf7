//! `coflowkit sortdata bench`: how fast records are generated, checksummed and summarised, in
//! memory (no disk), on one core and on rayon's pool. Run it from a release build.

use std::time::Instant;

use anyhow::Result;
use clap::Args;
use coflowkit_sortdata::{
    checksum, generate_into, par_checksum, par_generate_into, RecordKind, Summary, RECORD_LEN,
};
use rayon::prelude::*;

#[derive(Args)]
pub struct BenchArgs {
    /// Records per pass (100 bytes each; 1 to 100000000, 10 GB, held in memory).
    #[arg(long, default_value_t = 2_000_000, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000_000))]
    pub records: usize,
    /// Passes per measurement; the best is reported (1 to 100000).
    #[arg(long, default_value_t = 5, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub repeat: usize,
}

pub fn run(a: BenchArgs) -> Result<()> {
    let mut buf = vec![0u8; a.records * RECORD_LEN];
    let threads = rayon::current_num_threads();
    let mb = (a.records * RECORD_LEN) as f64 / 1e6;
    outln!(
        "sortdata bench: {} records ({mb:.0} MB) per pass, best of {}, {threads} threads for `all`",
        a.records,
        a.repeat
    )?;
    outln!("{:<28} {:>10} {:>10}", "what", "1 core", "all")?;
    let first = 1u128 << 40;
    for kind in [
        RecordKind::Binary,
        RecordKind::Ascii,
        RecordKind::Skewed,
        RecordKind::AsciiSkewed,
    ] {
        let one = best(a.repeat, || generate_into(first, kind, &mut buf));
        let all = best(a.repeat, || par_generate_into(first, kind, &mut buf));
        row(&format!("generate {kind:?}"), mb, one, all)?;
    }
    par_generate_into(first, RecordKind::Binary, &mut buf);
    let one = best(a.repeat, || {
        std::hint::black_box(checksum(&buf));
    });
    let all = best(a.repeat, || {
        std::hint::black_box(par_checksum(&buf));
    });
    row("checksum (CRC-32 sum)", mb, one, all)?;
    let one = best(a.repeat, || {
        std::hint::black_box(Summary::of(&buf));
    });
    let all = best(a.repeat, || {
        let parts: Vec<Summary> = buf
            .par_chunks(2_500 * RECORD_LEN)
            .map(Summary::of)
            .collect();
        std::hint::black_box(Summary::combine(&parts));
    });
    row("summary (valsort)", mb, one, all)?;
    Ok(())
}

fn best(repeat: usize, mut f: impl FnMut()) -> f64 {
    (0..repeat.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn row(what: &str, mb: f64, one: f64, all: f64) -> Result<(), crate::out::StdoutError> {
    outln!("{what:<28} {:>6.0} MB/s {:>6.0} MB/s", mb / one, mb / all)?;
    Ok(())
}

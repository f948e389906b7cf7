//! What each of Saath's components changes on the bundled FB trace: one run with the
//! diagnostic on, which re-decides every snapshot without LCoF and without all-or-none and
//! counts the decisions whose rates that changes (docs/fb-results.md, "Saath's ablations").
//! `cargo run --release -p coflowkit-flowsim --example saath_components -- [no-lcof]
//! [no-all-or-none] [no-starvation] [coflows=N] [csv=FILE]`

use std::io::Write;

use coflowkit_flowsim::simulate;
use coflowkit_model::trace::read_path;
use coflowkit_model::Fabric;
use coflowkit_sched::policy::saath::{Saath, SaathConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut cfg = SaathConfig {
        diagnose: true,
        ..Default::default()
    };
    let mut coflows = None;
    let mut csv = None;
    for a in std::env::args().skip(1) {
        match a.split_once('=') {
            None if a == "no-lcof" => cfg.lcof = false,
            None if a == "no-all-or-none" => cfg.all_or_none = false,
            None if a == "no-starvation" => cfg.starvation = None,
            Some(("coflows", n)) => coflows = Some(n.parse::<usize>()?),
            Some(("csv", f)) => csv = Some(f.to_string()),
            _ => return Err(format!("unknown argument {a}").into()),
        }
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../data/traces/FB2010-1Hr-150-0.txt"
    );
    let mut trace = read_path(std::path::Path::new(path))?;
    if let Some(n) = coflows {
        trace.coflows.truncate(n);
    }
    let fabric = Fabric::uniform_bps(trace.ports as usize, 1e9);
    let mut s = Saath::new(cfg);
    let out = simulate(&trace, &fabric, &mut s)?;
    let avg = out.coflows.iter().map(|c| c.cct_s).sum::<f64>() / out.coflows.len() as f64;
    println!(
        "saath lcof={} all_or_none={} starvation={:?}: {} coflows, avg CCT {:.4} s",
        cfg.lcof,
        cfg.all_or_none,
        cfg.starvation,
        out.coflows.len(),
        avg
    );
    println!("{:?}", s.stats);
    if let Some(f) = csv {
        let mut w = std::io::BufWriter::new(std::fs::File::create(f)?);
        writeln!(w, "id,arrival_s,cct_s,flows,bin")?;
        for c in &out.coflows {
            writeln!(
                w,
                "{},{},{},{},{:?}",
                c.id, c.arrival_s, c.cct_s, c.flows, c.bin
            )?;
        }
    }
    Ok(())
}

//! Nodes for the tests: this test binary re-run with only `node_entry` selected, which runs a
//! node when the launcher's variables are set (and does nothing in a normal test run).

#![allow(dead_code)]

use std::process::Command;

use coflowkit_orchestra::{data, BroadcastConfig, BroadcastResult, Mechanism, Options, Racks};

pub fn node_command() -> Command {
    let mut c = Command::new(std::env::current_exe().expect("test binary"));
    c.args([
        "--exact",
        "node_entry",
        "--nocapture",
        "--test-threads=1",
        "-q",
    ]);
    c
}

pub fn config(receivers: u32, bytes: u64, mechanisms: &str) -> BroadcastConfig {
    BroadcastConfig {
        receivers,
        bytes,
        mechanisms: Mechanism::parse_list(mechanisms).unwrap(),
        opts: Options {
            block_bytes: 256 << 10,
            pipe_bytes: 64 << 10,
            chunk_bytes: 64 << 10,
            ..Options::default()
        },
        seed: 7,
        rate_bps: Some(200e6),
        netns: false,
        racks: Racks::default(),
        kill: None,
        stall_s: 5.0,
        timeout_s: 60.0,
    }
}

/// Every live receiver holds exactly the seed's data: the source's digest is the one computed
/// here from the seed, and every receiver's digest matched it.
pub fn assert_byte_exact(cfg: &BroadcastConfig, r: &BroadcastResult, dead: &[u32]) {
    let want = data::digest([&data::make(cfg.seed, cfg.bytes)[..]]);
    assert_eq!(r.digest, want, "{}", r.mechanism);
    assert!(r.checksums_ok, "{}", r.mechanism);
    assert_eq!(r.error, None, "{}", r.mechanism);
    assert_eq!(r.dead, dead, "{}", r.mechanism);
    for (i, t) in r.receiver_times_s.iter().enumerate() {
        let h = i as u32 + 1;
        assert_eq!(
            t.is_some(),
            !dead.contains(&h),
            "{} receiver {h}: {t:?}",
            r.mechanism
        );
    }
    let last = r
        .receiver_times_s
        .iter()
        .flatten()
        .fold(0.0f64, |a, &b| a.max(b));
    assert_eq!(r.completion_s, Some(last), "{}", r.mechanism);
}

//! `--netns`: ranks as processes in their own network namespaces (the emulated cluster of
//! `coflowkit-testbed`), meeting at rank 0's data address. Needs root and `ip`/`tc`; elsewhere
//! the test says on stderr that it did not run.

use std::time::Duration;

use coflowkit_launch::local::is_launched;
use coflowkit_launch::{bootstrap, run_netns};
use coflowkit_testbed::ClusterOptions;

const RANKS: u32 = 3;

#[test]
fn netns_rank_main() {
    if !is_launched() {
        return;
    }
    let w = bootstrap(Duration::from_secs(30)).unwrap();
    assert_eq!((w.size, w.session), (RANKS, 11));
    let me = w.socket.local_addr().unwrap();
    assert_eq!(w.peers[w.rank as usize], me);
    // One host per rank: every UDP address is on its own IP, none on loopback.
    assert!(!me.ip().is_loopback());
    for (r, p) in w.peers.iter().enumerate() {
        if r != w.rank as usize {
            assert_ne!(p.ip(), me.ip());
            w.socket.send_to(&[w.rank as u8], p).unwrap();
        }
    }
    w.socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut heard = [false; RANKS as usize];
    heard[w.rank as usize] = true;
    let mut buf = [0u8; 16];
    while heard.iter().any(|h| !h) {
        let (_, from) = w.socket.recv_from(&mut buf).unwrap();
        assert_eq!(w.peers[buf[0] as usize], from);
        heard[buf[0] as usize] = true;
    }
}

#[test]
fn ranks_in_namespaces_meet_and_reach_each_other() {
    if is_launched() {
        return;
    }
    if let Err(why) = coflowkit_testbed::available() {
        eprintln!("NOT RUN: ranks_in_namespaces_meet_and_reach_each_other: {why}");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let args: Vec<std::ffi::OsString> =
        ["--exact", "netns_rank_main", "--test-threads=1", "--quiet"]
            .iter()
            .map(Into::into)
            .collect();
    run_netns(
        RANKS,
        12.5e6,
        &ClusterOptions::default(),
        11,
        Some(Duration::from_secs(60)),
        exe.as_os_str(),
        &args,
    )
    .unwrap();
    // Nothing of this process's clusters is left behind.
    let ours = format!("ck{:x}-", std::process::id());
    assert_eq!(
        coflowkit_testbed::leftovers(&ours).unwrap(),
        Vec::<String>::new()
    );
}

//! Real processes: the local launcher re-runs this test binary as 4 ranks, which meet at rank
//! 0 and then prove the table right by one UDP datagram to every peer.

use std::process::Command;
use std::time::Duration;

use coflowkit_launch::local::is_launched;
use coflowkit_launch::{bootstrap, run_local};

/// The body of each rank; a no-op when the test harness runs it directly.
#[test]
fn rank_main() {
    if !is_launched() {
        return;
    }
    let w = bootstrap(Duration::from_secs(30)).unwrap();
    assert_eq!(w.size, 4);
    assert_eq!(w.session, 7);
    assert_eq!(w.peers[w.rank as usize], w.socket.local_addr().unwrap());
    for (r, p) in w.peers.iter().enumerate() {
        if r != w.rank as usize {
            w.socket.send_to(&[w.rank as u8], p).unwrap();
        }
    }
    w.socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut heard = [false; 4];
    heard[w.rank as usize] = true;
    let mut buf = [0u8; 16];
    while heard.iter().any(|h| !h) {
        let (n, from) = w.socket.recv_from(&mut buf).unwrap();
        assert_eq!(n, 1);
        assert_eq!(w.peers[buf[0] as usize], from);
        heard[buf[0] as usize] = true;
    }
}

#[test]
fn four_processes_meet_at_rank_0_and_reach_each_other() {
    if is_launched() {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    run_local(4, 7, Some(Duration::from_secs(60)), |_| {
        let mut c = Command::new(&exe);
        c.args(["--exact", "rank_main", "--test-threads=1", "--quiet"]);
        Ok(c)
    })
    .unwrap();
}

//! `coflowkit replay --local N --netns` as users meet it: a run on namespaces with per-host
//! rates, Ctrl-C leaving nothing behind, and the fallback to pacing without root. The first two
//! need root and `ip`/`tc` (CI runs as root) and say on stderr when they did not run.

mod common;
use common::{failed, succeeded, write, TOY};

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use coflowkit_testbed as netns;
use netns::can_run;

/// Names a `coflowkit` process with this pid made.
fn prefix_of(pid: u32) -> String {
    format!("ck{pid:x}-")
}

/// Start a `replay --local HOSTS --netns` of the toy trace (8 MB into host 1 at 8 Mbit/s:
/// several seconds) and wait until its whole cluster exists: per host a namespace, a data and a
/// control veth, plus the two bridges. Returns the child and its names' prefix.
fn replay_until_built(dir: &Path, hosts: usize) -> (Child, String) {
    let trace = write(dir, "toy.txt", TOY);
    let mut child = Command::new(env!("CARGO_BIN_EXE_coflowkit"))
        .args([
            "replay",
            "--local",
            &hosts.to_string(),
            "--netns",
            "--trace",
            &trace,
        ])
        .args([
            "--port-rate",
            "8mbit",
            "--scale-bytes",
            "1",
            "--scale-time",
            "1",
            "-s",
            "fair",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let prefix = prefix_of(child.id());
    let t = Instant::now();
    while netns::leftovers(&prefix).unwrap().len() < hosts * 3 + 2 {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the cluster never appeared"
        );
        assert!(child.try_wait().unwrap().is_none(), "replay ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, prefix)
}

#[test]
fn replay_on_netns_with_per_host_rates_and_nothing_left() {
    if !can_run("replay_on_netns_with_per_host_rates_and_nothing_left") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = write(dir.path(), "toy.txt", TOY);
    let rates = write(
        dir.path(),
        "rates.txt",
        "# host rate\n0 200mbit\n3 50mbit\n",
    );
    let child = Command::new(env!("CARGO_BIN_EXE_coflowkit"))
        .args([
            "replay",
            "--local",
            "4",
            "--netns",
            "--trace",
            &trace,
            "--port-rate",
            "100mbit",
            "--port-rates",
            &rates,
            "--scale-bytes",
            "0.01",
            "--scale-time",
            "0.1",
            "-s",
            "varys",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let stdout = succeeded(&child.wait_with_output().unwrap());
    // Rates scale with the workload (x 0.01 / 0.1): 5 to 20 Mbit/s.
    assert!(
        stdout.contains("at 5.0 to 20.0 Mbit/s each (one network namespace per host"),
        "{stdout}"
    );
    assert!(stdout.contains("real (netns, 4 daemons)"), "{stdout}");
    assert_eq!(
        netns::leftovers(&prefix_of(pid)).unwrap(),
        Vec::<String>::new()
    );
}

#[test]
fn ctrl_c_during_a_netns_replay_removes_everything() {
    if !can_run("ctrl_c_during_a_netns_replay_removes_everything") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (mut child, prefix) = replay_until_built(dir.path(), 4);
    let made = netns::leftovers(&prefix).unwrap();
    for kind in ["k", "c3", "h3", "b"] {
        assert!(
            made.iter()
                .any(|m| m.starts_with("link ") && m.ends_with(kind)),
            "no link ending in {kind} in {made:?}"
        );
    }
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let pid = child.id();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status}");
    assert_eq!(
        netns::leftovers(&prefix).unwrap(),
        Vec::<String>::new(),
        "made {made:?}"
    );
    let spill = std::env::temp_dir().join(format!("coflowkit-replay-{pid}"));
    assert!(!spill.exists(), "{} left behind", spill.display());
}

#[test]
fn without_root_netns_falls_back_to_pacing_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write(dir.path(), "toy.txt", TOY);
    let args = [
        "replay",
        "--local",
        "2",
        "--netns",
        "--trace",
        &trace,
        "--scale-bytes",
        "0.01",
        "--scale-time",
        "0.1",
        "-s",
        "fair",
    ];
    let bin = env!("CARGO_BIN_EXE_coflowkit");
    let out = if netns::available().is_err() {
        Command::new(bin).args(args).output().unwrap()
    } else {
        // As root: run as nobody, who can read the trace but not make namespaces.
        use std::os::unix::fs::PermissionsExt;
        for p in [dir.path(), Path::new(&trace)] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        match Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", bin])
            .args(args)
            .output()
        {
            Ok(o) => o,
            Err(e) => {
                eprintln!(
                    "NOT RUN: without_root_netns_falls_back_to_pacing_and_says_so: setpriv: {e}"
                );
                return;
            }
        }
    };
    let stdout = succeeded(&out);
    assert!(
        stdout.contains(
            "--netns: network namespaces need root (CAP_NET_ADMIN, CAP_SYS_ADMIN); running as uid"
        ) && stdout.contains("falling back to rate emulation by pacing inside the daemons"),
        "{stdout}"
    );
    assert!(stdout.contains("real (loopback, 2 daemons)"), "{stdout}");
}

#[test]
fn replay_refuses_a_host_with_different_up_and_down_rates() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write(dir.path(), "toy.txt", TOY);
    let rates = write(dir.path(), "rates.txt", "1 100mbit 50mbit\n");
    let out = Command::new(env!("CARGO_BIN_EXE_coflowkit"))
        .args([
            "replay",
            "--local",
            "2",
            "--trace",
            &trace,
            "--port-rates",
            &rates,
        ])
        .output()
        .unwrap();
    let err = failed(&out);
    assert!(
        err.contains("--port-rates: host 1 has uplink 100000000 and downlink 50000000 bit/s"),
        "{err}"
    );
}

#[test]
fn a_killed_replay_is_swept_by_the_next_cluster() {
    if !can_run("a_killed_replay_is_swept_by_the_next_cluster") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (mut child, prefix) = replay_until_built(dir.path(), 2);
    child.kill().unwrap(); // SIGKILL: no cleanup
    child.wait().unwrap();
    assert!(!netns::leftovers(&prefix).unwrap().is_empty());
    let next = netns::NetnsCluster::create(&[1e6]).unwrap();
    assert_eq!(netns::leftovers(&prefix).unwrap(), Vec::<String>::new());
    drop(next);
}

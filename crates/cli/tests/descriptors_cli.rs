//! Commands run under a descriptor limit too low for the async runtime (adversarial pass 32,
//! A1): an error naming the limit, status 1, never tokio's panic.

mod common;

use std::process::Command;

/// Run `coflowkit args` with RLIMIT_NOFILE at `n` (soft and hard).
fn at_nofile(n: u64, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_coflowkit"));
    cmd.args(args);
    common::limit(&mut cmd, libc::RLIMIT_NOFILE, n);
    cmd.output().expect("run coflowkit")
}

#[test]
fn servers_and_status_refuse_a_descriptor_limit_too_low_for_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let token = common::write(dir.path(), "token", "a-token-of-enough-length\n");
    let cases: [&[&str]; 3] = [
        &[
            "coordinator",
            "--listen",
            "127.0.0.1:0",
            "--token-file",
            &token,
        ],
        &[
            "status",
            "--coordinator",
            "127.0.0.1:1",
            "--token-file",
            &token,
        ],
        &[
            "daemon",
            "--coordinator",
            "127.0.0.1:1",
            "--listen",
            "127.0.0.1:0",
            "--token-file",
            &token,
        ],
    ];
    for args in cases {
        for n in [6, 7] {
            let out = at_nofile(n, args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!err.contains("panicked"), "{args:?} at {n}: {err}");
            assert_eq!(out.status.code(), Some(1), "{args:?} at {n}: {err}");
            assert!(
                err.contains(&format!("descriptor limit (ulimit -n) is {n}")),
                "{args:?} at {n}: {err}"
            );
        }
    }
}

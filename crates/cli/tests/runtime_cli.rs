//! The real-system commands as users meet them: `replay --local` end to end, and refusals.

mod common;
use common::{coflowkit, free_port, Kill, TOY};

use std::process::Command;

#[test]
fn replay_local_moves_real_bytes_and_reports_sim_ccts() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("toy.txt");
    std::fs::write(&trace, TOY).unwrap();
    let json = dir.path().join("out.json");
    let out = coflowkit(&[
        "replay",
        "--local",
        "2",
        "--trace",
        trace.to_str().unwrap(),
        "--scale-bytes",
        "0.01",
        "--scale-time",
        "0.1",
        "--scheduler",
        "varys,fair",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("real vs simulated"), "{stdout}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for r in results {
        let coflows = r["coflows"].as_array().unwrap();
        assert_eq!(coflows.len(), 3);
        for c in coflows {
            let real = c["cct_s"].as_f64().unwrap();
            let sim = c["sim_cct_s"].as_f64().unwrap();
            // Real transfers cannot beat the fluid model's exact schedule by much.
            assert!(real > 0.0 && sim > 0.0);
            assert!(real >= 0.5 * sim, "real {real} sim {sim}");
        }
    }
}

/// `--deadlines X` synthesizes deadlines on the scaled workload (Γ on the emulated NICs, at
/// least 200 ms x --scale-time) and reports each coflow's deadline and whether its real CCT met it, for every
/// scheduler; `--deadline-scale` multiplies them.
#[test]
fn replay_deadlines_are_reported_per_coflow() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("toy.txt");
    std::fs::write(&trace, TOY).unwrap();
    let run = |scale: &str| {
        let json = dir.path().join(format!("out-{scale}.json"));
        let out = coflowkit(&[
            "replay",
            "--local",
            "2",
            "--trace",
            trace.to_str().unwrap(),
            "--scale-bytes",
            "0.01",
            "--scale-time",
            "0.1",
            "-s",
            "varys,fair",
            "--deadlines",
            "1",
            "--deadline-scale",
            scale,
            "--json",
            json.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        doc
    };
    let (one, two) = (run("1"), run("2"));
    for r in one["results"].as_array().unwrap() {
        for c in r["coflows"].as_array().unwrap() {
            let (arrival, cct) = (
                c["arrival_s"].as_f64().unwrap(),
                c["cct_s"].as_f64().unwrap(),
            );
            let due = c["deadline_s"].as_f64().unwrap() - arrival;
            // The 200 ms floor, x --scale-time 0.1.
            assert!(due >= 0.02 - 1e-9, "{c}");
            assert_eq!(
                c["met_deadline"].as_bool().unwrap(),
                cct <= due * (1.0 + 1e-9),
                "{c}"
            );
        }
        assert!(r["summary"]["deadlines"]["met_fraction"].is_number(), "{r}");
    }
    // Doubled: every deadline twice the first run's (the same seed).
    let due = |doc: &serde_json::Value| -> Vec<f64> {
        doc["results"][0]["coflows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["deadline_s"].as_f64().unwrap() - c["arrival_s"].as_f64().unwrap())
            .collect()
    };
    for (a, b) in due(&one).iter().zip(due(&two)) {
        assert!((2.0 * a - b).abs() < 1e-9, "{a} doubled is not {b}");
    }
    // Refused before anything starts: a scale without deadlines, a negative X.
    let out = coflowkit(&["replay", "--local", "2", "--deadline-scale", "2"]);
    assert_eq!(out.status.code(), Some(2));
    let out = coflowkit(&["replay", "--local", "2", "--deadlines", "-1"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn replay_needs_local() {
    let out = coflowkit(&["replay"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--local"));
}

#[test]
fn coordinator_refuses_a_bad_token_file() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("token");
    std::fs::write(&t, "short").unwrap();
    let out = coflowkit(&[
        "coordinator",
        "--listen",
        "127.0.0.1:0",
        "--token-file",
        t.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("token") && err.contains(t.to_str().unwrap()),
        "{err}"
    );
}

#[test]
fn coordinator_and_daemon_processes_show_up_in_status() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "process-test-token\n").unwrap();
    let tok = token.to_str().unwrap();
    let caddr = format!("127.0.0.1:{}", free_port());
    let daddr = format!("127.0.0.1:{}", free_port());
    let bin = env!("CARGO_BIN_EXE_coflowkit");
    let quiet = || std::process::Stdio::null();
    let _coord = Kill(
        Command::new(bin)
            .args([
                "coordinator",
                "--listen",
                &caddr,
                "--token-file",
                tok,
                "-s",
                "aalo",
            ])
            .stderr(quiet())
            .spawn()
            .unwrap(),
    );
    let _daemon = Kill(
        Command::new(bin)
            .args([
                "daemon",
                "--coordinator",
                &caddr,
                "--listen",
                &daddr,
                "--nic-rate",
                "100mbit",
                "--token-file",
                tok,
            ])
            .stderr(quiet())
            .spawn()
            .unwrap(),
    );
    let mut last = String::new();
    for _ in 0..100 {
        let out = coflowkit(&[
            "status",
            "--coordinator",
            &caddr,
            "--token-file",
            tok,
            "--json",
        ]);
        last = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let d = &doc["daemons"];
            if d.as_array().is_some_and(|a| a.len() == 1) && d[0]["connected"] == true {
                assert_eq!(doc["scheduler"], "aalo");
                assert_eq!(d[0]["addr"], daddr.as_str());
                assert_eq!(d[0]["nic_bytes_per_s"].as_f64(), Some(12.5e6));
                return;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the daemon never showed up as connected: {last}");
}

#[test]
fn sigterm_during_a_local_replay_removes_its_spilled_objects() {
    // 128 + the signal's number, as shells report a process a signal ended.
    interrupt_a_local_replay("TERM", 143);
}

#[test]
fn sigint_during_a_local_replay_removes_its_spilled_objects() {
    interrupt_a_local_replay("INT", 130);
}

fn interrupt_a_local_replay(signal: &str, code: i32) {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("toy.txt");
    std::fs::write(&trace, TOY).unwrap();
    // Slowed down so that it is still running when the signal comes.
    let mut child = Kill(
        Command::new(env!("CARGO_BIN_EXE_coflowkit"))
            .args(["replay", "--local", "2", "--trace"])
            .arg(&trace)
            .args(["--scale-time", "100", "-s", "fair"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let pid = child.0.id();
    // "replaying under" is printed once the handlers are in place.
    let mut lines = BufReader::new(child.0.stderr.take().unwrap()).lines();
    assert!(
        lines.any(|l| l.is_ok_and(|l| l.contains("replaying under"))),
        "the replay never started"
    );
    let spill = std::env::temp_dir().join(format!("coflowkit-replay-{pid}"));
    assert!(spill.exists(), "{} missing", spill.display());
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.0.wait().unwrap();
    assert_eq!(status.code(), Some(code), "SIG{signal}: {status}");
    assert!(!spill.exists(), "{} left behind", spill.display());
}

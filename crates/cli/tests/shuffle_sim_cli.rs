//! `coflowkit shuffle sim` as users meet it: the JSON contract, matrix files, protocol names,
//! and clear errors.

mod common;
use common::coflowkit;

use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn generated_run_writes_the_json_contract() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let out = coflowkit(&[
        "shuffle",
        "sim",
        "--nodes",
        "24",
        "--racks",
        "2",
        "--skew",
        "0.5",
        "--protocol",
        "grpf",
        "--seed",
        "7",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for word in [
        "throughput",
        "bound",
        "optimality",
        "peak buffer",
        "completion",
    ] {
        assert!(stdout.contains(word), "{word} missing from\n{stdout}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["protocol"], "grpf");
    assert_eq!(v["nodes"], 24);
    let skew = v["skewness"].as_f64().unwrap();
    assert!((skew - 0.5).abs() < 0.05, "skewness {skew}");
    let opt = v["optimality"].as_f64().unwrap();
    // What `optimality` claims: the throughput over the bound, and a bound is never beaten.
    // (Its value for a given matrix is checked against oracles in crates/pktsim/tests.)
    assert!(opt > 0.0 && opt <= 1.0 + 1e-12, "optimality {opt}");
    let ratio = v["throughput_gbps"].as_f64().unwrap() / v["bound_gbps"].as_f64().unwrap();
    assert!((ratio - opt).abs() < 1e-9);
    assert!(v["completion_s"].as_f64().unwrap() > 0.0);
    assert_eq!(v["violations"], 0);
    assert!(!v["utilization"].as_array().unwrap().is_empty());
    // Same seed, same numbers.
    let again = coflowkit(&[
        "shuffle", "sim", "--nodes", "24", "--racks", "2", "--skew", "0.5", "--seed", "7",
    ]);
    assert_eq!(String::from_utf8_lossy(&again.stdout), stdout);
}

#[test]
fn matrix_file_with_hadoop_connections() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.txt");
    let out = coflowkit(&[
        "shuffle",
        "gen",
        "--nodes",
        "12",
        "--skew",
        "0.3",
        "--seed",
        "3",
        "-o",
        m.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json = dir.path().join("h.json");
    let out = coflowkit(&[
        "shuffle",
        "sim",
        "--matrix",
        m.to_str().unwrap(),
        "--protocol",
        "hadoop",
        "--connections",
        "3",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["protocol"], "hadoop-3");
    assert_eq!(v["nodes"], 12);
}

#[test]
fn bad_input_exits_nonzero_with_a_reason() {
    let out = coflowkit(&["shuffle", "sim", "--nodes", "8", "--protocol", "tcp"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("unknown protocol `tcp`"),
        "{}",
        stderr(&out)
    );
    let out = coflowkit(&["shuffle", "sim", "--nodes", "8", "--racks", "9"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("racks"), "{}", stderr(&out));
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "2\n0 x\n1 0\n").unwrap();
    let out = coflowkit(&["shuffle", "sim", "--matrix", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("bad.txt"), "{}", stderr(&out));
}

#[test]
fn preemption_and_limited_core_add_the_oracle_and_buffers() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("p.json");
    let out = coflowkit(&[
        "shuffle",
        "sim",
        "--nodes",
        "12",
        "--racks",
        "1",
        "--avg-packets",
        "40",
        "--preempt",
        "0.5",
        "--preempt-interval-rtt",
        "5",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("oracle bound"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let oracle = v["oracle_gbps"].as_f64().unwrap();
    let tput = v["throughput_gbps"].as_f64().unwrap();
    assert!(oracle < v["bound_gbps"].as_f64().unwrap() && tput <= oracle);
    assert!((tput / oracle - v["optimality"].as_f64().unwrap()).abs() < 1e-9);
    assert!(v["max_tor_buffer_bytes"].as_u64().unwrap() > 0);
    // Limited core with GlobalSched and core priorities: no oracle, buffers at the core.
    let json = dir.path().join("c.json");
    let out = coflowkit(&[
        "shuffle",
        "sim",
        "--nodes",
        "24",
        "--racks",
        "3",
        "--core",
        "0.5",
        "--priority",
        "core",
        "--global-sched",
        "stale:2",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v["oracle_gbps"].is_null());
    assert!(v["peak_tor_up_port_bytes"].as_u64().unwrap() > 0);
}

#[test]
fn bad_interference_settings_say_which() {
    for (flags, says) in [
        (&["--preempt", "1.5"][..], "preempt"),
        (&["--global-sched", "stale:x"][..], "stale:X"),
        (
            &["--global-sched", "fresh", "--global-exponent", "9"][..],
            "exponent",
        ),
    ] {
        let out = coflowkit(&[&["shuffle", "sim", "--nodes", "8"][..], flags].concat());
        assert!(!out.status.success(), "{flags:?} succeeded");
        assert!(stderr(&out).contains(says), "{flags:?}: {}", stderr(&out));
    }
}

#[test]
fn an_impaired_wire_still_delivers_everything_and_reports_the_repairs() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let out = coflowkit(&[
        "shuffle",
        "sim",
        "--nodes",
        "16",
        "--protocol",
        "grpf",
        "--drop",
        "0.05",
        "--duplicate",
        "0.05",
        "--reorder",
        "0.1",
        "--resend-timeout",
        "200",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("loss recovery"), "{stdout}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["complete"], true);
    assert_eq!(v["violations"], 0);
    assert_eq!(v["delivered_packets"], v["data_packets"]);
    let loss = &v["loss"];
    for key in ["dropped", "duplicated", "reordered", "retransmissions"] {
        assert!(loss[key].as_u64().unwrap() > 0, "{key}: {loss}");
    }
    assert_eq!(loss["dead_peers"], 0);
    // A loss-free run has no loss section (its JSON is what it always was).
    let clean = dir.path().join("clean.json");
    let out = coflowkit(&[
        "shuffle",
        "sim",
        "--nodes",
        "16",
        "--json",
        clean.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&clean).unwrap()).unwrap();
    assert!(v.get("loss").is_none());
    for (flags, says) in [
        (&["--drop", "1.5"][..], "drop"),
        (&["--reorder", "0.1", "--reorder-max", "0"][..], "reorder"),
        (
            &["--drop", "0.1", "--resend-timeout", "0"][..],
            "resend-timeout",
        ),
    ] {
        let out = coflowkit(&[&["shuffle", "sim", "--nodes", "8"][..], flags].concat());
        assert!(!out.status.success(), "{flags:?} succeeded");
        assert!(stderr(&out).contains(says), "{flags:?}: {}", stderr(&out));
    }
}

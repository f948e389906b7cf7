//! Memory bounded by the work, as users meet it: inputs whose declared sizes would need
//! gigabytes run the real binary under a lowered address-space limit (RLIMIT_AS), where an
//! allocation past the limit aborts (status 134). Each must end with a refusal naming the
//! limit, or succeed within the bound when the work itself is small.

mod common;
use common::{write, TOY};

use std::process::{Command, Output};

/// The address space a limited run may use: enough for a debug binary's threads and what
/// these small inputs need, far below what their declared sizes would take.
const LIMIT: u64 = 1 << 30;

/// Run `coflowkit` with `args` under an address-space limit of [`LIMIT`].
fn limited(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_coflowkit"));
    cmd.args(args);
    common::limit(&mut cmd, libc::RLIMIT_AS, LIMIT);
    cmd.output().expect("run coflowkit")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Refused with status 1 (not an abort's 134 nor a panic's 101), saying every one of `says`.
#[track_caller]
fn refused(args: &[&str], says: &[&str]) -> String {
    let out = limited(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    for s in says {
        assert!(err.contains(s), "{args:?}: `{s}` not in: {err}");
    }
    err
}

#[track_caller]
fn succeeds(args: &[&str]) -> Output {
    let out = limited(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    out
}

/// A 457 KB coflow-benchmark file of one coflow with 30,000 mappers and 30,000 reducers: 900
/// million flows, 14 GB as flows. Every command reading a trace asked for it and aborted.
#[test]
fn a_small_trace_implying_900_million_flows_is_refused_on_its_count() {
    let dir = tempfile::tempdir().unwrap();
    let n = 30_000;
    let ports: Vec<String> = (0..n).map(|p| p.to_string()).collect();
    let reducers: Vec<String> = (0..n).map(|p| format!("{p}:1.0")).collect();
    let text = format!(
        "{n} 1\n1 0 {n} {} {n} {}\n",
        ports.join(" "),
        reducers.join(" ")
    );
    let t = write(dir.path(), "prod.txt", &text);
    let at = format!("{t}:2: field {} (reducer count): 900000000 flows", n + 4);
    for args in [
        vec!["trace", "stats", &t],
        vec!["trace", "convert", &t],
        vec!["sim", "--trace", &t, "-s", "fifo"],
        vec!["bench", "--trace", &t, "--repeat", "1"],
        vec!["fetch", "sim", "--trace", &t],
    ] {
        refused(&args, &[&at, "--max-flows"]);
    }
}

#[test]
fn the_flow_limit_is_the_users_to_set() {
    let dir = tempfile::tempdir().unwrap();
    // The toy trace has 5 flows, its third coflow (line 4) taking it from 4 to 5.
    let toy = write(dir.path(), "toy.txt", TOY);
    for cmd in [
        vec!["trace", "stats", &toy],
        vec!["sim", "--trace", &toy, "-s", "fifo"],
        vec!["fetch", "sim", "--trace", &toy],
    ] {
        let with = |max: &'static str| [cmd.clone(), vec!["--max-flows", max]].concat();
        refused(
            &with("4"),
            &[
                &format!("{toy}:4: field 5 (reducer count)"),
                "after 4 flows",
            ],
        );
        succeeds(&with("5"));
    }
    // Generators do not write what the readers would refuse.
    refused(
        &[
            "trace",
            "gen",
            "custom",
            "--coflows",
            "10",
            "--max-flows",
            "5",
        ],
        &["flows, over the limit of 5", "--max-flows"],
    );
}

/// `fetch sim --trace` numbers the ports a trace uses, as `sim` does: a header declaring
/// 4,294,967,295 ports made it allocate 34 GB.
#[test]
fn fetch_sim_tables_scale_with_the_ports_used() {
    let dir = tempfile::tempdir().unwrap();
    let sinc = write(
        dir.path(),
        "s.txt",
        "4294967295 2\n1 0 2 2 2 0 1 10 1 2 5\n2 50 1 1 1 2 3 4\n",
    );
    let small = write(
        dir.path(),
        "small.txt",
        "4 2\n1 0 2 2 2 0 1 10 1 2 5\n2 50 1 1 1 2 3 4\n",
    );
    let out = succeeds(&["fetch", "sim", "--trace", &sinc]);
    assert!(
        stderr(&out).contains("4294967295 ports declared, 4 used"),
        "{}",
        stderr(&out)
    );
    let twin = succeeds(&["fetch", "sim", "--trace", &small]);
    let body = |o: &Output| {
        let s = String::from_utf8_lossy(&o.stdout).into_owned();
        // The first line names the file and the last column is a wall time; the rest must be
        // the same.
        (s.lines().skip(1))
            .map(|l| {
                let mut t: Vec<&str> = l.split_whitespace().collect();
                t.pop();
                t.join(" ")
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(body(&out), body(&twin));
    // Rates per declared port still work, picked for the ports used.
    succeeds(&["fetch", "sim", "--trace", &sinc, "--rates", "1gbit"]);
    let b = write(dir.path(), "b.txt", "100000000 1\n1 0 1 0 1 99999999:1.0\n");
    succeeds(&["fetch", "sim", "--trace", &b]);
    refused(
        &["fetch", "sim", "--trace", &b, "--rates", "1gbit:2,2gbit:3"],
        &["--rates describes 5 nodes but the trace declares 100000000 ports"],
    );
}

#[test]
fn fetch_sim_refuses_synthetic_sizes_up_front() {
    // `--nodes` past 65,536 is refused by its flag range (flag_values_cli.rs).
    refused(
        &["fetch", "sim", "--rates", "1gbit:4000000000"],
        &["--rates item 1", "more than the 16777216"],
    );
    refused(
        &["fetch", "sim", "--nodes", "65536"],
        &[
            "1 jobs x 65536 reducers x 65536 nodes x 4 maps per node = 17179869184 fetches",
            "--max-flows",
        ],
    );
    refused(
        &[
            "fetch",
            "sim",
            "--nodes",
            "4",
            "--reducers",
            "4294967295",
            "--jobs",
            "4294967295",
        ],
        &["fetches, over the limit"],
    );
}

/// `hug alloc` built a capacity per declared link before it looked at the vectors.
#[test]
fn hug_alloc_refuses_declared_ports_its_vectors_do_not_have() {
    let dir = tempfile::tempdir().unwrap();
    for (ports, links) in [
        ("300000000", "600000000"),
        ("9223372036854775808", "18446744073709551616"),
        ("18446744073709551615", "36893488147419103230"),
    ] {
        let v = write(
            dir.path(),
            "v.json",
            &format!(r#"{{"ports": {ports}, "tenants": [{{"name":"A","vector":[1,1]}}]}}"#),
        );
        refused(
            &["hug", "alloc", "--vectors", &v],
            &[&format!(
                "tenant 'A': vector has 2 entries, but \"ports\": {ports} means {links} links"
            )],
        );
    }
    let v = write(
        dir.path(),
        "c.json",
        r#"{"ports": 9223372036854775808, "capacities": [1, 1], "tenants": [{"name":"A","vector":[1,1]}]}"#,
    );
    refused(
        &["hug", "alloc", "--vectors", &v],
        &["9223372036854775808 ports need 2 x 9223372036854775808 = 18446744073709551616 link capacities, got 2"],
    );
    let v = write(
        dir.path(),
        "e.json",
        r#"{"ports": 300000000, "tenants": []}"#,
    );
    refused(&["hug", "alloc", "--vectors", &v], &["no tenants"]);
    // A real fabric still works.
    let v = write(
        dir.path(),
        "ok.json",
        r#"{"ports": 2, "tenants": [{"name":"A","vector":[1,0,0,1]}]}"#,
    );
    succeeds(&["hug", "alloc", "--vectors", &v]);
}

/// Per-pair tables are hashed past 2,048 ports in use: 8,000 ports (refused before, their
/// dense tables needing 2.6 GB) run within the limit. One flow per coflow, each on ports of
/// its own, so every CCT is the flow's time at the full port rate, under every scheduler.
#[test]
fn thousands_of_ports_in_use_cost_by_the_pairs_used() {
    let dir = tempfile::tempdir().unwrap();
    let n = 4000;
    let mut text = format!("{} {n}\n", 2 * n);
    for c in 0..n {
        // Coflow c: 1 MB from port 2c to port 2c+1, all at once.
        text.push_str(&format!("{} 0 1 {} 1 {}:1.0\n", c + 1, 2 * c, 2 * c + 1));
    }
    let t = write(dir.path(), "wide.txt", &text);
    let json = dir.path().join("out.json");
    succeeds(&[
        "sim",
        "--trace",
        &t,
        "-s",
        "fifo,fair,varys,sincronia",
        "--json",
        json.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    // 1 MB at 1 Gbit/s: 8.388608 ms, for every coflow under every scheduler.
    for r in results {
        let ccts: Vec<f64> = (r["coflows"].as_array().unwrap().iter())
            .map(|c| c["cct_s"].as_f64().unwrap())
            .collect();
        assert_eq!(ccts.len(), n, "{}", r["scheduler"]);
        for cct in ccts {
            assert!(
                (cct - 0.008388608).abs() < 1e-9,
                "{}: {cct}",
                r["scheduler"]
            );
        }
    }
}

/// A shuffle is n^2 messages and its simulation holds about 200 bytes each at its peak (809 MB
/// at 2,000 nodes): the node limit is what simulates in 4 GB, 4,400. The former 16,384 aborted.
#[test]
fn shuffles_past_what_4_gb_simulates_are_refused_up_front() {
    // Under the limit of nodes but past what 1 GiB holds (3,000 nodes: 1.8 GB): refused with
    // the estimate, not an abort part way (an all-ones matrix aborted at 1.49 GB in 2 GB).
    let row = vec!["1"; 3000].join(" ");
    let ones = format!(
        "nodes 3000 packets\n{}\n",
        vec![row.as_str(); 3000].join("\n")
    );
    let dir0 = tempfile::tempdir().unwrap();
    let m = write(dir0.path(), "ones.txt", &ones);
    refused(
        &["shuffle", "sim", "--matrix", &m],
        &[
            &format!("{m}: 3000 nodes would need about"),
            "address-space limit",
        ],
    );
    refused(
        &["shuffle", "sim", "--nodes", "3000"],
        &[
            "--nodes: 3000 nodes would need about",
            "address-space limit",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let says = "over the limit of 4400 nodes";
    refused(
        &["shuffle", "gen", "--nodes", "16384", "-o", "/dev/null"],
        &["16384 nodes would need about 53.7 GB", says],
    );
    refused(
        &["shuffle", "sim", "--nodes", "16384", "--max-steps", "10"],
        &["--nodes", says],
    );
    refused(
        &["shuffle", "sim", "--nodes", "4401"],
        &["4401 nodes would need about 3.9 GB", says],
    );
    let m = write(dir.path(), "m.txt", "nodes 16384 packets\n0\n");
    refused(
        &["shuffle", "sim", "--matrix", &m],
        &[&format!("{m}:1"), says],
    );
}

/// The packet simulator's per-timestep series grow with the steps run: a 60-byte matrix with one
/// cell of 2^30 packets (the most a cell may hold) reserved 4 GB per series up front and aborted,
/// whatever `--max-steps` said; so did `--avg-packets 268435456` on 3 nodes.
#[test]
fn shuffle_sim_series_grow_with_the_steps_run() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "cell.txt",
        "nodes 3 packets\n1 1073741824 3\n4 5 6\n7 8 9\n",
    );
    // Neither shuffle can finish in so few steps: each ends with the usual "did not finish"
    // error (status 1), where it used to abort (134) before its first step.
    let unfinished = ["did not finish", "raise --max-steps"];
    refused(
        &["shuffle", "sim", "--matrix", &m, "--max-steps", "2000"],
        &unfinished,
    );
    refused(
        &[
            "shuffle",
            "sim",
            "--nodes",
            "3",
            "--avg-packets",
            "268435456",
            "--max-steps",
            "100",
        ],
        &unfinished,
    );
}

/// A 54 KB trace of one 4,000 x 4,000 coflow is 16 million flows, within `--max-flows`, and
/// `fair` needs about 6 GB to simulate them: `sim` refuses up front under the 1 GiB limit,
/// naming the estimate, the limit and what to change (it aborted part way, as a 5,792 x 5,792
/// trace did under 2 GB). A 300 x 300 twin runs.
#[test]
fn sim_refuses_flows_it_cannot_hold_with_the_estimate() {
    let dir = tempfile::tempdir().unwrap();
    let square = |n: usize| {
        let ports: Vec<String> = (0..n).map(|p| p.to_string()).collect();
        let reducers: Vec<String> = (0..n).map(|p| format!("{p}:1.0")).collect();
        let text = format!(
            "{n} 1\n1 0 {n} {} {n} {}\n",
            ports.join(" "),
            reducers.join(" ")
        );
        write(dir.path(), &format!("sq{n}.txt"), &text)
    };
    let big = square(4000);
    let fair = ["-s", "fair", "--baseline", "fair", "--jobs", "1"];
    let args: Vec<&str> = ["sim", "--trace", &big].into_iter().chain(fair).collect();
    refused(
        &args,
        &[
            &format!("{big}: simulating 16000000 flows would need about"),
            "over this process's address-space limit (ulimit -v) of 1.1 GB",
            "--jobs 1",
        ],
    );
    let small = square(300);
    let args: Vec<&str> = ["sim", "--trace", &small].into_iter().chain(fair).collect();
    succeeds(&args);
}

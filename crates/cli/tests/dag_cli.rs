//! DAG workloads from the command line (issue 18): `trace gen tpcds` writes a trace with
//! parents and compute times, `sim` replays it job by job (a job table and `"jobs"` in the
//! JSON), `sim --tpcds` replays the same workload without the file, and bad parents are
//! refused naming file, line and field.

mod common;
use common::coflowkit;

fn run(args: &[&str]) -> (bool, String, String) {
    let out = coflowkit(args);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_generated_dag_workload_replays_job_by_job_and_equals_sim_tpcds() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("q.txt");
    let gen = |out: &std::path::Path| {
        run(&[
            "trace",
            "gen",
            "tpcds",
            "--queries",
            "12",
            "--seed",
            "3",
            "-o",
            out.to_str().unwrap(),
        ])
    };
    let (ok, _, stderr) = gen(&trace);
    assert!(ok, "{stderr}");
    let again = dir.path().join("q2.txt");
    assert!(gen(&again).0);
    let text = std::fs::read_to_string(&trace).unwrap();
    assert_eq!(
        text,
        std::fs::read_to_string(&again).unwrap(),
        "same seed, same file"
    );
    assert!(
        text.contains(" parents ") && text.contains(" compute "),
        "{text}"
    );

    let from_file = dir.path().join("f.json");
    let (ok, stdout, stderr) = run(&[
        "sim",
        "--trace",
        trace.to_str().unwrap(),
        "-s",
        "aalo,varys",
        "--baseline",
        "varys",
        "--json",
        from_file.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("jobs (DAGs of coflows"), "{stdout}");
    let a = json(&from_file);
    let s = &a["jobs"]["aalo"]["summary"];
    assert_eq!(s["jobs"], 12, "{s}");
    assert!(s["multi_level_jobs"].as_u64().unwrap() >= 1, "{s}");
    let jobs = a["jobs"]["varys"]["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 12);
    for j in jobs {
        let (jct, comm) = (j["jct_s"].as_f64().unwrap(), j["comm_s"].as_f64().unwrap());
        assert!(comm > 0.0 && comm <= jct * (1.0 + 1e-12), "{j}");
    }

    let direct = dir.path().join("d.json");
    let (ok, _, stderr) = run(&[
        "sim",
        "--tpcds",
        "12",
        "--seed",
        "3",
        "-s",
        "aalo,varys",
        "--baseline",
        "varys",
        "--json",
        direct.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let b = json(&direct);
    for name in ["aalo", "varys"] {
        let (x, y) = (&a["jobs"][name]["summary"], &b["jobs"][name]["summary"]);
        for k in ["avg_jct_s", "avg_comm_s", "multi_level_avg_comm_s"] {
            let (x, y) = (x[k].as_f64().unwrap(), y[k].as_f64().unwrap());
            assert!((x - y).abs() <= 1e-9 * x.abs(), "{name} {k}: {x} vs {y}");
        }
    }
}

#[test]
fn bad_parents_are_refused_naming_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.txt");
    std::fs::write(
        &bad,
        "4 2\n1 0 1 0 1 1:1\n2 0 1 2 1 3:1 parents 1 9 compute 5\n",
    )
    .unwrap();
    let (ok, _, stderr) = run(&["sim", "--trace", bad.to_str().unwrap(), "-s", "fair"]);
    assert!(!ok, "refused");
    assert!(
        stderr.contains("bad.txt:3: field 9 (parent id): parent 9 is not a coflow of the trace"),
        "{stderr}"
    );
    std::fs::write(
        &bad,
        "4 2\n1 0 1 0 1 1:1\n2 0 1 2 1 3:1 parents 1 1 compute -5\n",
    )
    .unwrap();
    let (ok, _, stderr) = run(&["sim", "--trace", bad.to_str().unwrap(), "-s", "fair"]);
    assert!(
        !ok && stderr.contains("bad.txt:3: field 11 (compute ms)"),
        "{stderr}"
    );
    // The reference model has no dependencies: refused, not ignored.
    std::fs::write(
        &bad,
        "4 2\n1 0 1 0 1 1:1\n2 0 1 2 1 3:1 parents 1 1 compute 5\n",
    )
    .unwrap();
    let (ok, _, stderr) = run(&[
        "sim",
        "--trace",
        bad.to_str().unwrap(),
        "--model",
        "coflowsim",
        "-s",
        "fair",
    ]);
    assert!(!ok && stderr.contains("use --model exact"), "{stderr}");
    // Sincronia's format cannot carry parents: refused, not dropped.
    let (ok, _, stderr) = run(&[
        "trace",
        "convert",
        bad.to_str().unwrap(),
        "--format",
        "sincronia",
    ]);
    assert!(
        !ok && stderr.contains("only the coflow-benchmark format"),
        "{stderr}"
    );
}

//! The issue-18 workloads and ablations from the command line: `sim --max-waves`,
//! `--concurrent`, the `--ref-*` ablations of `--model coflowsim`, and the new baselines
//! `aalo-uncoord` and `vc`.

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

#[test]
fn max_waves_reports_one_stage_per_coflow() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("w.json");
    let (ok, stdout, stderr) = run(&[
        "sim",
        "--coflows",
        "30",
        "--max-waves",
        "4",
        "-s",
        "aalo,varys",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("stage completion"), "{stdout}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    for name in ["aalo", "varys"] {
        let s = &v["stages"][name];
        assert_eq!(s["stages"], 30, "{v}");
        // Each stage lasts at least as long as its longest wave's CCT.
        assert!(s["avg_s"].as_f64().unwrap() > 0.0);
    }
    let (ok, _, stderr) = run(&["sim", "--coflows", "5", "--max-waves", "3", "-s", "aalo"]);
    assert!(!ok && stderr.contains("Table 6.4"), "{stderr}");
}

#[test]
fn concurrent_and_ablation_flags_say_what_is_wrong() {
    let (ok, _, stderr) = run(&["sim", "--coflows", "5", "--concurrent", "6", "-s", "fair"]);
    assert!(!ok && stderr.contains("--concurrent"), "{stderr}");
    let (ok, _, stderr) = run(&[
        "sim",
        "--coflows",
        "5",
        "--ref-backfill-in-order",
        "-s",
        "fifo",
    ]);
    assert!(!ok && stderr.contains("--model coflowsim"), "{stderr}");
    let (ok, stdout, stderr) = run(&[
        "sim",
        "--coflows",
        "20",
        "--deadlines",
        "1",
        "-s",
        "vc,aalo-uncoord",
    ]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("vc") && stdout.contains("aalo-uncoord"),
        "{stdout}"
    );
}

//! `coflowkit sim --model coflowsim` as users meet it. The CCTs are the reference CoflowSim's
//! (github.com/coflow/coflowsim b61f209, `java coflowsim.CoflowSim FIFO|DARK COFLOW-BENCHMARK`,
//! 8th output column, its ms) on the crafted trace of crates/flowsim/tests/coflowsim_oracle.rs.

mod common;
use common::{coflowkit, write};

const TINY: &str = "6 6
1 0 2 0 1 2 2:3.5 3:1.0
2 300 1 1 2 1:2.0 4:6.0
3 9000 3 0 2 5 2 3:10.0 5:0.4
4 10240 1 3 1 3:2.0
5 15000 2 4 5 3 0:7.0 1:1.0 2:25.0
6 15500 1 2 2 0:3.0 5:40.0
";

#[test]
fn reference_ccts_come_out_of_the_csv() {
    let dir = tempfile::tempdir().unwrap();
    let t = write(dir.path(), "tiny.txt", TINY);
    let csv = dir.path().join("out.csv");
    let out = coflowkit(&[
        "sim",
        "--model",
        "coflowsim",
        "--trace",
        &t,
        "-s",
        "fifo,aalo",
        "--baseline",
        "fifo",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let ccts = |name: &str| -> Vec<f64> {
        text.lines()
            .skip(1)
            .filter(|l| l.starts_with(&format!("{name},")))
            .map(|l| l.split(',').nth(4).unwrap().parse::<f64>().unwrap() * 1000.0)
            .collect()
    };
    for (name, want) in [
        ("fifo", [32.0, 88.0, 112.0, 128.0, 208.0, 344.0]),
        ("aalo", [32.0, 128.0, 128.0, 144.0, 312.0, 480.0]),
    ] {
        let got = ccts(name);
        assert_eq!(got.len(), 6, "{name}: {text}");
        for (g, w) in got.iter().zip(want) {
            assert!(
                (g - w).abs() < 1e-6,
                "{name}: ours {got:?}, reference {want:?}"
            );
        }
    }
}

#[test]
fn schedulers_the_reference_lacks_and_deadlines_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = write(dir.path(), "tiny.txt", TINY);
    let out = coflowkit(&["sim", "--model", "coflowsim", "--trace", &t, "-s", "varys"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("CoflowSim has no `varys`"), "{err}");
    let out = coflowkit(&[
        "sim",
        "--model",
        "coflowsim",
        "--trace",
        &t,
        "-s",
        "fifo",
        "--deadlines",
        "1",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("considerDeadline"));
}

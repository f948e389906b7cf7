//! `coflowkit reproduce coflow-thesis --quick`: one line per row of the key results table, the
//! numbers the printed commands give, verdicts from the stated rules, and the charts.

mod common;
use common::coflowkit;

/// The JSON summary of `coflowkit sim ARGS --json`.
fn sim_json(dir: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let json = dir.join("sim.json");
    let mut all = vec!["sim"];
    all.extend_from_slice(args);
    all.extend(["--json", json.to_str().unwrap()]);
    let out = coflowkit(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

fn avg(v: &serde_json::Value, name: &str) -> f64 {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["scheduler"] == name)
        .unwrap_or_else(|| panic!("{name} in {v}"))["summary"]["avg_cct_s"]
        .as_f64()
        .unwrap()
}

#[test]
fn quick_run_writes_every_row_with_the_numbers_its_commands_give() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("docs/results.md");
    let charts = dir.path().join("docs/charts");
    let out = coflowkit(&[
        "reproduce",
        "coflow-thesis",
        "--quick",
        "--quick-coflows",
        "6",
        "--out",
        doc.to_str().unwrap(),
        "--charts",
        charts.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&doc).unwrap();

    // One table line per row 1..=33, each with two verdicts from the stated set.
    let verdicts = ["**reproduced**", "partly", "not", "not run"];
    for n in 1..=33 {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("| {n} | ")))
            .unwrap_or_else(|| panic!("row {n} missing"));
        let cells: Vec<&str> = line.split(" | ").collect();
        assert_eq!(cells.len(), 7, "{line}");
        assert!(verdicts.contains(&cells[4]), "{line}");
        assert!(
            verdicts.contains(&cells[6].trim_end_matches(" |")),
            "{line}"
        );
    }
    // Testbed rows and other issues' rows say so instead of inventing a number.
    assert!(
        text.contains("| 8 | Varys EC2") && text.contains("issue 22") && text.contains("issue 23")
    );
    // Row 5 is exact arithmetic on Fig 4.6: 299 / 200.
    assert!(text.contains("fair/MADD 1.50 | **reproduced**"), "row 5");

    // Row 10's fair/varys is what the printed command gives.
    let cmd = "coflowkit sim --coflows 6 -s fair,pfp,fifo,fifo-strict,varys";
    assert!(text.contains(cmd), "row 10's command");
    let v = sim_json(dir.path(), &["--coflows", "6", "-s", "fair,varys"]);
    let ratio = avg(&v, "fair") / avg(&v, "varys");
    assert!(
        text.contains(&format!("fair/varys avg {ratio:.2} (thesis 2.16")),
        "fair/varys {ratio:.2} not in\n{text}"
    );
    // The FIFO of the simulations and the strict one are both run (row 10's note).
    let v = sim_json(dir.path(), &["--coflows", "6", "-s", "fifo,fifo-strict"]);
    assert!(avg(&v, "fifo") <= avg(&v, "fifo-strict") + 1e-9);

    // Rows 29-32 are run, not cited: row 30's fair/hug is what `sim` gives on the same
    // slice, and row 32 has hug bench's time at 100 machines.
    let v = sim_json(dir.path(), &["--coflows", "6", "-s", "fair,hug"]);
    let ratio = avg(&v, "fair") / avg(&v, "hug");
    assert!(
        text.contains(&format!("fair/hug avg {ratio:.2} (thesis 1.49")),
        "fair/hug {ratio:.2} not in\n{text}"
    );
    assert!(
        text.contains("coflowkit sim --coflows 6 -s hug,drf,psp"),
        "row 29's command"
    );
    assert!(
        text.contains("--concurrent 6 --seed 1 --tenant-metrics -s hug,drf,psp,fair"),
        "row 27's command"
    );
    let row32 = text.lines().find(|l| l.starts_with("| 32 | ")).unwrap();
    assert!(row32.contains("P* at 100 machines, µs"), "{row32}");
    // Rows 16 and 25 are measured on the live coordinator by the command itself.
    let row16 = text.lines().find(|l| l.starts_with("| 16 | ")).unwrap();
    assert!(
        row16.contains("schedule avg, ms") && row16.contains("µs per message"),
        "{row16}"
    );
    let row25 = text.lines().find(|l| l.starts_with("| 25 | ")).unwrap();
    assert!(row25.contains("round p99 at 100, ms"), "{row25}");
    for row in [row16, row25] {
        let cells: Vec<&str> = row.split(" | ").collect();
        assert_ne!(cells[4], "not run", "{row}");
    }

    // The default-vs-recompute table covers the ten policies that redistribute.
    let section = text
        .split("## Default vs `--on-flow-completion recompute`")
        .nth(1)
        .expect("recompute section");
    assert_eq!(
        section
            .lines()
            .filter(|l| l.starts_with("| ") && l.ends_with("% |"))
            .count(),
        10
    );

    // Charts exist, are referenced relative to the document, and stay small.
    for f in [
        "cct_cdf_exact.svg",
        "cct_cdf_reference.svg",
        "per_bin.svg",
        "per_bin_reference.svg",
    ] {
        let p = charts.join(f);
        let len = std::fs::metadata(&p).unwrap().len();
        assert!(len > 1000 && len < 200_000, "{f}: {len} bytes");
        assert!(text.contains(&format!("](charts/{f})")), "{f} not linked");
    }
}

#[test]
fn bad_trace_is_named() {
    let out = coflowkit(&[
        "reproduce",
        "coflow-thesis",
        "--quick",
        "--trace",
        "/nonexistent/trace.txt",
        "--out",
        "/nonexistent/out.md",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/trace.txt"));
}

/// `--testbed --quick`: rows 8, 9, 13, 19 and 20 measured on a network-namespace cluster (4
/// daemons, 30 coflows: seconds), their verdicts from those runs. Needs root, `ip` and `tc`
/// (CI runs as root). Where they are missing this test FAILS, so a skip never passes for a
/// run: set COFLOWKIT_ALLOW_NOT_RUN=1 to accept not running it (it then says so on stderr).
#[test]
fn quick_testbed_measures_the_ec2_rows_on_the_emulated_cluster() {
    if let Err(why) = coflowkit_testbed::available() {
        if std::env::var_os("COFLOWKIT_ALLOW_NOT_RUN").is_some() {
            eprintln!(
                "NOT RUN: quick_testbed_measures_the_ec2_rows_on_the_emulated_cluster: {why}"
            );
            return;
        }
        panic!(
            "this test needs the network-namespace cluster and cannot run here: {why} (set \
             COFLOWKIT_ALLOW_NOT_RUN=1 to accept that)"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("docs/results.md");
    let out = coflowkit(&[
        "reproduce",
        "coflow-thesis",
        "--quick",
        "--quick-coflows",
        "4",
        "--no-recompute",
        "--testbed",
        "--out",
        doc.to_str().unwrap(),
        "--charts",
        dir.path().join("charts").to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&doc).unwrap();
    for (n, label) in [
        (8, "fair/varys avg CCT"),
        (9, "fair/varys p95 JCT"),
        (13, "varys met"),
        (19, "fair/aalo avg JCT"),
        (20, "fair/aalo p95 CCT"),
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("| {n} | ")))
            .unwrap_or_else(|| panic!("row {n} missing"));
        let cells: Vec<&str> = line.split(" | ").collect();
        assert_ne!(cells[4], "not run", "row {n} was measured: {line}");
        assert!(line.contains(label), "{line}");
        // A number, not a dash (NaN).
        let at = line.find(label).unwrap() + label.len() + 1;
        let num: String = (line[at..].chars())
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        assert!(num.parse::<f64>().is_ok_and(f64::is_finite), "{line}");
    }
    assert!(text.contains("Measured on the emulated cluster"), "{text}");
    assert!(
        text.contains("coflowkit replay --local 4 --netns --coflows 30"),
        "the commands that ran are printed"
    );
}

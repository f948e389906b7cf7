//! `coflowkit hug alloc` as users meet it: App. D.2's three tenants (P* = 2/5, link 2 used to
//! 4/5 under HUG, to 1 cooperatively), and bad vectors refused with the tenant and entry named.

mod common;
use common::{coflowkit, write};

const D2: &str = r#"{"tenants": [
  {"name": "A", "vector": [0.5, 1.0]},
  {"name": "B", "vector": [1.0, 0.16666666666666666]},
  {"name": "C", "vector": [1.0, 0.0]}
]}"#;

fn alloc(dir: &std::path::Path, input: &str, extra: &[&str]) -> (std::process::Output, String) {
    let v = write(dir, "v.json", input);
    let out = dir.join("out.json");
    let mut args = vec![
        "hug",
        "alloc",
        "--vectors",
        &v,
        "--json",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = coflowkit(&args);
    let json = std::fs::read_to_string(&out).unwrap_or_default();
    (o, json)
}

fn close(v: &serde_json::Value, want: f64) -> bool {
    (v.as_f64().unwrap() - want).abs() < 1e-9
}

#[test]
fn app_d2_example() {
    let dir = tempfile::tempdir().unwrap();
    let (o, json) = alloc(dir.path(), D2, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(close(&v["p_star"], 0.4), "{json}");
    assert!(
        close(&v["link_use"][0], 1.0) && close(&v["link_use"][1], 0.8),
        "{json}"
    );
    let b = &v["tenants"][1];
    assert_eq!(b["name"], "B");
    assert!(close(&b["guarantee"][1], 1.0 / 15.0) && close(&b["consumption"][1], 0.4));
    for k in 0..3 {
        assert!(close(&v["tenants"][k]["progress"], 0.4), "{json}");
    }
    let (o, json) = alloc(dir.path(), D2, &["--mode", "cooperative"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(close(&v["link_use"][1], 1.0), "{json}");
    let (o, json) = alloc(dir.path(), D2, &["--policy", "drf"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(close(&v["link_use"][1], 7.0 / 15.0), "{json}");
}

#[test]
fn bad_vectors_name_tenant_and_entry() {
    let dir = tempfile::tempdir().unwrap();
    for (input, want) in [
        (
            r#"{"tenants": [{"name": "A", "vector": [1, 1]}, {"name": "B", "vector": [1]}]}"#,
            "tenant 'B': vector has 1 entries, the fabric has 2 links",
        ),
        (
            r#"{"tenants": [{"name": "A", "vector": [1, -1]}]}"#,
            "tenant 'A': entry 1 is -1",
        ),
        (
            r#"{"tenants": [{"name": "Z", "vector": [0, 0]}]}"#,
            "tenant 'Z': every entry is 0",
        ),
        (
            r#"{"ports": 2, "tenants": [{"name": "U", "vector": [1, 0, 0.5, 0]}]}"#,
            "tenant 'U': uplinks (entries 0..2) sum to 1 but downlinks (entries 2..4) sum to 0.5",
        ),
        (r#"{"tenant": []}"#, "unknown field `tenant`"),
    ] {
        let (o, _) = alloc(dir.path(), input, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(want), "{input}: {err}");
        assert!(err.contains("v.json"), "names the file: {err}");
    }
}

#[test]
fn sim_runs_hug_drf_psp_with_every_coflow_a_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let t = write(dir.path(), "toy.txt", common::TOY);
    let csv = dir.path().join("out.csv");
    for mode in ["noncooperative", "cooperative"] {
        let o = coflowkit(&[
            "sim",
            "--trace",
            &t,
            "-s",
            "hug,drf,psp",
            "--tenants",
            "coflow",
            "--hug-mode",
            mode,
            "--baseline",
            "drf",
            "--csv",
            csv.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = std::fs::read_to_string(&csv).unwrap();
        for name in ["hug", "drf", "psp"] {
            let rows = text
                .lines()
                .filter(|l| l.starts_with(&format!("{name},")))
                .count();
            assert_eq!(
                rows, 3,
                "{name}: one row per coflow of the toy trace\n{text}"
            );
        }
    }
}

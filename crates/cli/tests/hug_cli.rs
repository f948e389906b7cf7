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
        (
            r#"{"tenants": [{"name": "A", "vector": [1, 1]}, {"name": "A", "vector": [1, 0]}]}"#,
            "tenant 'A' is named twice (tenants 0 and 1)",
        ),
        (
            r#"{"tenants": [{"name": "H", "vector": [1], "weight": 1e308}]}"#,
            "tenant 'H': weight 1e308 is outside 1e-6 to 1e6",
        ),
        (
            r#"{"tenants": [{"name": "L", "vector": [1], "weight": 1e-308}]}"#,
            "tenant 'L': weight 1e-308 is outside 1e-6 to 1e6",
        ),
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

/// X: one flow from port 0 to port 2. Y: port 0 to ports 1, 2, 3. 1 MB each, both at 0.
const X_AND_Y: &str = "4 2\n1 0 1 0 1 2:1.0\n2 0 1 0 3 1:1.0 2:1.0 3:1.0\n";

#[test]
fn sim_prints_and_writes_the_multi_tenant_measures() {
    // Uplink 0 is everyone's bottleneck. Per-flow fairness: four flows share it, X gets 1/4
    // (progress 1/4, 250 Mbit/s), Y 3/4; all end at 4 units (a unit = 1 MB at the port rate):
    // slowdowns 4 (X alone takes 1) and 4/3 (Y alone takes 3). HUG: P* = 1/2, X 1/2 until it
    // ends at 2, then Y the whole uplink until 4: slowdowns 2 and 4/3. Both use 2 of 8 links.
    let dir = tempfile::tempdir().unwrap();
    let t = write(dir.path(), "xy.txt", X_AND_Y);
    let json = dir.path().join("out.json");
    let o = coflowkit(&[
        "sim",
        "--trace",
        &t,
        "-s",
        "hug,fair",
        "--tenant-metrics",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("multi-tenant measures"), "{text}");
    assert!(text.contains("slowdown"), "{text}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let result = |name: &str| {
        doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["scheduler"] == name)
            .unwrap()
            .clone()
    };
    for (name, ig, max_sd, avg_sd, sd_sd) in [
        ("fair", 0.25, 4.0, 8.0 / 3.0, 4.0 / 3.0),
        ("hug", 0.5, 2.0, 5.0 / 3.0, 1.0 / 3.0),
    ] {
        let r = result(name);
        let m = &r["tenant_metrics"];
        assert!(close(&m["first"]["isolation_guarantee"], ig), "{name}: {m}");
        assert!(close(&m["first"]["utilization"], 0.25), "{name}: {m}");
        let s = &r["summary"]["slowdown"];
        assert!(close(&s["min"], 4.0 / 3.0), "{name}: {s}");
        assert!(close(&s["max"], max_sd), "{name}: {s}");
        assert!(close(&s["avg"], avg_sd), "{name}: {s}");
        assert!(close(&s["stdev"], sd_sd), "{name}: {s}");
    }
    // X's bottleneck bandwidth at the start: 250 Mbit/s under fair, 500 under HUG.
    let x_bps = |name: &str| {
        let r = result(name);
        r["tenant_metrics"]["first"]["coflows"][0]["bottleneck_bytes_per_s"]
            .as_f64()
            .unwrap()
            * 8.0
    };
    assert!((x_bps("fair") - 250e6).abs() < 1.0, "{}", x_bps("fair"));
    assert!((x_bps("hug") - 500e6).abs() < 1.0, "{}", x_bps("hug"));
}

/// A: 1 MB 0->0, B: 1 MB 0->1, C: 1 MB 1->2, all at 0 (choice 2's A = B = <1, 0>, C = <0, 1>).
const OFF_BOTTLENECK: &str = "3 3\n1 0 1 0 1 0:1.0\n2 0 1 0 1 1:1.0\n3 0 1 1 1 2:1.0\n";

#[test]
fn sim_hug_stage1_multi_round() {
    // Uplink 0 carries A and B: Eq 7.2 gives P* = 1/2 and C, which does not touch it, stops
    // at 1/2 too (its cap): every coflow takes 2 units, slowdown 2 each. Multi-round DRF lets
    // C rise to its whole links: it ends at 1 (slowdown 1), A and B still at 2.
    let dir = tempfile::tempdir().unwrap();
    let t = write(dir.path(), "off.txt", OFF_BOTTLENECK);
    let json = dir.path().join("out.json");
    let slowdown = |stage1: &str| {
        let o = coflowkit(&[
            "sim",
            "--trace",
            &t,
            "-s",
            "hug",
            "--hug-stage1",
            stage1,
            "--json",
            json.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        doc["results"][0]["summary"]["slowdown"].clone()
    };
    for stage1 in ["auto", "closed-form"] {
        let s = slowdown(stage1);
        assert!(
            close(&s["min"], 2.0) && close(&s["max"], 2.0),
            "{stage1}: {s}"
        );
    }
    let s = slowdown("multi-round");
    assert!(close(&s["min"], 1.0) && close(&s["max"], 2.0), "{s}");
    let o = coflowkit(&["sim", "--trace", &t, "-s", "hug", "--hug-stage1", "rounds"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("multi-round"));
}

/// A coflow's CCT by id from `sim --json`.
fn cct(results: &serde_json::Value, sched: &str, id: u64) -> f64 {
    let r = (results.as_array().unwrap().iter())
        .find(|r| r["scheduler"] == sched)
        .unwrap();
    let c = (r["coflows"].as_array().unwrap().iter())
        .find(|c| c["id"] == id)
        .unwrap();
    c["cct_s"].as_f64().unwrap()
}

#[test]
fn trace_gen_hug_net_fig_7_11_in_sim() {
    // Fig 7.11 on 8 machines, all three at once: per-flow fairness gives the permutations A
    // and C 1/9 of every link beside B's 7 flows, HUG 1/3: A's CCT 9/3 = 3x longer.
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("net.txt");
    let (ts, js) = (t.to_str().unwrap(), dir.path().join("o.json"));
    let o = coflowkit(&[
        "trace",
        "gen",
        "hug-net",
        "--hosts",
        "8",
        "--mb",
        "1",
        "--arrivals-s",
        "0,0,0",
        "--format",
        "sincronia",
        "-o",
        ts,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = coflowkit(&[
        "sim",
        "--trace",
        ts,
        "-s",
        "hug,fair",
        "--json",
        js.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&js).unwrap()).unwrap();
    let r = &v["results"];
    for id in [1, 3] {
        let ratio = cct(r, "fair", id) / cct(r, "hug", id);
        assert!(
            (ratio - 3.0).abs() < 1e-6,
            "coflow {id}: fair / hug = {ratio}"
        );
    }
    // The benchmark format cannot hold a permutation: refused, naming the coflow.
    let o = coflowkit(&["trace", "gen", "hug-net", "--hosts", "8", "-o", ts]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("coflow 1"), "{err}");
}

#[test]
fn hug_distribute_reaches_every_emulated_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let js = dir.path().join("d.json");
    let o = coflowkit(&[
        "hug",
        "distribute",
        "--daemons",
        "30",
        "--per-connection",
        "7",
        "--rounds",
        "3",
        "--json",
        js.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&js).unwrap()).unwrap();
    let row = &v[0];
    assert_eq!(
        (row["daemons"].as_u64(), row["connections"].as_u64()),
        (Some(30), Some(5))
    );
    let f = |k: &str| row[k].as_f64().unwrap();
    assert!(
        0.0 < f("half_ms") && f("half_ms") <= f("median_ms") && f("median_ms") <= f("max_ms"),
        "{row}"
    );
}

/// `replay --non-clairvoyant` on loopback: every coflow registered without sizes, so HUG uses
/// the vector --hug-vectors estimates, not MADD's. X = 0->2 (36 MiB), 1->3 and 1->4 (4 MiB
/// each), Y = 1->0 (4 MiB), bytes x 0.05 on 1.25 MB/s NICs. With sizes, X's vector has 8/36 of
/// its largest entry on uplink 1, P* = 9/11 and Y runs at 9/11 of the NIC; without, X counts
/// two flows there (the rates estimate starts from one unit per flow and then measures the
/// same shape), P* = 1/2 and Y runs at half (hand-derived, docs/hug.md).
#[test]
fn replay_non_clairvoyant_hug_uses_estimated_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write(
        dir.path(),
        "xy.txt",
        "5 2\n1 0 3 2 3 0 2 36 1 3 4 1 4 4\n2 0 1 1 1 1 0 4\n",
    );
    let run = |extra: &[&str]| {
        let json = dir.path().join(format!("r{}.json", extra.len()));
        let mut args = vec![
            "replay",
            "--local",
            "5",
            "--trace",
            &trace,
            "--port-rate",
            "1gbit",
            "--scale-bytes",
            "0.05",
            "--scale-time",
            "5",
            "-s",
            "hug",
            "--baseline",
            "hug",
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = coflowkit(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let y = v["results"][0]["coflows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == 2)
            .unwrap()
            .clone();
        (
            y["cct_s"].as_f64().unwrap(),
            y["sim_cct_s"].as_f64().unwrap(),
        )
    };
    let y_bytes = (4.0 * 1048576.0 * 0.05f64).round();
    let nic = 1e9 / 8.0 * 0.05 / 5.0;
    let (_, sim_seeing) = run(&[]);
    let (real_blind, sim_blind) = run(&["--non-clairvoyant", "--hug-vectors", "rates"]);
    // MADD's P*: X's uplink-1 entry is its 0.4 MiB there over its 1.8 MiB on uplink 0.
    let x_up1 = (0.2 * 1048576.0f64).round() * 2.0 / (1.8 * 1048576.0f64).round();
    let want_seeing = y_bytes / (nic / (1.0 + x_up1));
    assert!(
        (sim_seeing - want_seeing).abs() < 0.01 * want_seeing,
        "{sim_seeing} vs {want_seeing}"
    );
    let want_blind = y_bytes / (nic / 2.0);
    assert!(
        (sim_blind - want_blind).abs() < 0.01 * want_blind,
        "{sim_blind} vs {want_blind}"
    );
    // The real run cannot beat the blind allocation (a run that saw sizes would finish Y in
    // 0.61 of it; load only slows a run down).
    assert!(
        real_blind > 0.85 * want_blind,
        "{real_blind} vs {want_blind}"
    );
    assert!(
        real_blind < 2.0 * want_blind,
        "{real_blind} vs {want_blind}"
    );
    // Sizes are needed by varys: refused, naming the flag.
    let o = coflowkit(&[
        "replay",
        "--local",
        "5",
        "--trace",
        &trace,
        "-s",
        "varys",
        "--non-clairvoyant",
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--non-clairvoyant") && err.contains("varys"),
        "{err}"
    );
}

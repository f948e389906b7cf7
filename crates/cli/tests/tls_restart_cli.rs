//! Real coordinator and daemon processes with TLS on both planes, and a daemon process killed
//! and restarted on its data dir.

mod common;
use common::{coflowkit, free_port, Kill};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use coflowkit_runtime::{Client, ClientConfig, CoflowOptions, TlsClient, Token};
use tokio::io::AsyncWriteExt;

fn spawn(args: &[&str], stderr: Stdio) -> Kill {
    Kill(
        Command::new(env!("CARGO_BIN_EXE_coflowkit"))
            .args(args)
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("start coflowkit"),
    )
}

const TOKEN: &str = "process-test-token";

/// A CA and a certificate it signed for localhost and 127.0.0.1, written to `dir`:
/// (ca.pem, cert.pem, key.pem).
fn pki(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&key, &ca_cert, &ca_key)
        .unwrap();
    let paths = (
        dir.join("ca.pem"),
        dir.join("cert.pem"),
        dir.join("key.pem"),
    );
    std::fs::write(&paths.0, ca_cert.pem()).unwrap();
    std::fs::write(&paths.1, cert.pem()).unwrap();
    std::fs::write(&paths.2, key.serialize_pem()).unwrap();
    paths
}

/// Poll `status --json` (with `extra` flags) until `ok` holds for the document.
fn wait_status(caddr: &str, token: &str, extra: &[&str], ok: impl Fn(&serde_json::Value) -> bool) {
    let mut last = String::new();
    for _ in 0..150 {
        let mut args = vec![
            "status",
            "--coordinator",
            caddr,
            "--token-file",
            token,
            "--json",
        ];
        args.extend_from_slice(extra);
        let out = coflowkit(&args);
        last = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            if ok(&doc) {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("status never showed what was expected: {last}");
}

/// A test step that fails instead of hanging.
async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .expect("step did not finish within 60 s")
}

fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn tls_processes_move_data_and_a_plaintext_status_is_refused_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = pki(dir.path());
    let (ca, cert, key) = (
        ca.to_str().unwrap(),
        cert.to_str().unwrap(),
        key.to_str().unwrap(),
    );
    let token = dir.path().join("token");
    std::fs::write(&token, TOKEN).unwrap();
    let tok = token.to_str().unwrap();
    let caddr = format!("127.0.0.1:{}", free_port());
    let daddr = format!("127.0.0.1:{}", free_port());
    let _coord = spawn(
        &[
            "coordinator",
            "--listen",
            &caddr,
            "--token-file",
            tok,
            "--tls-cert",
            cert,
            "--tls-key",
            key,
        ],
        Stdio::null(),
    );
    let _daemon = spawn(
        &[
            "daemon",
            "--coordinator",
            &caddr,
            "--listen",
            &daddr,
            "--nic-rate",
            "200mbit",
            "--token-file",
            tok,
            "--tls-cert",
            cert,
            "--tls-key",
            key,
            "--tls-ca",
            ca,
        ],
        Stdio::null(),
    );
    wait_status(&caddr, tok, &["--tls-ca", ca], |doc| {
        doc["daemons"][0]["connected"] == true
    });

    let out = coflowkit(&["status", "--coordinator", &caddr, "--token-file", tok]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--tls-ca") && err.contains(&caddr), "{err}");

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(bounded(async {
        let tls = TlsClient::from_file(Path::new(ca)).unwrap();
        let cfg = ClientConfig::new(&caddr, &daddr, Token::new(TOKEN).unwrap()).with_tls(tls);
        let client = Client::connect(cfg).await.unwrap();
        let c = client.register(CoflowOptions::flows(1)).await.unwrap();
        let data = bytes(1, 200_000);
        client.put(c, "over-tls", &data).await.unwrap();
        assert_eq!(client.get(c, "over-tls").await.unwrap(), data);
    }));
}

#[test]
fn bad_tls_flags_and_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let (_, cert, _) = pki(dir.path());
    let token = dir.path().join("token");
    std::fs::write(&token, TOKEN).unwrap();
    let tok = token.to_str().unwrap();
    let missing = dir.path().join("no-such-key.pem");
    let out = coflowkit(&[
        "coordinator",
        "--listen",
        "127.0.0.1:0",
        "--token-file",
        tok,
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        missing.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no-such-key.pem"), "{err}");

    let out = coflowkit(&[
        "coordinator",
        "--listen",
        "127.0.0.1:0",
        "--token-file",
        tok,
        "--tls-cert",
        cert.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--tls-key"));

    // A certificate file given as the CA of `status` is fine; a key file is not a certificate.
    let key = dir.path().join("key.pem");
    let out = coflowkit(&[
        "status",
        "--coordinator",
        "127.0.0.1:1",
        "--token-file",
        tok,
        "--tls-ca",
        key.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("key.pem") && err.contains("no PEM certificate"),
        "{err}"
    );
}

#[test]
fn a_killed_daemon_restarted_on_its_data_dir_serves_its_spilled_objects() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let token = dir.path().join("token");
    std::fs::write(&token, TOKEN).unwrap();
    let tok = token.to_str().unwrap();
    let caddr = format!("127.0.0.1:{}", free_port());
    let daddr = format!("127.0.0.1:{}", free_port());
    let _coord = spawn(
        &["coordinator", "--listen", &caddr, "--token-file", tok],
        Stdio::null(),
    );
    let daemon_args = [
        "daemon",
        "--coordinator",
        &caddr,
        "--listen",
        &daddr,
        "--nic-rate",
        "1gbit",
        "--token-file",
        tok,
        "--mem-limit-mib",
        "1",
        "--data-dir",
        data.to_str().unwrap(),
    ];
    let daemon = spawn(&daemon_args, Stdio::null());
    wait_status(&caddr, tok, &[], |doc| {
        doc["daemons"][0]["connected"] == true
    });

    let rt = tokio::runtime::Runtime::new().unwrap();
    let cfg = ClientConfig::new(&caddr, &daddr, Token::new(TOKEN).unwrap());
    let (small, big, cut) = (bytes(2, 1000), bytes(3, 3_000_000), bytes(4, 2_000_000));
    let c = rt.block_on(bounded(async {
        let client = Client::connect(cfg.clone()).await.unwrap();
        // Scheduled at once (no flow-count hint): the gets below run one after another.
        let c = client.register(CoflowOptions::default()).await.unwrap();
        client.put(c, "small", &small).await.unwrap(); // fits in memory
        client.put(c, "big", &big).await.unwrap(); // spills
        client.put(c, "cut", &cut).await.unwrap(); // spills, then gets damaged
        c
    }));
    // A put still streaming in when the daemon dies: spilled (whole, as a `.part` file), never
    // completed, so never acknowledged and not recoverable.
    let open = bytes(5, 1_500_000);
    let writer = rt.block_on(bounded(async {
        let client = Client::connect(cfg.clone()).await.unwrap();
        let mut w = client.writer(c, "open");
        w.write_all(&open).await.unwrap();
        w.flush().await.unwrap();
        w
    }));
    let in_part = || -> u64 {
        let parts = std::fs::read_dir(&data).unwrap().map(|e| e.unwrap().path());
        parts
            .filter(|p| p.extension().is_some_and(|e| e == "part"))
            .map(|p| std::fs::metadata(p).unwrap().len())
            .sum()
    };
    for _ in 0..600 {
        if in_part() >= open.len() as u64 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        in_part(),
        open.len() as u64,
        "the streaming put reached the disk"
    );
    drop(daemon); // SIGKILL
    let e = rt.block_on(bounded(writer.finish())).unwrap_err();
    assert!(e.to_string().contains(&daddr), "{e}");

    // Damage the smaller spill file (`cut`): truncated, as by a full disk.
    let mut spills: Vec<_> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "spill"))
        .collect();
    spills.sort_by_key(|p| std::fs::metadata(p).unwrap().len());
    assert_eq!(spills.len(), 2, "{spills:?}");
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&spills[0])
        .unwrap();
    f.set_len(1_500_000).unwrap();
    drop(f);

    let log = dir.path().join("daemon.log");
    let _daemon = spawn(
        &daemon_args,
        Stdio::from(std::fs::File::create(&log).unwrap()),
    );
    wait_status(&caddr, tok, &[], |doc| {
        doc["daemons"][0]["connected"] == true && doc["daemons"][0]["objects"] == 1
    });
    rt.block_on(bounded(async {
        let client = Client::connect(cfg).await.unwrap();
        assert_eq!(client.get(c, "big").await.unwrap(), big);
        // In memory when the daemon died: gone, with an error rather than wrong bytes.
        assert!(client.get(c, "small").await.is_err());
        assert!(client.get(c, "cut").await.is_err());
        assert!(client.get(c, "open").await.is_err());
        // The unfinished put's id is free on the restarted daemon.
        client.put(c, "open", b"again").await.unwrap();
        assert_eq!(client.get(c, "open").await.unwrap(), b"again");
    }));
    let log = std::fs::read_to_string(&log).unwrap();
    let name = spills[0].file_name().unwrap().to_str().unwrap();
    assert!(
        log.contains(name) && log.contains("set aside") && log.contains("not served"),
        "{log}"
    );
    assert!(spills[0].with_extension("corrupt").exists());
    assert_eq!(
        in_part(),
        0,
        "the unfinished put's file was dropped at the restart"
    );
}

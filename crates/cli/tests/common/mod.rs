//! What the CLI process tests share: running the binary, writing inputs, stopping servers.
#![allow(dead_code)]

pub mod bounded;

use std::path::Path;
use std::process::{Child, Command, Output};

/// The toy trace of the thesis' examples: 4 ports, 3 coflows.
pub const TOY: &str = "4 3\n1 0 2 0 1 1 2:2.0\n2 10 1 1 2 2:1.0 3:1.0\n3 20 1 3 1 0:4.0\n";

/// Run `coflowkit` with `args` to its end.
pub fn coflowkit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coflowkit"))
        .args(args)
        .output()
        .expect("run coflowkit")
}

/// The run succeeded (else fail the test showing its stdout and stderr): its stdout.
pub fn succeeded(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The run failed (else fail the test): its stderr.
pub fn failed(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "succeeded: {stderr}");
    stderr
}

/// Write `text` to `dir/name`; returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// The small inputs many commands take, written to a directory.
pub struct Inputs {
    /// [`TOY`].
    pub toy: String,
    /// A 3-node packet matrix.
    pub matrix: String,
    /// Two tenants' correlation vectors over two links.
    pub vectors: String,
}

/// Write [`Inputs`] to `dir`.
pub fn inputs(dir: &Path) -> Inputs {
    Inputs {
        toy: write(dir, "toy.txt", TOY),
        matrix: write(dir, "m.txt", "nodes 3 packets\n0 4 2\n3 0 5\n1 2 0\n"),
        vectors: write(
            dir,
            "v.json",
            r#"{"tenants": [{"name": "A", "vector": [1, 0.5]}, {"name": "B", "vector": [0.5, 1]}]}"#,
        ),
    }
}

/// A free loopback port (bound and released; good enough for a test).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process killed when the test ends, however it ends.
pub struct Kill(pub Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The child of `cmd` runs with `resource` (`libc::RLIMIT_AS`, `libc::RLIMIT_NOFILE`, ...) at
/// `value`, soft and hard: a regression to a runaway allocation or a descriptor leak ends that
/// child, not the machine. A limit that cannot be set fails the spawn.
pub fn limit(cmd: &mut Command, resource: libc::__rlimit_resource_t, value: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only setrlimit (async-signal-safe) runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            if libc::setrlimit(resource, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

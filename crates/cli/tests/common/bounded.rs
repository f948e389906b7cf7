//! Runs of the binary bounded in time and address space, for the adversarial tests: a
//! regression to a hang fails the test instead of blocking the suite, and one that allocates
//! without bound aborts (a signal, reported as `code: None`) instead of taking the machine.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub struct Ran {
    /// `None`: ended by a signal (an abort).
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub secs: f64,
}

impl Ran {
    pub fn err(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// `coflowkit args` in `dir` under an address space of `gib` GiB, killed (and the test
/// failed) after `limit`; `stdout` is where its standard output goes (None: a pipe).
pub fn run_with(
    dir: &Path,
    args: &[&str],
    gib: u64,
    limit: Duration,
    stdout: Option<Stdio>,
) -> Ran {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_coflowkit"));
    let piped = stdout.is_none();
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout.unwrap_or_else(Stdio::piped))
        .stderr(Stdio::piped())
        .process_group(0);
    super::limit(&mut cmd, libc::RLIMIT_AS, gib << 30);
    let t = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = piped.then(|| child.stdout.take().unwrap());
    let read_err = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut s);
        s
    });
    let read_out = std::thread::spawn(move || {
        let mut s = Vec::new();
        if let Some(mut o) = out {
            let _ = std::io::Read::read_to_end(&mut o, &mut s);
        }
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > limit {
            // SAFETY: the child's own process group (its ranks too).
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            panic!("{args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Ran {
        code: status.code(),
        stdout: read_out.join().unwrap(),
        stderr: read_err.join().unwrap(),
        secs: t.elapsed().as_secs_f64(),
    }
}

pub fn run(dir: &Path, args: &[&str]) -> Ran {
    run_with(dir, args, 4, Duration::from_secs(120), None)
}

/// Exit `code` (1: refused by the command, 2: by the parser), no panic, each of `want` in
/// stderr; the stderr.
pub fn refused(dir: &Path, args: &[&str], code: i32, want: &[&str]) -> String {
    let r = run(dir, args);
    let err = r.err();
    assert_eq!(r.code, Some(code), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    for w in want {
        assert!(err.contains(w), "{args:?}: wanted `{w}` in: {err}");
    }
    err
}

pub fn ok(dir: &Path, args: &[&str]) -> String {
    let r = run(dir, args);
    assert_eq!(r.code, Some(0), "{args:?}: {}", r.err());
    String::from_utf8_lossy(&r.stdout).into_owned()
}

//! Ctrl-C or SIGTERM to a `--local` launcher ends its ranks too: the real binary is started,
//! its rank processes found among its children, the launcher signalled, and no rank may be
//! left running a few seconds later (they used to run on, orphaned, after the launcher's 143).

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Pids whose parent is `parent` (from /proc/*/stat).
fn children(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if stat(pid).is_some_and(|(_, ppid)| ppid == parent) {
            out.push(pid);
        }
    }
    out
}

/// (state, ppid) of `pid`, if it exists.
fn stat(pid: u32) -> Option<(char, u32)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid ...": the command may hold spaces and parentheses.
    let rest = &s[s.rfind(')')? + 2..];
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    Some((state, f.next()?.parse().ok()?))
}

/// Alive: exists and is not a zombie (an orphan reaped late by a lazy init is dead already).
fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|(state, _)| state != 'Z' && state != 'X')
}

/// Start `coflowkit args` (M ranks), wait for its M children, send `sig`, and check that the
/// launcher exits 128 + sig and that none of the ranks outlives it by more than 5 s.
fn signal_ends_every_rank(args: &[&str], ranks: usize, sig: i32) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_coflowkit"));
    cmd.args(args).stdout(Stdio::null()).stderr(Stdio::piped());
    // SAFETY: sigaction/sigemptyset only: a test run from a non-interactive shell's background
    // would hand SIGINT down ignored, and an ignored SIGINT is left alone by design.
    unsafe {
        cmd.pre_exec(|| {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = libc::SIG_DFL;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(libc::SIGINT, &act, std::ptr::null_mut());
            Ok(())
        });
    }
    let mut launcher = cmd.spawn().unwrap();
    let pid = launcher.id();
    let t0 = Instant::now();
    let mut kids = children(pid);
    while kids.len() < ranks {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "{args:?}: {} of {ranks} ranks started",
            kids.len()
        );
        if let Ok(Some(st)) = launcher.try_wait() {
            panic!("{args:?} ended before the signal: {st}");
        }
        std::thread::sleep(Duration::from_millis(20));
        kids = children(pid);
    }
    // Let the ranks get going (rendezvous, first rounds).
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        kids.iter().all(|&k| alive(k)),
        "{args:?}: a rank ended early"
    );
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(pid as i32, sig) };
    let t1 = Instant::now();
    let status = loop {
        if let Some(st) = launcher.try_wait().unwrap() {
            break st;
        }
        if t1.elapsed() > Duration::from_secs(10) {
            let _ = launcher.kill();
            for &k in &kids {
                unsafe { libc::kill(k as i32, libc::SIGKILL) };
            }
            panic!("{args:?}: the launcher did not end within 10 s of signal {sig}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let t2 = Instant::now();
    while kids.iter().any(|&k| alive(k)) && t2.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<u32> = kids.iter().copied().filter(|&k| alive(k)).collect();
    for &k in &left {
        unsafe { libc::kill(k as i32, libc::SIGKILL) };
    }
    assert!(
        left.is_empty(),
        "{args:?}: ranks {left:?} still running 5 s after the launcher got signal {sig} ({status})"
    );
    assert_eq!(status.code(), Some(128 + sig), "{args:?}: {status}");
    let mut err = String::new();
    std::io::Read::read_to_string(launcher.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(err.contains("all ranks stopped"), "{args:?}: {err}");
}

#[test]
fn sigterm_to_shuffle_run_local_ends_its_ranks() {
    let args = ["shuffle", "run", "--local", "3", "--repeat", "1000"];
    signal_ends_every_rank(&args, 3, libc::SIGTERM);
}

#[test]
fn sigint_to_shuffle_run_local_ends_its_ranks() {
    let args = ["shuffle", "run", "--local", "3", "--repeat", "1000"];
    signal_ends_every_rank(&args, 3, libc::SIGINT);
}

#[test]
fn sigterm_to_collective_bench_local_ends_its_ranks() {
    let args = ["collective", "bench", "--local", "3", "--iters", "100000"];
    signal_ends_every_rank(&args, 3, libc::SIGTERM);
}

#[test]
fn sigterm_to_millisort_local_ends_its_ranks() {
    let args = ["millisort", "--local", "3", "--runs", "1000"];
    signal_ends_every_rank(&args, 3, libc::SIGTERM);
}

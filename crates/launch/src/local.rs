//! `--local M`: M copies of a command on this host, told their rank, the size and where rank 0
//! waits by `COFLOWKIT_*` variables. The launcher waits for all; the first that fails stops the
//! rest and is named in the error; SIGINT, SIGTERM or SIGHUP to the launcher stops them all
//! too (see [`crate::interrupt`]).

use std::net::{Ipv4Addr, TcpListener};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::error::io;
use crate::interrupt::{die_with_parent, Interrupts};
use crate::LaunchError;

/// The variables a local child gets (`COFLOWKIT_SECRET` when the job has one).
pub fn child_env(
    rank: u32,
    size: u32,
    rendezvous: &str,
    session: u32,
    secret: Option<&str>,
) -> Vec<(String, String)> {
    let mut v = vec![
        ("COFLOWKIT_RANK".into(), rank.to_string()),
        ("COFLOWKIT_SIZE".into(), size.to_string()),
        ("COFLOWKIT_RENDEZVOUS".into(), rendezvous.into()),
        ("COFLOWKIT_SESSION".into(), session.to_string()),
    ];
    if let Some(s) = secret {
        v.push(("COFLOWKIT_SECRET".into(), s.into()));
    }
    v
}

/// The secret a launcher hands its ranks: a fresh random one per job, or none when its own
/// environment says `COFLOWKIT_INSECURE=1` (unauthenticated datagrams, explicitly).
pub fn launcher_secret() -> Result<Option<String>, LaunchError> {
    if std::env::var("COFLOWKIT_INSECURE").is_ok_and(|v| v.trim() == "1") {
        return Ok(None);
    }
    crate::Secret::generate().map(Some)
}

/// True in a process started by `run_local` (or anything else that set `COFLOWKIT_RANK`): the
/// CLI then runs as that rank instead of launching again.
pub fn is_launched() -> bool {
    std::env::var_os("COFLOWKIT_RANK").is_some()
}

/// This executable with these arguments (what `--local` re-runs).
pub fn self_command(args: &[std::ffi::OsString]) -> Result<Command, LaunchError> {
    let exe = std::env::current_exe().map_err(io("the current executable"))?;
    let mut c = Command::new(exe);
    c.args(args);
    Ok(c)
}

/// A free TCP port on 127.0.0.1 for rank 0's rendezvous. (Released before rank 0 binds it:
/// another process could take it in between, which then shows as rank 0 failing to listen.)
pub fn free_loopback_port() -> Result<u16, LaunchError> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(io("probe listener"))?;
    Ok(l.local_addr().map_err(io("probe listener"))?.port())
}

/// Start ranks `0..size`, `command(rank)` each (the caller adds the variables of `child_env`,
/// or wraps the command, e.g. in `ip netns exec`), and wait for all of them. If one fails, or
/// `timeout` passes, the others are killed and the error names the rank(s). A SIGINT, SIGTERM
/// or SIGHUP meanwhile kills and reaps every rank and ends in [`LaunchError::Interrupted`].
pub fn run_ranks(
    size: u32,
    timeout: Option<Duration>,
    mut command: impl FnMut(u32) -> Result<Command, LaunchError>,
) -> Result<(), LaunchError> {
    let start = Instant::now();
    let interrupts = Interrupts::install();
    let mut children: Vec<(u32, Child)> = Vec::new();
    for rank in 0..size {
        let spawned = command(rank).and_then(|mut c| {
            die_with_parent(&mut c);
            c.spawn()
                .map_err(io(format!("starting rank {rank} ({:?})", c.get_program())))
        });
        match spawned {
            Ok(child) => children.push((rank, child)),
            Err(e) => {
                stop_all(&mut children);
                return Err(e);
            }
        }
    }
    let mut running: Vec<(u32, Child)> = children;
    loop {
        let mut i = 0;
        while i < running.len() {
            let (rank, child) = &mut running[i];
            match child.try_wait() {
                Ok(None) => i += 1,
                Ok(Some(st)) if st.success() => {
                    running.swap_remove(i);
                }
                Ok(Some(st)) => {
                    let rank = *rank;
                    running.swap_remove(i);
                    stop_all(&mut running);
                    return Err(LaunchError::RankFailed {
                        rank,
                        size,
                        status: st.to_string(),
                    });
                }
                Err(e) => {
                    let rank = *rank;
                    stop_all(&mut running);
                    return Err(io(format!("waiting for rank {rank}"))(e));
                }
            }
        }
        if running.is_empty() {
            return Ok(());
        }
        if let Some(signal) = interrupts.caught() {
            stop_all(&mut running);
            return Err(LaunchError::Interrupted { signal });
        }
        if let Some(t) = timeout {
            if start.elapsed() >= t {
                let mut ranks: Vec<u32> = running.iter().map(|(r, _)| *r).collect();
                ranks.sort();
                stop_all(&mut running);
                return Err(LaunchError::LocalTimeout {
                    running: ranks,
                    waited_s: t.as_secs_f64(),
                });
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn stop_all(children: &mut Vec<(u32, Child)>) {
    for (_, c) in children.iter_mut() {
        let _ = c.kill();
    }
    for (_, c) in children.iter_mut() {
        let _ = c.wait();
    }
    children.clear();
}

/// `--local M` on loopback: M copies of `command(rank)` with the `child_env` variables, rank 0
/// listening on a free loopback port.
pub fn run_local(
    size: u32,
    session: u32,
    timeout: Option<Duration>,
    mut command: impl FnMut(u32) -> Result<Command, LaunchError>,
) -> Result<(), LaunchError> {
    if size == 0 {
        return Err(LaunchError::Bad("--local needs at least 1 rank".into()));
    }
    let at = format!("127.0.0.1:{}", free_loopback_port()?);
    let secret = launcher_secret()?;
    run_ranks(size, timeout, |rank| {
        let mut c = command(rank)?;
        c.envs(child_env(rank, size, &at, session, secret.as_deref()));
        Ok(c)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Result<Command, LaunchError> {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        Ok(c)
    }

    #[test]
    fn every_rank_sees_its_variables() {
        run_local(5, 42, Some(Duration::from_secs(30)), |_| {
            sh(r#"test "$COFLOWKIT_SIZE" = 5 && test "$COFLOWKIT_RANK" -lt 5 && test "$COFLOWKIT_SESSION" = 42 && case "$COFLOWKIT_RENDEZVOUS" in 127.0.0.1:*) ;; *) exit 9;; esac"#)
        })
        .unwrap();
    }

    #[test]
    fn a_failing_rank_is_named_and_the_others_are_stopped() {
        let t0 = Instant::now();
        let e = run_local(4, 1, Some(Duration::from_secs(60)), |_| {
            sh(r#"if [ "$COFLOWKIT_RANK" = 2 ]; then exit 3; fi; sleep 30"#)
        })
        .unwrap_err();
        assert!(
            matches!(&e, LaunchError::RankFailed { rank: 2, size: 4, status } if status.contains('3')),
            "{e}"
        );
        // The sleepers were killed rather than waited for.
        assert!(t0.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn a_hung_rank_ends_in_a_timeout_naming_it() {
        let e = run_local(3, 1, Some(Duration::from_millis(500)), |_| {
            sh(r#"if [ "$COFLOWKIT_RANK" = 1 ]; then sleep 30; fi"#)
        })
        .unwrap_err();
        assert!(
            matches!(&e, LaunchError::LocalTimeout { running, .. } if running == &vec![1]),
            "{e}"
        );
    }

    #[test]
    fn a_command_that_cannot_start_says_which_rank() {
        let e = run_local(2, 1, None, |_| Ok(Command::new("/nonexistent/coflowkit"))).unwrap_err();
        assert!(e.to_string().contains("rank 0"), "{e}");
    }
}

//! Entering one host's namespace: a thread (`setns`) or a new process (`setns` between fork and
//! exec). A socket belongs to the namespace of the thread that creates it, and a new thread
//! starts in the namespace of the thread that spawns it.

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::Arc;

use crate::error::{NetnsError, Result};

/// An open handle on a named network namespace (`/run/netns/<name>`), cheap to clone; the
/// namespace stays valid while a handle is open.
#[derive(Debug, Clone)]
pub struct HostNs {
    name: String,
    file: Arc<File>,
}

impl HostNs {
    /// Open the namespace made by `ip netns add <name>`.
    pub fn open(name: &str) -> Result<HostNs> {
        let file =
            File::open(format!("/run/netns/{name}")).map_err(|source| NetnsError::Enter {
                namespace: name.to_string(),
                source,
            })?;
        Ok(HostNs {
            name: name.to_string(),
            file: Arc::new(file),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Move the calling thread into the namespace (for good: use a thread of its own, or a
    /// runtime's thread-start hook).
    pub fn enter(&self) -> Result<()> {
        // SAFETY: setns takes a file descriptor we own (kept open by `file`) and a flag; it
        // changes only the calling thread's network namespace.
        let rc = unsafe { libc::setns(self.file.as_raw_fd(), libc::CLONE_NEWNET) };
        if rc != 0 {
            return Err(NetnsError::Enter {
                namespace: self.name.clone(),
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(())
    }

    /// Run `f` on a new thread inside the namespace and wait for it (a panic in `f` goes on in
    /// the caller).
    pub fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> Result<T> {
        std::thread::scope(|s| {
            s.spawn(|| {
                self.enter()?;
                Ok(f())
            })
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
        })
    }

    /// A command whose process starts inside the namespace: the child calls `setns` before
    /// `exec`, so unlike `ip netns exec` nothing else (mounts, `/etc/netns`) changes.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = Command::new(program);
        let file = self.file.clone();
        // SAFETY: the closure runs in the child between fork and exec and makes one system
        // call (async-signal-safe), on a descriptor the parent keeps open for the call.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd
    }
}

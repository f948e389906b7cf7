//! The async runtime of the commands that serve or talk to servers, made where it can fail.
//!
//! Tokio's runtime takes five descriptors (epoll and its clone, its waker, the signal driver's
//! socket pair) and panics inside when the signal pair cannot be made ("failed to create
//! UnixStream"). Taking six first (one for the command's first socket) and giving them back turns
//! a descriptor limit too low for it into an error.

use anyhow::{anyhow, Result};

/// A multi-threaded runtime, or an error naming the descriptor limit.
pub fn new() -> Result<tokio::runtime::Runtime> {
    reserve()?;
    Ok(tokio::runtime::Runtime::new()?)
}

/// For commands whose runtimes are built elsewhere (`broadcast` and `transfers`, in the
/// orchestra and runtime crates, `hug distribute`): checks the descriptors as [`new`] does, then
/// builds and drops a small runtime. That makes tokio's signal pipe, which it makes once per
/// process and panics without; the runtimes built after it return an error when descriptors
/// run out, and the command reports it.
pub fn reserve() -> Result<()> {
    let probe = (0..3)
        .map(|_| std::os::unix::net::UnixStream::pair())
        .collect::<std::io::Result<Vec<_>>>();
    if let Err(e) = probe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into a struct we own.
        let limit = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
            format!("{}", lim.rlim_cur)
        } else {
            "unknown".into()
        };
        return Err(anyhow!(
            "too few file descriptors to start: the async runtime needs 6 free and the \
             descriptor limit (ulimit -n) is {limit}: {e}"
        ));
    }
    drop(probe);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow!("starting the async runtime: {e}"))?;
    Ok(())
}

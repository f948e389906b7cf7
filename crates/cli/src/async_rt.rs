//! The async runtime of the commands that serve or talk to servers, made where it can fail.
//!
//! Tokio's runtime takes five descriptors (epoll and its clone, its waker, the signal driver's
//! socket pair) and panics inside when the signal pair cannot be made ("failed to create
//! UnixStream"). Taking six first (one for the command's first socket) and giving them back turns
//! a descriptor limit too low for it into an error.

use anyhow::{anyhow, Result};

/// A multi-threaded runtime, or an error naming the descriptor limit.
pub fn new() -> Result<tokio::runtime::Runtime> {
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
    Ok(tokio::runtime::Runtime::new()?)
}

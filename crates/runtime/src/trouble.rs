//! The last connection trouble of this process's servers and daemons (a failed accept, a daemon
//! that cannot reach its coordinator), for an error that ends a wait on them: `replay --local`
//! said `only some of the 2 daemons connected` while the cause (EMFILE) was only in a warning.

use std::sync::Mutex;
use std::time::Instant;

static LAST: Mutex<Option<(String, Instant)>> = Mutex::new(None);

/// Records `what` as the latest trouble (also logged by the caller).
pub(crate) fn note(what: String) {
    if let Ok(mut l) = LAST.lock() {
        *l = Some((what, Instant::now()));
    }
}

/// The latest trouble noted since `since`, if any.
pub(crate) fn since(since: Instant) -> Option<String> {
    let l = LAST.lock().ok()?;
    l.as_ref()
        .filter(|(_, at)| *at >= since)
        .map(|(w, _)| w.clone())
}

/// This process's open descriptors and its limit (`ulimit -n`), when both are known.
pub(crate) fn descriptors() -> Option<(usize, u64)> {
    let open = std::fs::read_dir("/proc/self/fd").ok()?.count();
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into a struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return None;
    }
    Some((open, lim.rlim_cur))
}

/// What an error that ends a wait on connections should add: the latest trouble since `start`
/// and, when the descriptors are (nearly) all taken, that fact.
pub(crate) fn explain(start: Instant) -> String {
    let mut s = String::new();
    if let Some(t) = since(start) {
        s.push_str("; the last connection error: ");
        s.push_str(&coflowkit_model::echo::echo(&t));
    }
    if let Some((open, limit)) = descriptors() {
        if open as u64 + 8 >= limit {
            s.push_str(&format!(
                "; this process has {open} files open of its descriptor limit (ulimit -n) of \
                 {limit}: raise the limit"
            ));
        }
    }
    s
}

/// `e` with [`explain`]`(start)` when that says anything (once: an explained error is kept).
pub(crate) fn explained(e: crate::Error, start: Instant) -> crate::Error {
    if matches!(e, crate::Error::Explained { .. }) {
        return e;
    }
    let why = explain(start);
    if why.is_empty() {
        e
    } else {
        crate::Error::Explained {
            error: Box::new(e),
            why,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trouble_since_a_start_is_explained() {
        let start = Instant::now();
        note("accept: Too many open files (os error 24)".into());
        let e = explain(start);
        assert!(
            e.contains("the last connection error: accept: Too many open files"),
            "{e}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert!(!explain(Instant::now()).contains("connection error"));
    }
}

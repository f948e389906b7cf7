//! The last connection trouble of this process's servers and daemons (a failed accept, a daemon
//! that cannot reach its coordinator), for an error that ends a wait on them: `replay --local`
//! said `only some of the 2 daemons connected` while the cause (EMFILE) was only in a warning.

use std::sync::Mutex;
use std::time::Instant;

/// The latest trouble, and the latest that was a shortage of descriptors: a shortage is the
/// usual root cause and is often followed by a vaguer error (a daemon's `transport error`)
/// that must not hide it.
struct Last {
    any: Option<(String, Instant)>,
    descriptors: Option<(String, Instant)>,
}

static LAST: Mutex<Last> = Mutex::new(Last {
    any: None,
    descriptors: None,
});

/// Whether `what` says the process or system ran out of descriptors (EMFILE, ENFILE).
fn is_descriptor_shortage(what: &str) -> bool {
    what.contains("os error 24") || what.contains("os error 23")
}

/// Records `what` as the latest trouble (also logged by the caller).
pub(crate) fn note(what: String) {
    if let Ok(mut l) = LAST.lock() {
        let now = Instant::now();
        if is_descriptor_shortage(&what) {
            l.descriptors = Some((what.clone(), now));
        }
        l.any = Some((what, now));
    }
}

/// The latest trouble noted since `since`, and the latest shortage of descriptors since then
/// when that is not the latest trouble itself.
fn since(since: Instant) -> (Option<String>, Option<String>) {
    let Ok(l) = LAST.lock() else {
        return (None, None);
    };
    let fresh = |t: &Option<(String, Instant)>| {
        t.as_ref()
            .filter(|(_, at)| *at >= since)
            .map(|(w, _)| w.clone())
    };
    let any = fresh(&l.any);
    let descriptors = fresh(&l.descriptors).filter(|d| Some(d) != any.as_ref());
    (any, descriptors)
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
    let (last, shortage) = since(start);
    if let Some(t) = last {
        s.push_str("; the last connection error: ");
        s.push_str(&coflowkit_model::echo::echo(&t));
    }
    if let Some(t) = shortage {
        s.push_str("; before it, out of descriptors: ");
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
        // A vaguer error after the shortage does not hide it.
        note("daemon: coordinator 127.0.0.1:1: transport error".into());
        let e = explain(start);
        assert!(
            e.contains("the last connection error: daemon: coordinator 127.0.0.1:1")
                && e.contains("before it, out of descriptors: accept: Too many open files"),
            "{e}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert!(!explain(Instant::now()).contains("connection error"));
    }
}

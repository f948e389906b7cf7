//! Ctrl-C and SIGTERM while ranks run: the launcher must not die and leave them behind. While
//! an [`Interrupts`] guard lives, SIGINT, SIGTERM and SIGHUP only record their number (the
//! launcher's wait loop polls it, stops every rank and says which signal ended the run); the
//! dispositions before it come back when the guard drops. The ranks also get SIGKILL should
//! the launcher itself be killed outright ([`die_with_parent`]).

use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

/// The last signal caught (0 = none). One per process, as the dispositions are.
static CAUGHT: AtomicI32 = AtomicI32::new(0);

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn record(sig: libc::c_int) {
    // Async-signal-safe: one atomic store.
    CAUGHT.store(sig, Ordering::SeqCst);
}

/// Guards alive, and the dispositions the first one replaced (restored when the last drops):
/// launchers running at once in one process (tests) share the handlers.
static INSTALLED: Mutex<(usize, Vec<(libc::c_int, libc::sigaction)>)> = Mutex::new((0, Vec::new()));

/// The handlers, in place from [`Interrupts::install`] until the last guard is dropped.
pub struct Interrupts(());

impl Interrupts {
    /// Catch SIGINT, SIGTERM and SIGHUP, except those ignored now (a command started with
    /// `nohup` or in the background of a non-interactive shell keeps ignoring them).
    pub fn install() -> Interrupts {
        let mut installed = INSTALLED.lock().unwrap_or_else(|p| p.into_inner());
        installed.0 += 1;
        if installed.0 > 1 {
            return Interrupts(());
        }
        CAUGHT.store(0, Ordering::SeqCst);
        let old = &mut installed.1;
        for sig in SIGNALS {
            // SAFETY: plain sigaction calls with zeroed (valid) structures; the handler only
            // stores to an atomic.
            unsafe {
                let mut before: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut before) != 0
                    || before.sa_sigaction == libc::SIG_IGN
                {
                    continue;
                }
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = record as extern "C" fn(libc::c_int) as libc::sighandler_t;
                act.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut act.sa_mask);
                if libc::sigaction(sig, &act, std::ptr::null_mut()) == 0 {
                    old.push((sig, before));
                }
            }
        }
        Interrupts(())
    }

    /// The signal caught since [`Interrupts::install`], if any.
    pub fn caught(&self) -> Option<i32> {
        match CAUGHT.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }
}

impl Drop for Interrupts {
    fn drop(&mut self) {
        let mut installed = INSTALLED.lock().unwrap_or_else(|p| p.into_inner());
        installed.0 -= 1;
        if installed.0 > 0 {
            return;
        }
        for (sig, before) in installed.1.drain(..) {
            // SAFETY: restores the disposition read in `install`.
            unsafe {
                libc::sigaction(sig, &before, std::ptr::null_mut());
            }
        }
    }
}

/// The child gets SIGKILL when the thread that starts it ends (Linux `PR_SET_PDEATHSIG`): a
/// launcher killed by SIGKILL, which no handler sees, takes its ranks with it.
pub fn die_with_parent(c: &mut Command) {
    // SAFETY: prctl is async-signal-safe, the closure allocates nothing.
    unsafe {
        c.pre_exec(|| {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            );
            Ok(())
        });
    }
}

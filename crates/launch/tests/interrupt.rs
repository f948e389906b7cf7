//! The launcher's signal guard, in a process of its own (a signal raised here would reach
//! every launcher running in the same process).

use coflowkit_launch::interrupt::Interrupts;

/// A signal sent to ourselves is recorded, not fatal; guards nest; the disposition from before
/// returns when the last one drops.
#[test]
fn a_signal_is_recorded_while_installed() {
    let i = Interrupts::install();
    let j = Interrupts::install();
    assert_eq!(i.caught(), None);
    // SAFETY: raising a signal whose handler is ours.
    unsafe { libc::raise(libc::SIGTERM) };
    assert_eq!(i.caught(), Some(libc::SIGTERM));
    drop(j);
    assert_eq!(i.caught(), Some(libc::SIGTERM), "still caught");
    let disposition = || {
        // SAFETY: reads the current disposition into a zeroed structure.
        unsafe {
            let mut now: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGTERM, std::ptr::null(), &mut now);
            now.sa_sigaction
        }
    };
    assert_ne!(disposition(), libc::SIG_DFL, "one guard still alive");
    drop(i);
    assert_eq!(disposition(), libc::SIG_DFL);
}

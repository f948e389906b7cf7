//! Blocking work (a decision round) run off the runtime's worker threads.

/// Run `f`, which blocks, without holding up the runtime's other tasks (on a multi-threaded
/// runtime another thread takes this worker's tasks meanwhile), then yield once.
///
/// Why the yield: `replay --local` ends its in-process coordinator with `shutdown_background`.
/// If that happens while `f` runs inside `block_in_place`, the task goes on, on this thread,
/// with no worker and with the runtime's timer driver already shut down; the next timer it
/// polls (the decision loop's `sleep_until`) panics with "A Tokio 1.x context was found, but
/// it is being shutdown". Yielding hands the task back to the scheduler first, which drops
/// it at shutdown and otherwise runs it again at once.
pub(super) async fn off_worker<T>(f: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let out = match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    };
    tokio::task::yield_now().await;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{mpsc, Arc};
    use std::time::Duration;

    /// The end of `replay --local`, made deterministic: the runtime is shut down while a
    /// round runs; the round then ends and the loop would wait on its timer. Before the
    /// yield, every run went on to the timer and panicked in it (tokio's `entry.rs:534`, the
    /// panic `replay --local` printed), caught by the runtime, so the test counts how far the
    /// task got.
    #[test]
    fn a_round_that_outlives_its_runtime_never_touches_a_timer() {
        for _ in 0..5 {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            let rounds = Arc::new(AtomicUsize::new(0));
            let (in_round, started) = mpsc::channel();
            let (release, released) = mpsc::channel::<()>();
            let n = rounds.clone();
            rt.spawn(async move {
                off_worker(move || {
                    let _ = in_round.send(());
                    let _ = released.recv();
                })
                .await;
                n.fetch_add(1, Ordering::SeqCst);
                // What the decision loop does next.
                tokio::time::sleep(Duration::from_millis(1)).await;
            });
            started.recv().unwrap();
            rt.shutdown_background();
            // Let the workers finish shutting down (the timer driver with them).
            std::thread::sleep(Duration::from_millis(50));
            release.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(100));
            assert_eq!(
                rounds.load(Ordering::SeqCst),
                0,
                "the task went on past its round to a timer of a runtime shut down"
            );
        }
    }

    /// While the runtime lives, the round's result comes back and the task goes on.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_round_returns_its_result_on_a_live_runtime() {
        let v = off_worker(|| 6 * 7).await;
        assert_eq!(v, 42);
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

//! Blocking on the server's runtime from a Python thread, the one safe way: GIL released,
//! bounded (so the caller can check signals between slices), and never panicking into Python.

use pyo3::prelude::*;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::time::Duration;
use tokio::runtime::Handle;

/// How often a blocking wait wakes up to let Python handle signals (Ctrl-C, SIGTERM).
pub const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// The outcome of one bounded wait.
pub enum Waited<T> {
    /// The future finished.
    Done(T),
    /// The time slice ran out first.
    TimedOut,
    /// The runtime is shut down (a concurrent `stop()`): nothing more will happen.
    Stopped,
}

/// Runs `fut` on `handle` for at most `limit` with the GIL released.
pub fn wait_detached<F>(
    py: Python<'_>,
    handle: &Handle,
    limit: Duration,
    fut: F,
) -> Waited<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    py.detach(|| {
        // A runtime shut down by a concurrent stop() makes tokio panic on timers: contain it.
        let run = std::panic::catch_unwind(AssertUnwindSafe(|| {
            handle.block_on(async { tokio::time::timeout(limit, fut).await })
        }));
        match run {
            Ok(Ok(out)) => Waited::Done(out),
            Ok(Err(_elapsed)) => Waited::TimedOut,
            Err(_panic) => Waited::Stopped,
        }
    })
}

/// The instant `seconds` from now: negative or NaN counts as now, and anything too large to
/// represent (up to infinity) as a deadline a century away, so a Python timeout never panics.
pub fn deadline_after(seconds: f64) -> std::time::Instant {
    let now = std::time::Instant::now();
    let wait = Duration::try_from_secs_f64(seconds.max(0.0))
        .unwrap_or(Duration::from_secs(100 * 365 * 24 * 3600));
    now.checked_add(wait)
        .unwrap_or(now + Duration::from_secs(365 * 24 * 3600))
}

//! Blocking on the server's runtime from a Python thread, the one safe way: GIL released,
//! bounded (so the caller can check signals between slices), and never panicking into Python.

use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;

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

/// Runs `fut` on `handle` for at most `limit` with the GIL released (on a handler's runner,
/// counted as waiting: [`super::runners::while_waiting`]).
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
    // A sync handler waiting here (`ctx.ask`) lets the calls queued behind it have a runner.
    py.detach(|| {
        super::runners::while_waiting(|| {
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
    })
}

/// Waits for `fut` until `deadline` (`None`: until it finishes), GIL released, in slices of
/// [`SIGNAL_POLL`] so Python signal handlers run in between; their exception is the `Err`.
/// `TimedOut` means the deadline passed.
pub fn wait_interruptibly<F>(
    py: Python<'_>,
    handle: &Handle,
    deadline: Option<Instant>,
    fut: F,
) -> PyResult<Waited<F::Output>>
where
    F: Future + Send,
    F::Output: Send,
{
    let mut fut = std::pin::pin!(fut);
    loop {
        let slice = deadline.map_or(SIGNAL_POLL, |d| {
            d.saturating_duration_since(Instant::now()).min(SIGNAL_POLL)
        });
        match wait_detached(py, handle, slice, fut.as_mut()) {
            Waited::TimedOut => {}
            ended => return Ok(ended),
        }
        py.check_signals()?;
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(Waited::TimedOut);
        }
    }
}

/// The instant `seconds` from now: negative or NaN counts as now, and anything too large to
/// represent (up to infinity) as a deadline a century away, so a Python timeout never panics.
pub fn deadline_after(seconds: f64) -> Instant {
    let now = Instant::now();
    let wait = Duration::try_from_secs_f64(seconds.max(0.0))
        .unwrap_or(Duration::from_secs(100 * 365 * 24 * 3600));
    now.checked_add(wait)
        .unwrap_or(now + Duration::from_secs(365 * 24 * 3600))
}

/// Runs `work` as a task on `handle` and waits for its output, GIL released and interruptible
/// (as [`wait_interruptibly`]), until `deadline`: the one way a Python-called method blocks on
/// work of its own. When a signal handler raises or the deadline passes, the task is stopped:
/// with `drain`, its token is cancelled and the task gets that long to finish cleanly (a server
/// flushing its streams); after that, or without `drain`, it is aborted.
pub fn run_interruptibly<F>(
    py: Python<'_>,
    handle: &Handle,
    deadline: Option<Instant>,
    drain: Option<(&CancellationToken, Duration)>,
    work: F,
) -> PyResult<Waited<F::Output>>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let mut task = handle.spawn(work);
    let waited = wait_interruptibly(py, handle, deadline, &mut task);
    let finished = match &waited {
        Ok(Waited::Done(_)) => true,
        Ok(Waited::Stopped) => return Ok(Waited::Stopped),
        Ok(Waited::TimedOut) | Err(_) => false,
    };
    if !finished {
        if let Some((token, grace)) = drain {
            token.cancel();
            let _ = wait_detached(py, handle, grace, &mut task);
        }
        task.abort();
    }
    Ok(match waited? {
        Waited::Done(Ok(out)) => Waited::Done(out),
        // The task panicked or the runtime shut down under it.
        Waited::Done(Err(_)) | Waited::Stopped => Waited::Stopped,
        Waited::TimedOut => Waited::TimedOut,
    })
}

/// [`crate::lock`] for a lock that another thread may hold while detached from Python (across a
/// wait): this one waits for it detached too, so the two cannot deadlock on the GIL.
pub fn lock_attached<'a, T>(py: Python<'_>, m: &'a Mutex<T>) -> MutexGuard<'a, T> {
    m.lock_py_attached(py).unwrap_or_else(|e| e.into_inner())
}

//! The calls of `async def` handlers, on their way to the package's event-loop thread: queued
//! here without the GIL, and started there in batches, one wake-up of the loop per batch.
//!
//! Why: a call used to hop from a tokio worker to a blocking-pool thread (to call the invoker)
//! and from there to the loop thread (`call_soon_threadsafe`), the GIL changing hands at each
//! hop, per call. Now the first call of a batch wakes the loop once, and every call queued until
//! the loop runs its [`LoopDrain`] is started by that one drain, on the loop thread, where the
//! invoker creates the task directly. The wake-up: on Unix, a byte on a socket the loop watches
//! (`loop.add_reader`), written by the tokio worker without the GIL; until the loop watches it
//! (and where it cannot: Windows' proactor loop), a runner borrowed to call
//! `schedule(drain)` (`loop.call_soon_threadsafe`). The socket over the runner: 1.09x the
//! requests/s of an `async def` echo (same-run A/B, 6 rounds of 2 s, 16 connections: 21,608 →
//! 23,354 median).

use super::super::runners::{Job, Runners};
use pyo3::prelude::*;
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

/// A server's queue of calls for the event-loop thread.
pub struct LoopQueue {
    /// The calls and the wake-up socket, shared with the [`LoopDrain`] the loop runs.
    shared: Arc<Shared>,
    /// Where a runner is borrowed to schedule a drain (calling Python needs a thread attached
    /// to it, and a worker thread must never wait for the GIL).
    runners: Runners,
    /// `schedule(drain)`: makes the loop thread call `drain()` (`loop.call_soon_threadsafe`);
    /// set by the package once it made its server.
    schedule: Mutex<Option<Arc<Py<PyAny>>>>,
}

/// What the queue shares with its drain.
struct Shared {
    /// The calls and how the loop is woken.
    queued: Mutex<Queued>,
    /// The socket pair of the wake-up: a byte written to the first makes the second readable
    /// for the loop (none if the pair could not be made: a runner wakes the loop then).
    #[cfg(unix)]
    wake: Option<(
        std::os::unix::net::UnixStream,
        std::os::unix::net::UnixStream,
    )>,
}

/// The queued calls and whether a drain is on its way.
#[derive(Default)]
struct Queued {
    /// Calls not started yet, oldest first.
    calls: VecDeque<Job>,
    /// A drain is scheduled and has not taken the calls yet: the next call needs no wake-up.
    scheduled: bool,
    /// The loop watches the wake-up socket (the package said so, [`LoopDrain::watched`]).
    watched: bool,
}

impl Shared {
    fn new() -> Self {
        Self {
            queued: Mutex::default(),
            #[cfg(unix)]
            wake: std::os::unix::net::UnixStream::pair()
                .and_then(|(tx, rx)| {
                    tx.set_nonblocking(true)?;
                    rx.set_nonblocking(true)?;
                    Ok((tx, rx))
                })
                .ok(),
        }
    }

    /// Wakes the loop through the socket; false when that cannot be done.
    fn wake_by_socket(&self) -> bool {
        #[cfg(unix)]
        if let Some((tx, _)) = &self.wake {
            use std::io::Write;
            // A full socket (WouldBlock) has bytes the loop has yet to read: it is awake.
            return match (&*tx).write(&[1]) {
                Ok(_) => true,
                Err(e) => e.kind() == std::io::ErrorKind::WouldBlock,
            };
        }
        false
    }

    /// Reads what woke the loop, so the socket is quiet until the next wake-up.
    fn quieten(&self) {
        #[cfg(unix)]
        if let Some((_, rx)) = &self.wake {
            use std::io::Read;
            let mut buf = [0u8; 256];
            while matches!((&*rx).read(&mut buf), Ok(n) if n > 0) {}
        }
    }
}

impl LoopQueue {
    /// An empty queue that schedules its drains from `runners` until the loop watches its
    /// socket.
    pub fn new(runners: Runners) -> Self {
        Self {
            shared: Arc::new(Shared::new()),
            runners,
            schedule: Mutex::new(None),
        }
    }

    /// Sets `schedule(drain)`.
    pub fn set_schedule(&self, schedule: Py<PyAny>) {
        *crate::lock::lock(&self.schedule) = Some(Arc::new(schedule));
    }

    /// Drops the calls not started yet (the server is stopping: their requests end unanswered)
    /// and the way to the loop.
    pub fn stop(&self) {
        let calls = std::mem::take(&mut crate::lock::lock(&self.shared.queued).calls);
        let schedule = crate::lock::lock(&self.schedule).take();
        drop((calls, schedule)); // outside the locks
    }

    /// Queues `call` for the loop thread; the first of a batch wakes the loop.
    pub fn submit(&self, call: Job) {
        let (wake, watched) = {
            let mut queued = crate::lock::lock(&self.shared.queued);
            queued.calls.push_back(call);
            (
                !std::mem::replace(&mut queued.scheduled, true),
                queued.watched,
            )
        };
        if !wake || (watched && self.shared.wake_by_socket()) {
            return;
        }
        let schedule = crate::lock::lock(&self.schedule).clone();
        let drain = LoopDrain {
            shared: self.shared.clone(),
        };
        self.runners.submit(Box::new(move |py| {
            // Without a loop to reach (none set, or it is closed), the calls start on this
            // runner: the invoker then hands the task to the loop itself, or fails the call.
            let scheduled = schedule.is_some_and(|schedule| {
                Py::new(py, drain.clone())
                    .and_then(|d| schedule.call1(py, (d,)))
                    .is_ok()
            });
            if !scheduled {
                drain.run(py);
            }
        }));
    }
}

/// Starts every queued call, on the thread that calls it (the event loop's).
#[pyclass(frozen, module = "everything_mcp._core")]
#[derive(Clone)]
pub struct LoopDrain {
    /// The server's queue.
    shared: Arc<Shared>,
}

impl LoopDrain {
    fn run(&self, py: Python<'_>) {
        // Before `scheduled` is reset: a byte written after that is for a call this drain may
        // not take, and must stay to wake the loop again (read afterwards, it was lost, and
        // with it every call queued behind it).
        self.shared.quieten();
        let calls = {
            let mut queued = crate::lock::lock(&self.shared.queued);
            queued.scheduled = false;
            std::mem::take(&mut queued.calls)
        };
        for call in calls {
            // A panic drops that call's reply (its request ends unanswered), not the others.
            let _ = std::panic::catch_unwind(AssertUnwindSafe(|| call(py)));
        }
    }
}

#[pymethods]
impl LoopDrain {
    /// Starts the calls queued so far.
    fn __call__(&self, py: Python<'_>) {
        self.run(py);
    }

    /// The descriptor the loop watches (`loop.add_reader(fd, drain)`) to be woken without a
    /// runner; `None` where there is none (not Unix).
    fn fileno(&self) -> Option<i64> {
        #[cfg(unix)]
        if let Some((_, rx)) = &self.shared.wake {
            use std::os::fd::AsRawFd;
            return Some(i64::from(rx.as_raw_fd()));
        }
        None
    }

    /// Whether the loop watches the descriptor: from now on (`True`) calls wake it through the
    /// socket; `False` when that loop stopped.
    fn watched(&self, watched: bool) {
        crate::lock::lock(&self.shared.queued).watched = watched;
    }
}

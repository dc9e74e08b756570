//! The calls of `async def` handlers, on their way to the package's event-loop thread: queued
//! here without the GIL, and started there in batches, one wake-up of the loop per batch.
//!
//! Why: a call used to hop from a tokio worker to a blocking-pool thread (to call the invoker)
//! and from there to the loop thread (`call_soon_threadsafe`), the GIL changing hands at each
//! hop, per call. Now the first call of a batch asks a runner to schedule one `drain` on the
//! loop, and every call queued until it runs is started by that one `drain`, on the loop
//! thread, where the invoker creates the task directly.

use super::super::runners::{Job, Runners};
use pyo3::prelude::*;
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

/// A server's queue of calls for the event-loop thread.
pub struct LoopQueue {
    /// The calls, shared with the [`LoopDrain`] the loop runs.
    queue: Arc<Mutex<Queued>>,
    /// Where a runner is borrowed to schedule a drain (calling Python needs a thread attached
    /// to it, and a worker thread must never wait for the GIL).
    runners: Runners,
    /// `schedule(drain)`: makes the loop thread call `drain()` (`loop.call_soon_threadsafe`);
    /// set by the package once it made its server.
    schedule: Mutex<Option<Arc<Py<PyAny>>>>,
}

/// The queued calls and whether a drain is on its way.
#[derive(Default)]
struct Queued {
    /// Calls not started yet, oldest first.
    calls: VecDeque<Job>,
    /// A drain is scheduled and has not taken the calls yet: the next call needs no wake-up.
    scheduled: bool,
}

impl LoopQueue {
    /// An empty queue that schedules its drains from `runners`.
    pub fn new(runners: Runners) -> Self {
        Self {
            queue: Arc::default(),
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
        let calls = std::mem::take(&mut crate::lock::lock(&self.queue).calls);
        let schedule = crate::lock::lock(&self.schedule).take();
        drop((calls, schedule)); // outside the locks
    }

    /// Queues `call` for the loop thread; the first of a batch schedules a drain.
    pub fn submit(&self, call: Job) {
        let wake = {
            let mut queued = crate::lock::lock(&self.queue);
            queued.calls.push_back(call);
            !std::mem::replace(&mut queued.scheduled, true)
        };
        if !wake {
            return;
        }
        let schedule = crate::lock::lock(&self.schedule).clone();
        let drain = LoopDrain {
            queue: self.queue.clone(),
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
    queue: Arc<Mutex<Queued>>,
}

impl LoopDrain {
    fn run(&self, py: Python<'_>) {
        let calls = {
            let mut queued = crate::lock::lock(&self.queue);
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
}

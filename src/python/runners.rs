//! Where sync Python handlers run: a queue of calls drained by *runner* threads of tokio's
//! blocking pool, each attached to Python once for as many calls as the queue holds.
//!
//! Why not one `spawn_blocking` per call (how it was): under load every call then woke a
//! blocking-pool thread, and the 16 threads of 16 concurrent calls handed the GIL to each other
//! call by call. A profile of that server at 16 connections spent 62% of its time in the kernel,
//! switching threads (`finish_task_switch`, futex waits), and 3.5% in the Python interpreter;
//! a Python `echo` served 0.26 of the Rust `echo`'s requests/s. One runner holding the GIL and
//! taking the next call from the queue switches nothing while there is work.
//!
//! With the GIL one runner drains the queue (a second could only wait for the GIL); on a
//! free-threaded interpreter as many as the runtime has worker threads run side by side. A
//! handler that blocks must not hold up the calls queued behind it, as it did not when each
//! call had a thread: a runner waiting in one of our blocking waits (`ctx.ask`, which goes
//! through `wait.rs`) stops counting as draining, so the next call gets a runner at once; one
//! blocked in the user's own code (a `time.sleep`) cannot be seen, so a call still queued after
//! [`STALL`] gets a runner of its own ([`Runners::rescue`], called by the call's waiting future).

use pyo3::prelude::*;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::runtime::Handle;

/// How long a call may wait in the queue before it gets a runner of its own: longer than the
/// queue takes to drain under load (16 calls of a few microseconds each), far shorter than any
/// handler a test makes block.
pub const STALL: Duration = Duration::from_millis(2);

/// One call to run, attached to Python.
pub type Job = Box<dyn FnOnce(Python<'_>) + Send>;

/// A server's runners and their queue; cloned into every call's future.
#[derive(Clone)]
pub struct Runners {
    /// The queue and the counts, shared with the runner threads.
    shared: Arc<Shared>,
}

/// What the runners share.
struct Shared {
    /// The queue and who drains it.
    state: Mutex<State>,
    /// Calls taken from the queue so far: a call's ticket below it has started.
    taken: AtomicU64,
    /// Where the runners run (its blocking pool).
    handle: Handle,
    /// Runners draining at once (not counting those blocked in a wait): 1 with the GIL, the
    /// runtime's worker threads on a free-threaded interpreter.
    parallel: usize,
}

/// The queue and who drains it.
#[derive(Default)]
struct State {
    /// Calls not started yet, oldest first.
    queue: VecDeque<Job>,
    /// Calls queued so far: the next call's ticket.
    submitted: u64,
    /// Runner threads alive (draining, or blocked in a call).
    running: usize,
    /// Of those, the ones blocked in one of our waits.
    waiting: usize,
    /// When the last runner was added for a stalled call: at most one per [`STALL`].
    rescued: Option<Instant>,
}

thread_local! {
    /// The runners this thread drains for, while it is a runner.
    static CURRENT: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
}

impl Runners {
    /// Runners on `handle`'s blocking pool, `parallel` of them draining at once.
    pub fn new(handle: Handle, parallel: usize) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                taken: AtomicU64::new(0),
                handle,
                parallel: parallel.max(1),
            }),
        }
    }

    /// Queues `job`, starting a runner if too few drain the queue; returns the call's ticket
    /// (for [`Self::started`]).
    pub fn submit(&self, job: Job) -> u64 {
        let (ticket, start) = {
            let mut state = crate::lock::lock(&self.shared.state);
            state.queue.push_back(job);
            let ticket = state.submitted;
            state.submitted += 1;
            let draining = state.running.saturating_sub(state.waiting);
            let start = draining < self.shared.parallel;
            if start {
                state.running += 1;
            }
            (ticket, start)
        };
        if start {
            self.shared.start_runner();
        }
        ticket
    }

    /// Whether the call with `ticket` left the queue.
    pub fn started(&self, ticket: u64) -> bool {
        self.shared.taken.load(Ordering::Acquire) > ticket
    }

    /// Adds a runner for calls stuck behind a blocked one (at most one per [`STALL`]); called
    /// by a call's future still queued after [`STALL`].
    pub fn rescue(&self) {
        let start = {
            let mut state = crate::lock::lock(&self.shared.state);
            let recent = state.rescued.is_some_and(|t| t.elapsed() < STALL);
            let start = !state.queue.is_empty() && !recent;
            if start {
                state.running += 1;
                state.rescued = Some(Instant::now());
            }
            start
        };
        if start {
            self.shared.start_runner();
        }
    }
}

impl Shared {
    /// A runner thread on the blocking pool (its count already taken). A runtime shutting
    /// down refuses it: the queued calls are dropped with it, their requests end unanswered.
    fn start_runner(self: &Arc<Self>) {
        let shared = self.clone();
        drop(self.handle.spawn_blocking(move || shared.drain()));
    }

    /// Runs queued calls attached to Python until the queue is empty.
    fn drain(self: Arc<Self>) {
        CURRENT.with(|c| *c.borrow_mut() = Some(self.clone()));
        Python::attach(|py| loop {
            let job = {
                let mut state = crate::lock::lock(&self.state);
                match state.queue.pop_front() {
                    Some(job) => job,
                    None => {
                        state.running -= 1;
                        break;
                    }
                }
            };
            self.taken.fetch_add(1, Ordering::Release);
            // A panic in a call drops its reply (that request ends unanswered); the runner
            // goes on with the others.
            let _ = std::panic::catch_unwind(AssertUnwindSafe(|| job(py)));
        });
        CURRENT.with(|c| *c.borrow_mut() = None);
    }
}

/// Runs `wait` (a blocking wait of ours) with this thread, if it is a runner, counted as
/// waiting rather than draining: a queued call then gets another runner at once.
pub fn while_waiting<T>(wait: impl FnOnce() -> T) -> T {
    let Some(shared) = CURRENT.with(|c| c.borrow().clone()) else {
        return wait();
    };
    let start = {
        let mut state = crate::lock::lock(&shared.state);
        state.waiting += 1;
        let draining = state.running.saturating_sub(state.waiting);
        let start = !state.queue.is_empty() && draining < shared.parallel;
        if start {
            state.running += 1;
        }
        start
    };
    if start {
        shared.start_runner();
    }
    let _waiting = Waiting(shared);
    wait()
}

/// Counts a runner as draining again when its wait ends, however it ends.
struct Waiting(Arc<Shared>);

impl Drop for Waiting {
    fn drop(&mut self) {
        crate::lock::lock(&self.0.state).waiting -= 1;
    }
}

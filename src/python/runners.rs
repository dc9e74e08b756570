//! Where sync Python handlers run: a queue of calls drained by *runner* threads of the server's
//! own, each attached to Python for its whole life and handing the GIL back while it waits.
//!
//! Why not one `spawn_blocking` per call (how it was): under load every call then woke a
//! blocking-pool thread, and the 16 threads of 16 concurrent calls handed the GIL to each other
//! call by call. A profile of that server at 16 connections spent 62% of its time in the kernel,
//! switching threads (`finish_task_switch`, futex waits), and 3.5% in the Python interpreter;
//! a Python `echo` served 0.26 of the Rust `echo`'s requests/s. One runner holding the GIL and
//! taking the next call from the queue switches nothing while there is work.
//!
//! Why threads of our own, attached for life: a thread that attaches to Python without a
//! thread state gets a new one, and loses it when it detaches for good; a runner of tokio's pool
//! did that each time the queue ran dry, which under load is every few calls. Keeping the
//! thread state (waiting detached, not unattached) served 1.24x the requests/s (same-run A/B,
//! 6 rounds of 2 s, 16 connections, Python echo: 17,191 → 21,744 median).
//!
//! With the GIL one runner drains the queue (a second could only wait for the GIL); on a
//! free-threaded interpreter as many as the runtime has worker threads run side by side. A
//! handler that blocks must not hold up the calls queued behind it, as it did not when each
//! call had a thread: a runner waiting in one of our blocking waits (`ctx.ask`, which goes
//! through `wait.rs`) stops counting as draining, so the next call gets a runner at once; one
//! blocked in the user's own code (a `time.sleep`) cannot be seen, so when a call stays queued
//! for [`STALL`] while no call at all leaves the queue, another runner is added
//! ([`Runners::rescue`], called by the call's waiting future). (Rescuing every call queued for
//! [`STALL`] added runners under load too, which then fought over the GIL: the first seconds of
//! a 16-connection run served a third of the requests/s with a 23 ms p99.)
//! At most [`MAX_RUNNERS`] runners exist, as the blocking pool had at most that many threads.

use crate::options::MAX_BLOCKING_THREADS;
use pyo3::prelude::*;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a call may wait in the queue before it gets a runner of its own: longer than the
/// queue takes to drain under load (16 calls of a few microseconds each), far shorter than any
/// handler a test makes block.
pub const STALL: Duration = Duration::from_millis(2);

/// How many runners a server may have at once (each one blocked in a handler, at worst).
const MAX_RUNNERS: usize = MAX_BLOCKING_THREADS;

/// How long an idle runner keeps its thread (attached, so the next call costs no new thread
/// state) before it ends; one runner stays as long as the server runs.
const IDLE: Duration = Duration::from_secs(5);

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
    /// Where idle runners wait for a call (or the stop).
    work: Condvar,
    /// Where [`Runners::stop`] waits for the idle runners to be gone.
    gone: Condvar,
    /// Calls taken from the queue so far: a call's ticket below it has started.
    taken: AtomicU64,
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
    /// Runner threads alive.
    threads: usize,
    /// Runners that are ending: no longer counted in `threads`, still to leave Python.
    ending: usize,
    /// Runners started that have not looked at the queue yet.
    starting: usize,
    /// Of those, the ones waiting for a call.
    idle: usize,
    /// Of those running a call, the ones blocked in one of our waits.
    waiting: usize,
    /// When the last runner was added for a stalled call: at most one per [`STALL`].
    rescued: Option<Instant>,
    /// Set by [`Runners::stop`]: idle runners end, busy ones after their call.
    stopping: bool,
}

impl State {
    /// Runners running a call and not blocked in one of our waits.
    fn draining(&self) -> usize {
        (self.threads - self.idle).saturating_sub(self.waiting)
    }
}

thread_local! {
    /// The runners this thread drains for, while it is a runner.
    static CURRENT: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
}

impl Runners {
    /// Runners for a server, `parallel` of them draining at once.
    pub fn new(parallel: usize) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                work: Condvar::new(),
                gone: Condvar::new(),
                taken: AtomicU64::new(0),
                parallel: parallel.max(1),
            }),
        }
    }

    /// Queues `job` for a runner (waking or starting one if too few drain the queue); returns
    /// the call's ticket (see [`Self::taken`]).
    pub fn submit(&self, job: Job) -> u64 {
        let mut state = self.shared.lock();
        state.queue.push_back(job);
        let ticket = state.submitted;
        state.submitted += 1;
        if state.draining() < self.shared.parallel {
            self.shared.add_runner(state);
        }
        ticket
    }

    /// Calls taken from the queue so far: a call with a lower ticket has started, and a count
    /// that did not move for [`STALL`] means no runner is draining.
    pub fn taken(&self) -> u64 {
        self.shared.taken.load(Ordering::Acquire)
    }

    /// Adds a runner for calls stuck behind a blocked one (at most one per [`STALL`]); called
    /// by a call's future still queued after [`STALL`] in which no call left the queue (a
    /// queue that moves, however slowly, has runners enough: more would only wait for the GIL;
    /// and a runner still starting is not blocked).
    pub fn rescue(&self) {
        let mut state = self.shared.lock();
        let recent = state.rescued.is_some_and(|t| t.elapsed() < STALL);
        if !state.queue.is_empty() && !recent && state.starting == 0 {
            state.rescued = Some(Instant::now());
            self.shared.add_runner(state);
        }
    }

    /// Ends the runners: the idle ones now, the busy ones after their call; calls still queued
    /// are dropped (their requests end unanswered, as the server is stopping). Waits (at most
    /// `timeout`) until the idle ones are gone: a runner leaving Python needs the GIL, so the
    /// caller must not hold it, and the interpreter must not be finalizing yet (a thread taking
    /// the GIL then is ended by CPython), which is why the package stops its servers at exit.
    pub fn stop(&self, timeout: Duration) {
        let queued = {
            let mut state = self.shared.lock();
            state.stopping = true;
            std::mem::take(&mut state.queue)
        };
        self.shared.work.notify_all();
        drop(queued); // outside the lock: dropping a call drops Python objects
        let state = self.shared.lock();
        let _ = self
            .shared
            .gone
            .wait_timeout_while(state, timeout, |s| s.idle > 0 || s.ending > 0);
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        crate::lock::lock(&self.state)
    }

    /// Wakes an idle runner, or starts one while there are fewer than [`MAX_RUNNERS`].
    fn add_runner(self: &Arc<Self>, mut state: MutexGuard<'_, State>) {
        if state.stopping {
            return;
        }
        if state.idle > 0 {
            drop(state);
            self.work.notify_one();
        } else if state.threads < MAX_RUNNERS {
            state.threads += 1;
            state.starting += 1;
            drop(state);
            let shared = self.clone();
            let started = std::thread::Builder::new()
                .name("everything-mcp".into())
                .spawn(move || shared.run());
            if started.is_err() {
                // Out of threads: the calls wait for a runner that exists.
                let mut state = self.lock();
                state.threads -= 1;
                state.starting -= 1;
            }
        }
    }

    /// A runner's life: attached to Python throughout, running calls as they come, detached
    /// while it waits for one, until it was idle for [`IDLE`] (and is not the last) or the
    /// server stops.
    fn run(self: Arc<Self>) {
        CURRENT.with(|c| *c.borrow_mut() = Some(self.clone()));
        Python::attach(|py| {
            self.lock().starting -= 1;
            // The next call without letting go of the GIL while there is one; detached to wait.
            while let Some(job) = self.take().or_else(|| py.detach(|| self.next())) {
                // A panic in a call drops its reply (that request ends unanswered); the runner
                // goes on with the others.
                let _ = std::panic::catch_unwind(AssertUnwindSafe(|| job(py)));
            }
        });
        CURRENT.with(|c| *c.borrow_mut() = None);
        self.lock().ending -= 1;
        self.gone.notify_all();
    }

    /// The next queued call, if any.
    fn take(&self) -> Option<Job> {
        let job = self.lock().queue.pop_front()?;
        self.taken.fetch_add(1, Ordering::Release);
        Some(job)
    }

    /// The next call, waiting for it; `None` when this runner is to end (counted as ending).
    fn next(&self) -> Option<Job> {
        let mut state = self.lock();
        loop {
            if let Some(job) = state.queue.pop_front() {
                self.taken.fetch_add(1, Ordering::Release);
                return Some(job);
            }
            // Enough runners wait already: an extra one (added for a blocked call) ends rather
            // than stay to fight the others for the GIL once the queue moves again.
            if state.stopping || state.idle >= self.parallel {
                state.threads -= 1;
                state.ending += 1;
                return None;
            }
            state.idle += 1;
            let (next, waited) = self
                .work
                .wait_timeout(state, IDLE)
                .unwrap_or_else(|e| e.into_inner());
            state = next;
            state.idle -= 1;
            if waited.timed_out() && state.queue.is_empty() && state.threads > 1 {
                state.threads -= 1;
                state.ending += 1;
                return None;
            }
        }
    }
}

/// Runs `wait` (a blocking wait of ours) with this thread, if it is a runner, counted as
/// waiting rather than draining: a queued call then gets another runner at once.
pub fn while_waiting<T>(wait: impl FnOnce() -> T) -> T {
    let Some(shared) = CURRENT.with(|c| c.borrow().clone()) else {
        return wait();
    };
    {
        let mut state = shared.lock();
        state.waiting += 1;
        if !state.queue.is_empty() && state.draining() < shared.parallel {
            shared.add_runner(state);
        }
    }
    let _waiting = Waiting(shared);
    wait()
}

/// Counts a runner as draining again when its wait ends, however it ends.
struct Waiting(Arc<Shared>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.lock().waiting -= 1;
    }
}

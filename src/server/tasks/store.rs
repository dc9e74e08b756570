//! Every live task of a server, by id, and their expiry. A task is kept for its TTL after
//! creation (restarted when it settles, as the reference's store does) and then dropped; a
//! handshake-era task also goes when its session ends. Expired tasks are swept at most once a
//! second, on the store's own calls, so a server that creates and forgets 10,000 tasks holds
//! only the ones still within their TTL (`bench/`'s task memory figure).

use super::task::Task;
use crate::clock::Clock;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often (at most) the store looks for expired tasks.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// A server's tasks.
pub struct TaskStore {
    inner: Mutex<Inner>,
    /// The server's clock, which expiry is read on.
    clock: Clock,
}

#[derive(Default)]
struct Inner {
    /// Tasks by id, plus their creation order (for `tasks/list` and `srv.tasks`).
    tasks: indexmap::IndexMap<Arc<str>, Arc<Task>>,
    /// When the next sweep may run.
    next_sweep: Option<Instant>,
}

/// The status message of a task dropped before it settled because its TTL passed.
const EXPIRED: &str = "The task expired (its TTL elapsed).";

/// The status message of a handshake-era task whose session ended before it settled.
const SESSION_ENDED: &str = "The session ended.";

impl TaskStore {
    /// An empty store whose tasks expire on `clock`.
    pub fn new(clock: Clock) -> Self {
        Self {
            inner: Mutex::default(),
            clock,
        }
    }

    /// The clock its tasks' timestamps and expiry are read on.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Drops the tasks whose TTL has passed now (a manual clock's advance calls this, so the
    /// tasks due to expire by then are gone when it returns).
    pub fn sweep(&self) {
        crate::lock::lock(&self.inner).next_sweep = None;
        self.with(|_, _| ());
    }

    /// Runs `f` on the tasks under the lock, after a sweep when one is due. Tasks the sweep (or
    /// `f`) removed unsettled are cancelled after the lock is released: cancelling announces the
    /// task, and nothing that announces runs under the store's lock.
    fn with<R>(&self, f: impl FnOnce(&mut Inner, &mut Vec<Arc<Task>>) -> R) -> R {
        let mut stopped = Vec::new();
        let out = {
            let mut inner = crate::lock::lock(&self.inner);
            let now = self.clock.now();
            if inner.next_sweep.is_none_or(|t| now >= t) {
                inner.next_sweep = Some(now + SWEEP_EVERY);
                inner.tasks.retain(|_, task| {
                    let expired = task.state().expires_at <= now;
                    if expired {
                        stopped.push(task.clone());
                    }
                    !expired
                });
            }
            f(&mut inner, &mut stopped)
        };
        for task in stopped {
            if !task.status().is_terminal() {
                task.cancel(EXPIRED);
            }
        }
        out
    }

    /// Adds a task (durably: a `tasks/get` for it resolves from now on).
    pub fn insert(&self, task: Arc<Task>) {
        self.with(|inner, _| inner.tasks.insert(task.id.clone(), task));
    }

    /// The task `id` as `scope` sees it: a handshake-era task only from its own session, a
    /// stateless one from anyone who knows its id.
    pub fn get(&self, id: &str, scope: Option<&str>) -> Option<Arc<Task>> {
        self.with(|inner, stopped| {
            let task = inner.tasks.get(id).filter(|t| visible(t, scope))?.clone();
            // Expired since the last sweep: gone now, not at the next sweep.
            if task.state().expires_at <= self.clock.now() {
                inner.tasks.shift_remove(id);
                stopped.push(task);
                return None;
            }
            Some(task)
        })
    }

    /// The tasks `scope` sees, oldest first.
    pub fn list(&self, scope: Option<&str>) -> Vec<Arc<Task>> {
        self.with(|inner, _| {
            inner
                .tasks
                .values()
                .filter(|t| visible(t, scope))
                .cloned()
                .collect()
        })
    }

    /// Every live task (for `srv.tasks` and the gates), oldest first.
    pub fn all(&self) -> Vec<Arc<Task>> {
        self.with(|inner, _| inner.tasks.values().cloned().collect())
    }

    /// Drops the tasks of a session that ended; one still running is cancelled (its status
    /// says why) and its work stops.
    pub fn end_scope(&self, scope: &str) {
        let gone: Vec<Arc<Task>> = self.with(|inner, _| {
            let mut gone = Vec::new();
            inner.tasks.retain(|_, t| {
                let mine = t.scope.as_deref() == Some(scope);
                if mine {
                    gone.push(t.clone());
                }
                !mine
            });
            gone
        });
        for task in gone {
            task.cancel(SESSION_ENDED);
        }
    }

    /// How many tasks are kept.
    pub fn len(&self) -> usize {
        self.with(|inner, _| inner.tasks.len())
    }

    /// Whether no task is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Whether `scope` (a session id, or `None` for a stateless request) may see `task`.
fn visible(task: &Task, scope: Option<&str>) -> bool {
    match (&task.scope, scope) {
        (Some(owner), Some(asker)) => &**owner == asker,
        (None, None) => true,
        _ => false,
    }
}

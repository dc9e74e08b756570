//! Every live task of a server, by id, and their expiry. A task is kept for its TTL after
//! creation (restarted when it settles, as the reference's store does) and then dropped; a
//! handshake-era task also goes when its session ends. Expired tasks are swept at most once a
//! second, on the store's own calls, so a server that creates and forgets 10,000 tasks holds
//! only the ones still within their TTL (`bench/`'s task memory figure).

use super::task::Task;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How often (at most) the store looks for expired tasks.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// A server's tasks.
#[derive(Default)]
pub struct TaskStore {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Tasks by id, plus their creation order (for `tasks/list` and `srv.tasks`).
    tasks: indexmap::IndexMap<Arc<str>, Arc<Task>>,
    /// When the next sweep may run.
    next_sweep: Option<Instant>,
}

impl TaskStore {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if inner.next_sweep.is_none_or(|t| now >= t) {
            inner.next_sweep = Some(now + SWEEP_EVERY);
            sweep(&mut inner.tasks, now);
        }
        inner
    }

    /// Adds a task (durably: a `tasks/get` for it resolves from now on).
    pub fn insert(&self, task: Arc<Task>) {
        self.lock().tasks.insert(task.id.clone(), task);
    }

    /// The task `id` as `scope` sees it: a handshake-era task only from its own session, a
    /// stateless one from anyone who knows its id.
    pub fn get(&self, id: &str, scope: Option<&str>) -> Option<Arc<Task>> {
        let mut inner = self.lock();
        let task = inner.tasks.get(id).filter(|t| visible(t, scope))?.clone();
        // Expired since the last sweep: gone now, not at the next sweep.
        if task.state().expires_at <= Instant::now() {
            inner.tasks.shift_remove(id);
            drop(inner);
            task.cancel("The task expired (its TTL elapsed).");
            return None;
        }
        Some(task)
    }

    /// The tasks `scope` sees, oldest first.
    pub fn list(&self, scope: Option<&str>) -> Vec<Arc<Task>> {
        self.lock()
            .tasks
            .values()
            .filter(|t| visible(t, scope))
            .cloned()
            .collect()
    }

    /// Every live task (for `srv.tasks` and the gates), oldest first.
    pub fn all(&self) -> Vec<Arc<Task>> {
        self.lock().tasks.values().cloned().collect()
    }

    /// Drops the tasks of a session that ended, stopping their work.
    pub fn end_scope(&self, scope: &str) {
        let gone: Vec<Arc<Task>> = {
            let mut inner = self.lock();
            let mut gone = Vec::new();
            inner.tasks.retain(|_, t| {
                let mine = t.scope.as_deref() == Some(scope);
                if mine {
                    gone.push(t.clone());
                }
                !mine
            });
            gone
        };
        for task in gone {
            task.cancel.cancel();
        }
    }

    /// How many tasks are kept.
    pub fn len(&self) -> usize {
        self.lock().tasks.len()
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

/// Drops the expired tasks; one still running is cancelled first (its TTL is over).
fn sweep(tasks: &mut indexmap::IndexMap<Arc<str>, Arc<Task>>, now: Instant) {
    tasks.retain(|_, task| {
        let expired = task.state().expires_at <= now;
        if expired && !task.status().is_terminal() {
            task.cancel("The task expired (its TTL elapsed).");
        }
        !expired
    });
}

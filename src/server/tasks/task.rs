//! One task: its identity, its status as the client polls it, the outcome once it settles,
//! what it is waiting for from the client, and the frames it has queued for a `tasks/result`
//! stream. Every change wakes the waiters of [`Task::changed`] (a blocking `tasks/result`, a
//! test's gate, the status notification).

use super::mailbox::Mailbox;
use crate::clock::Clock;
use crate::jsonrpc::ErrorObject;
use crate::server::rounds::Ask;
use crate::server::sink::{Outlet, Undeliverable};
use indexmap::IndexMap;
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;

/// Where a task is in its life. The last three are terminal: once there, it never moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The work is running.
    Working,
    /// The work waits for the client (an elicitation, a sampling, roots).
    InputRequired,
    /// The work finished with a result (a tool's `isError` result included).
    Completed,
    /// The work ended in a JSON-RPC error.
    Failed,
    /// The client cancelled it (or the server did, on TTL expiry or shutdown).
    Cancelled,
}

impl Status {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Whether the task can no longer change.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

/// Which wire a task speaks: the handshake era's (2025-11-25, SEP-1686) or the tasks
/// extension's (2026-07-28, SEP-2663). Fixed at creation: a task is polled in the era that
/// created it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskEra {
    /// `CreateTaskResult {task}`, `ttl`/`pollInterval`, `tasks/result`, `tasks/list`, input
    /// asked with real server → client requests carrying the related-task `_meta`.
    Handshake,
    /// A flat `CreateTaskResult` (`resultType: "task"`), `ttlMs`/`pollIntervalMs`, `tasks/get`
    /// inlining the outcome, input asked through `inputRequests` and answered by `tasks/update`.
    Stateless,
}

/// A request for client input the task is waiting on (stateless era).
pub struct PendingInput {
    /// `{method, params}`, as `inputRequests` shows it.
    pub request: Value,
    /// Completed with the client's answer by `tasks/update`.
    reply: oneshot::Sender<Value>,
}

/// The part of a task that changes.
pub struct TaskState {
    /// Current status.
    pub status: Status,
    /// The human-readable note beside the status (`statusMessage`).
    pub status_message: Option<String>,
    /// `lastUpdatedAt` (ISO 8601), set on every change.
    pub last_updated_at: String,
    /// The outcome once terminal: the result, or the JSON-RPC error (`failed`). A cancelled
    /// task has none.
    pub outcome: Option<Result<Value, ErrorObject>>,
    /// Outstanding input requests by key (stateless era), in the order they were asked.
    pub inputs: IndexMap<String, PendingInput>,
    /// How many input requests this task has made (numbers the keys it mints).
    pub asked: u64,
    /// Every key it has used: the spec forbids reusing one over a task's life, so a repeated
    /// key is suffixed with the ask's number.
    pub used_keys: std::collections::HashSet<String>,
    /// When the store may drop it (TTL from creation, restarted when it settles).
    pub expires_at: Instant,
}

/// A task: created by a task-augmented (handshake era) or server-directed (stateless era)
/// `tools/call`, run in the background, polled by the client.
pub struct Task {
    /// The task id: 32 lowercase hex digits (128 random bits), unguessable, so in the stateless
    /// era (no session) the id itself is what grants access.
    pub id: Arc<str>,
    /// The session that created it (handshake era): only that session sees it. `None` in the
    /// stateless era.
    pub scope: Option<Arc<str>>,
    /// The wire it speaks.
    pub era: TaskEra,
    /// The tool it runs (what `srv.tasks` and the gates key on).
    pub tool: String,
    /// The arguments it was called with (shown by `srv.tasks`).
    pub arguments: Value,
    /// `createdAt` (ISO 8601).
    pub created_at: String,
    /// `ttl` / `ttlMs`: how long the task is kept after creation (and after it settles).
    pub ttl: Duration,
    /// `pollInterval` / `pollIntervalMs`: how often a client should poll.
    pub poll_interval: Duration,
    /// Cancelled by `tasks/cancel`, TTL expiry or the end of its session: the work stops.
    pub cancel: CancellationToken,
    /// Frames waiting for a `tasks/result` stream (handshake era over HTTP).
    pub mailbox: Mailbox,
    /// The changing part.
    state: Mutex<TaskState>,
    /// Bumped on every change, so waiters (`tasks/result`, gates) wake.
    changed: watch::Sender<u64>,
    /// Called after every applied update (set once by the runner: the handshake era's
    /// `notifications/tasks/status`). Called in place rather than from a watcher of
    /// [`Task::subscribe`], which coalesces: the reference notifies on each update, at the
    /// moment it happens, so a status that lasts an instant is still announced, and before a
    /// request the work sends next.
    announcer: OnceLock<Announcer>,
    /// The server's clock: its timestamps and expiry follow a test's manual clock.
    clock: Clock,
}

/// What [`Task::announce_with`] installs.
pub type Announcer = Box<dyn Fn(&Task) + Send + Sync>;

/// An ISO 8601 timestamp of now on `clock`, with milliseconds (as the reference writes them).
pub fn now_iso(clock: &Clock) -> String {
    chrono::DateTime::<chrono::Utc>::from(clock.wall())
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

impl Task {
    /// A new task, `working`, with a fresh id.
    pub fn new(
        scope: Option<Arc<str>>,
        era: TaskEra,
        tool: String,
        arguments: Value,
        (ttl, poll_interval, clock): (Duration, Duration, Clock),
        cancel: CancellationToken,
        status_message: Option<String>,
    ) -> Self {
        let now = now_iso(&clock);
        Self {
            id: uuid::Uuid::new_v4().simple().to_string().into(),
            scope,
            era,
            tool,
            arguments,
            created_at: now.clone(),
            ttl,
            poll_interval,
            cancel,
            mailbox: Mailbox::default(),
            state: Mutex::new(TaskState {
                status: Status::Working,
                status_message,
                last_updated_at: now,
                outcome: None,
                inputs: IndexMap::new(),
                asked: 0,
                used_keys: Default::default(),
                expires_at: clock.now() + ttl,
            }),
            clock,
            changed: watch::Sender::new(0),
            announcer: OnceLock::new(),
        }
    }

    /// Has `announcer` called after every applied update from now on (the first one set
    /// stays).
    pub fn announce_with(&self, announcer: Announcer) {
        let _ = self.announcer.set(announcer);
    }

    /// The state under its lock.
    pub fn state(&self) -> MutexGuard<'_, TaskState> {
        crate::lock::lock(&self.state)
    }

    /// The current status.
    pub fn status(&self) -> Status {
        self.state().status
    }

    /// A receiver that sees every later change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Applies `change` unless the task is terminal; returns whether it applied. Wakes the
    /// waiters and announces the task (see [`Task::announce_with`]), even when `change`
    /// changed nothing visible: an update is news in itself, as in the reference.
    pub fn update(&self, change: impl FnOnce(&mut TaskState)) -> bool {
        {
            let mut s = self.state();
            if s.status.is_terminal() {
                return false;
            }
            change(&mut s);
            s.last_updated_at = now_iso(&self.clock);
            if s.status.is_terminal() {
                // Settled: the TTL restarts, so a result is kept for a whole TTL (as the
                // reference's store does), and nothing waits for input any more.
                s.expires_at = self.clock.now() + self.ttl;
                s.inputs.clear();
            }
        }
        self.changed.send_modify(|n| *n += 1);
        if let Some(announce) = self.announcer.get() {
            announce(self);
        }
        true
    }

    /// Sets the status and its message (a non-terminal status; use [`Task::settle`] to end).
    /// In the stateless era `input_required` means "answer these `inputRequests`", so a work
    /// that announces it before asking (the research demo sets the status, then asks) changes
    /// only the message: the status follows when [`Task::request_input`] registers the
    /// question, and a poll in between never sees `input_required` with nothing to answer.
    pub fn set_status(&self, status: Status, message: Option<String>) -> bool {
        let era = self.era;
        self.update(|s| {
            let unasked = era == TaskEra::Stateless && s.inputs.is_empty();
            if !(status == Status::InputRequired && unasked) {
                s.status = status;
            }
            s.status_message = message;
        })
    }

    /// Replaces the status message only.
    pub fn set_message(&self, message: Option<String>) -> bool {
        self.update(|s| s.status_message = message)
    }

    /// Ends the task with its outcome: `completed` with a result, `failed` with an error.
    pub fn settle(&self, outcome: Result<Value, ErrorObject>) -> bool {
        self.update(|s| {
            s.status = if outcome.is_ok() {
                Status::Completed
            } else {
                Status::Failed
            };
            s.outcome = Some(outcome);
        })
    }

    /// Ends the task as `cancelled` with `message` and stops its work; `false` if it had
    /// already ended.
    pub fn cancel(&self, message: &str) -> bool {
        let done = self.update(|s| {
            s.status = Status::Cancelled;
            s.status_message = Some(message.into());
        });
        self.cancel.cancel();
        done
    }

    /// Resolves when the task is terminal.
    pub async fn settled(&self) {
        let mut rx = self.subscribe();
        while !self.status().is_terminal() {
            if rx.changed().await.is_err() {
                return;
            }
        }
    }

    /// Registers input requests (stateless era) and moves the task to `input_required`:
    /// each ask gets a key unique over the task's life (the asked key, or
    /// `<key>-<n>` when it was used before). Returns the receivers of the answers, in order.
    pub fn request_input(&self, asks: &[Ask]) -> Vec<oneshot::Receiver<Value>> {
        let mut receivers = Vec::with_capacity(asks.len());
        self.update(|s| {
            for ask in asks {
                let key = &ask.key;
                s.asked += 1;
                let key = if key.is_empty() {
                    format!("input-{}", s.asked)
                } else if s.used_keys.contains(key) {
                    format!("{key}-{}", s.asked)
                } else {
                    key.clone()
                };
                s.used_keys.insert(key.clone());
                let (reply, rx) = oneshot::channel();
                let request = ask.to_wire(); // as a round's inputRequests show it
                s.inputs.insert(key, PendingInput { request, reply });
                receivers.push(rx);
            }
            s.status = Status::InputRequired;
        });
        receivers
    }

    /// Delivers the client's answers (`tasks/update`): keys not outstanding are ignored (the
    /// spec: unknown, already answered or superseded). When nothing is outstanding any more
    /// the task is `working` again.
    pub fn answer(&self, responses: &serde_json::Map<String, Value>) {
        self.update(|s| {
            for (key, answer) in responses {
                if let Some(pending) = s.inputs.shift_remove(key) {
                    let _ = pending.reply.send(answer.clone());
                }
            }
            if s.inputs.is_empty() && s.status == Status::InputRequired {
                s.status = Status::Working;
            }
        });
    }

    /// Drops the outstanding input requests whose waiter went away (the work was cancelled
    /// or stopped waiting), so `tasks/get` never shows a question nobody will read.
    pub fn forget_abandoned_inputs(&self) {
        self.update(|s| {
            s.inputs.retain(|_, p| !p.reply.is_closed());
            if s.inputs.is_empty() && s.status == Status::InputRequired {
                s.status = Status::Working;
            }
        });
    }
}

/// What a tool declares about running as a task (`execution.taskSupport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskSupport {
    /// Never a task (the default when absent).
    #[default]
    Forbidden,
    /// A task when the client can take one, a plain call otherwise.
    Optional,
    /// Only as a task: a client that cannot take one is refused.
    Required,
}

impl TaskSupport {
    /// Read from a tool definition's `execution.taskSupport`.
    pub fn of(definition: &Map<String, Value>) -> Self {
        match definition
            .get("execution")
            .and_then(|e| e.get("taskSupport"))
            .and_then(Value::as_str)
        {
            Some("optional") => Self::Optional,
            Some("required") => Self::Required,
            _ => Self::Forbidden,
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Forbidden => "forbidden",
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }
}

/// The task's sink holds its mailbox through an `Arc<Task>`: this lets `Arc<Task>` be the
/// outlet without a second allocation.
pub struct TaskOutlet(pub Arc<Task>);

impl Outlet for TaskOutlet {
    fn deliver(&self, frame: Arc<str>) -> Result<Option<Arc<str>>, Undeliverable> {
        self.0.mailbox.deliver(frame)
    }
}

//! Test-controlled tasks. A test registers a gate for a tool (`srv.task_gate("tool")`); from then
//! on a task started for that tool does not run the tool's handler: it is *held*, and the test
//! moves it — a status message, a request for input (which the client sees exactly as a
//! handler's ask: a related-task request in the handshake era, `inputRequests` in the stateless
//! era), completion with a result, failure with an error — by sending [`Command`]s. Nothing
//! depends on timers, so a client's polling, cancellation and resume logic is tested
//! deterministically.
//!
//! The hold loop is the task's work ([`super::start`] runs it instead of the handler), so
//! cancellation, TTL and the era's wire behave as for any task.

use super::task::Task;
use crate::jsonrpc::ErrorObject;
use crate::server::rounds::Ask;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot, watch};

/// What a test tells a held task to do.
pub enum Command {
    /// Replace the status message (the task stays `working`, or `input_required` while it
    /// waits for input); acknowledged once applied.
    Status(String, oneshot::Sender<()>),
    /// Ask the client (the task is `input_required` until it answers); the answer, or why
    /// there is none, goes back on the sender.
    Ask(Ask, oneshot::Sender<Result<Value, ErrorObject>>),
    /// End the task `completed` with this result.
    Complete(Value),
    /// End the task `failed` with this error.
    Fail(ErrorObject),
}

/// A task held by a gate: the task itself and the way to command its hold loop.
pub struct Held {
    /// The task (its id, status and outcome as the client sees them).
    pub task: Arc<Task>,
    /// The hold loop's inbox; closed once the loop ended (the task settled or was cancelled).
    commands: mpsc::UnboundedSender<Command>,
}

/// Why a command did not reach its task.
#[derive(Debug)]
pub struct Ended;

impl Held {
    /// Whether the task no longer listens: it settled, was cancelled, or its work was stopped
    /// (its session ended, which stops the work without a final status).
    pub fn ended(&self) -> bool {
        self.task.status().is_terminal() || self.task.cancel.is_cancelled()
    }

    /// Sends `command`; `Err(Ended)` when the task no longer listens.
    pub fn send(&self, command: Command) -> Result<(), Ended> {
        if self.ended() {
            return Err(Ended);
        }
        self.commands.send(command).map_err(|_| Ended)
    }

    /// Sets the status message and waits until it is applied (so the client's next poll sees
    /// it).
    pub async fn status(&self, message: String) -> Result<(), Ended> {
        let (tx, rx) = oneshot::channel();
        self.send(Command::Status(message, tx))?;
        rx.await.map_err(|_| Ended)
    }

    /// Asks the client and waits for its answer (an `Err` answer is the client's error, a
    /// missing capability, or the task ending first).
    pub async fn ask(&self, ask: Ask) -> Result<Value, ErrorObject> {
        let ended = || ErrorObject::internal("the task ended before the client answered");
        let (tx, rx) = oneshot::channel();
        self.send(Command::Ask(ask, tx)).map_err(|_| ended())?;
        rx.await.unwrap_or_else(|_| Err(ended()))
    }

    /// Ends the task with `outcome` and waits until it has settled, so the client's next poll
    /// sees the outcome. `Err(Ended)` when it had already ended (e.g. the client cancelled it).
    pub async fn settle(&self, outcome: Result<Value, ErrorObject>) -> Result<(), Ended> {
        self.send(match outcome {
            Ok(result) => Command::Complete(result),
            Err(error) => Command::Fail(error),
        })?;
        self.task.settled().await;
        Ok(())
    }
}

/// The gate of one tool: the tasks it has held, in the order they were started.
pub struct Gate {
    /// The tool it holds.
    pub tool: String,
    /// Every task held so far (settled ones included, so indices stay stable for
    /// [`Gate::nth`]).
    held: Mutex<Vec<Arc<Held>>>,
    /// Bumped when a task arrives, so a test waiting for one wakes.
    arrived: watch::Sender<usize>,
}

impl Gate {
    fn new(tool: String) -> Self {
        Self {
            tool,
            held: Mutex::default(),
            arrived: watch::Sender::new(0),
        }
    }

    /// Every task held so far, oldest first.
    pub fn held(&self) -> Vec<Arc<Held>> {
        crate::lock::lock(&self.held).clone()
    }

    /// The `n`th task this gate held (from 0), waiting for it to arrive.
    pub async fn nth(&self, n: usize) -> Arc<Held> {
        self.first(|held| held.get(n).cloned()).await
    }

    /// The oldest held task that has not ended ([`Held::ended`]), waiting for one to arrive:
    /// the task the short forms (`gate.complete(...)`) act on.
    pub async fn current(&self) -> Arc<Held> {
        self.first(|held| held.iter().find(|h| !h.ended()).cloned())
            .await
    }

    /// The held task `pick` chooses from every task held so far, waiting for more to arrive
    /// until it chooses one.
    async fn first(&self, pick: impl Fn(&[Arc<Held>]) -> Option<Arc<Held>>) -> Arc<Held> {
        let mut rx = self.arrived.subscribe();
        loop {
            let picked = pick(&crate::lock::lock(&self.held));
            if let Some(held) = picked {
                return held;
            }
            if rx.changed().await.is_err() {
                // The gate is owned by whoever awaits it: the sender cannot go first.
                std::future::pending::<()>().await;
            }
        }
    }

    /// Registers a task this gate holds ([`super::hold`] is its work): the inbox its commands
    /// arrive in.
    pub fn admit(&self, task: Arc<Task>) -> mpsc::UnboundedReceiver<Command> {
        let (commands, inbox) = mpsc::unbounded_channel();
        let n = {
            let mut held = crate::lock::lock(&self.held);
            held.push(Arc::new(Held { task, commands }));
            held.len()
        };
        self.arrived.send_replace(n);
        inbox
    }
}

/// A server's gates, by tool name.
#[derive(Default)]
pub struct Gates {
    by_tool: Mutex<HashMap<String, Arc<Gate>>>,
}

impl Gates {
    /// The gate of `tool`, made if there is none (one gate per tool: a second `task_gate` of
    /// the same tool is the same gate).
    pub fn open(&self, tool: &str) -> Arc<Gate> {
        crate::lock::lock(&self.by_tool)
            .entry(tool.to_string())
            .or_insert_with(|| Arc::new(Gate::new(tool.to_string())))
            .clone()
    }

    /// The gate of `tool`, if one is registered (checked by `tools/call` before a task runs).
    pub fn get(&self, tool: &str) -> Option<Arc<Gate>> {
        crate::lock::lock(&self.by_tool).get(tool).cloned()
    }

    /// Removes the gate of `tool`: later tasks run the handler again. Tasks it holds stay
    /// held (their handles still command them). Returns whether there was one.
    pub fn close(&self, tool: &str) -> bool {
        crate::lock::lock(&self.by_tool).remove(tool).is_some()
    }
}

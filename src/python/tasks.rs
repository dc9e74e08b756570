//! Tasks as Python sees them: `_core.TaskGate` (a test's gate on a tool) and `_core.GatedTask`
//! (one task the gate holds), thin handles on [`crate::server::tasks::gate`]; and the JSON view of
//! a task that `srv.tasks` and `GatedTask.info` read. Every wait releases the GIL and is
//! interruptible ([`run_interruptibly`]), each has an `_async` twin for asyncio tests
//! ([`call_back`]), and what Python passes in or gets back is JSON text: the conversions live
//! in `everything_mcp.tasks`.

use super::args;
use super::callback::{call_back, Pending};
use super::errors::{ClientError, ConnectionClosedError};
use super::wait::{deadline_after, run_interruptibly, Waited};
use crate::jsonrpc::ErrorObject;
use crate::server::rounds::Ask;
use crate::server::tasks::gate::{Ended, Gate, Gates, Held};
use crate::server::tasks::{Task, TaskEra};
use pyo3::exceptions::PyTimeoutError;
use pyo3::prelude::*;
use serde_json::{json, Value};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::runtime::Handle;

/// A task as `srv.tasks` lists it (JSON): what a test asserts on, in both eras alike.
pub fn info(task: &Task) -> Value {
    let state = task.state();
    json!({
        "id": &*task.id,
        "tool": task.tool,
        "arguments": task.arguments,
        "status": state.status.as_str(),
        "statusMessage": state.status_message,
        "era": match task.era { TaskEra::Handshake => "handshake", TaskEra::Stateless => "stateless" },
        "session": task.scope.as_deref(),
        "createdAt": task.created_at,
        "lastUpdatedAt": state.last_updated_at,
        "ttl": task.ttl.as_secs_f64(),
        "pollInterval": task.poll_interval.as_secs_f64(),
        "inputRequests": state.inputs.iter().map(|(k, p)| (k.clone(), p.request.clone())).collect::<serde_json::Map<_, _>>(),
    })
}

/// Runs `work` until `timeout` seconds pass, GIL released and interruptible; a timeout raises
/// `TimeoutError` saying `what` did not happen.
fn wait<T: Send + 'static>(
    py: Python<'_>,
    handle: &Handle,
    timeout: f64,
    what: &str,
    work: impl Future<Output = T> + Send + 'static,
) -> PyResult<T> {
    match run_interruptibly(py, handle, Some(deadline_after(timeout)), None, work)? {
        Waited::Done(out) => Ok(out),
        Waited::TimedOut => Err(PyTimeoutError::new_err(format!(
            "{what} within {timeout} s"
        ))),
        Waited::Stopped => Err(ConnectionClosedError::new_err("the server stopped")),
    }
}

/// `work` bounded by `timeout` seconds, its timeout a `TimeoutError` (for the `_async` twins).
fn bounded<T: Send + 'static>(
    timeout: f64,
    what: String,
    work: impl Future<Output = PyResult<T>> + Send + 'static,
) -> impl Future<Output = PyResult<T>> + Send + 'static {
    let deadline = tokio::time::Instant::from_std(deadline_after(timeout));
    async move {
        tokio::time::timeout_at(deadline, work)
            .await
            .unwrap_or_else(|_| {
                Err(PyTimeoutError::new_err(format!(
                    "{what} within {timeout} s"
                )))
            })
    }
}

/// A test's gate on one tool (`srv.task_gate(tool)`): tasks of that tool are held for the test.
#[pyclass(frozen, module = "everything_mcp._core")]
pub struct TaskGate {
    /// The core gate.
    gate: Arc<Gate>,
    /// The server's gates, to close this one.
    server: Arc<crate::server::Server>,
    /// The server's runtime, where the waits run.
    handle: Handle,
    /// How many tasks `next_task` has handed out: the next call waits for the one after.
    cursor: Arc<AtomicUsize>,
}

impl TaskGate {
    /// Opens (or reuses) the gate of `tool` on `server`.
    pub fn open(server: Arc<crate::server::Server>, tool: &str, handle: Handle) -> Self {
        Self {
            gate: server.gates.open(tool),
            server,
            handle,
            cursor: Arc::default(),
        }
    }

    fn task(&self, held: Arc<Held>) -> GatedTask {
        GatedTask {
            held,
            handle: self.handle.clone(),
        }
    }

    /// The task `pick` names once there is one, and what a timeout says did not happen.
    fn pick(&self, pick: Pick) -> (String, impl Future<Output = GatedTask> + Send + 'static) {
        let tool = &self.gate.tool;
        let what = match pick {
            Pick::Next => format!("no task of {tool} started"),
            Pick::Current => format!("no task of {tool} is held"),
        };
        let (gate, cursor, handle) = (self.gate.clone(), self.cursor.clone(), self.handle.clone());
        let picked = async move {
            let held = match pick {
                Pick::Next => {
                    // Advances the cursor once the task arrived.
                    let n = cursor.load(Ordering::SeqCst);
                    let held = gate.nth(n).await;
                    let _ = cursor.compare_exchange(n, n + 1, Ordering::SeqCst, Ordering::SeqCst);
                    held
                }
                Pick::Current => gate.current().await,
            };
            GatedTask { held, handle }
        };
        (what, picked)
    }

    /// The task `pick` names, waiting up to `timeout` seconds (`TimeoutError`).
    fn wait_for(&self, py: Python<'_>, timeout: f64, pick: Pick) -> PyResult<GatedTask> {
        let (what, picked) = self.pick(pick);
        wait(py, &self.handle, timeout, &what, picked)
    }

    /// [`TaskGate::wait_for`] for asyncio tests: `callback(task, None)` or
    /// `callback(None, error)` later.
    fn call_back_with(&self, timeout: f64, pick: Pick, callback: Py<PyAny>) -> Pending {
        let (what, picked) = self.pick(pick);
        let work = async move { Ok(picked.await) };
        call_back(&self.handle, bounded(timeout, what, work), callback)
    }
}

/// Which held task a `TaskGate` call waits for.
#[derive(Clone, Copy)]
enum Pick {
    /// The next one `next_task` has not handed out yet.
    Next,
    /// The oldest one that has not ended.
    Current,
}

#[pymethods]
impl TaskGate {
    /// The tool this gate holds.
    #[getter]
    fn tool(&self) -> String {
        self.gate.tool.clone()
    }

    /// The next task this gate holds that `next_task` has not handed out yet, waiting up to
    /// `timeout` seconds for it to start (`TimeoutError`).
    fn next_task(&self, py: Python<'_>, timeout: f64) -> PyResult<GatedTask> {
        self.wait_for(py, timeout, Pick::Next)
    }

    /// `next_task` for asyncio tests: `callback(task, None)` or `callback(None, error)` later.
    fn next_task_async(&self, timeout: f64, callback: Py<PyAny>) -> Pending {
        self.call_back_with(timeout, Pick::Next, callback)
    }

    /// The oldest held task that has not ended, waiting up to `timeout` seconds for one.
    fn current(&self, py: Python<'_>, timeout: f64) -> PyResult<GatedTask> {
        self.wait_for(py, timeout, Pick::Current)
    }

    /// `current` for asyncio tests.
    fn current_async(&self, timeout: f64, callback: Py<PyAny>) -> Pending {
        self.call_back_with(timeout, Pick::Current, callback)
    }

    /// Every task held so far, oldest first (ended ones included).
    fn held(&self) -> Vec<GatedTask> {
        self.gate.held().into_iter().map(|h| self.task(h)).collect()
    }

    /// Removes the gate: later tasks of the tool run its handler again; held tasks stay held.
    fn close(&self) -> bool {
        close(&self.server.gates, &self.gate)
    }
}

/// Removes `gate` from `gates` if it is still the registered one (a later `task_gate` of the
/// same tool after a close made a new one, which this handle must not remove).
fn close(gates: &Gates, gate: &Arc<Gate>) -> bool {
    match gates.get(&gate.tool) {
        Some(current) if Arc::ptr_eq(&current, gate) => gates.close(&gate.tool),
        _ => false,
    }
}

/// One task a gate holds: the test moves it.
#[pyclass(frozen, module = "everything_mcp._core")]
pub struct GatedTask {
    /// The held task and its command inbox.
    held: Arc<Held>,
    /// The server's runtime, where the waits run.
    handle: Handle,
}

impl GatedTask {
    /// Asking the client through the task, with the outcome as Python sees it (the answer as
    /// JSON text, or `ClientError`).
    fn asking(
        &self,
        method: &str,
        params: Option<&str>,
        key: Option<String>,
        timeout: f64,
    ) -> PyResult<impl Future<Output = PyResult<String>> + Send + 'static> {
        let ask = Ask {
            key: key.unwrap_or_default(),
            method: method.into(),
            params: params.map(args::json).transpose()?,
        };
        let held = self.held.clone();
        let what = format!("the client did not answer {method}");
        Ok(bounded(timeout, what, async move {
            match held.ask(ask).await {
                Ok(answer) => Ok(answer.to_string()),
                Err(e) => Err(ClientError::new_err(e.message)),
            }
        }))
    }
}

#[pymethods]
impl GatedTask {
    /// The task id.
    #[getter]
    fn id(&self) -> String {
        self.held.task.id.to_string()
    }

    /// The task as `srv.tasks` lists it (JSON text), now.
    fn info(&self) -> String {
        info(&self.held.task).to_string()
    }

    /// Sets the task's status message (announced in the handshake era, shown by `tasks/get`);
    /// returns once applied, `false` if the task had ended.
    fn status(&self, py: Python<'_>, message: String, timeout: f64) -> PyResult<bool> {
        let what = "the status was not applied";
        self.step(py, timeout, what, |held| async move {
            held.status(message).await
        })
    }

    /// Asks the client through the task (the task is `input_required` meanwhile) and returns
    /// its answer (JSON text); `ClientError` on an error answer, a missing capability or the
    /// task ending first, `TimeoutError` after `timeout` seconds.
    #[pyo3(signature = (method, params, timeout, key=None))]
    fn ask(
        &self,
        py: Python<'_>,
        method: &str,
        params: Option<&str>,
        timeout: f64,
        key: Option<String>,
    ) -> PyResult<String> {
        let asking = self.asking(method, params, key, timeout)?;
        match run_interruptibly(py, &self.handle, None, None, asking)? {
            Waited::Done(answer) => answer,
            Waited::TimedOut | Waited::Stopped => {
                Err(ConnectionClosedError::new_err("the server stopped"))
            }
        }
    }

    /// `ask` for asyncio tests: `callback(answer_json, None)` or `callback(None, error)` later.
    #[pyo3(signature = (method, params, timeout, callback, key=None))]
    fn ask_async(
        &self,
        method: &str,
        params: Option<&str>,
        timeout: f64,
        callback: Py<PyAny>,
        key: Option<String>,
    ) -> PyResult<Pending> {
        let asking = self.asking(method, params, key, timeout)?;
        Ok(call_back(&self.handle, asking, callback))
    }

    /// Ends the task `completed` with `result` (a `CallToolResult`, JSON text) and waits until
    /// it has settled; `false` if it had already ended (e.g. the client cancelled it).
    fn complete(&self, py: Python<'_>, result: &str, timeout: f64) -> PyResult<bool> {
        let result = args::json(result)?;
        self.settle(py, Ok(result), timeout)
    }

    /// Ends the task `failed` with this JSON-RPC error (`data` JSON text) and waits until it
    /// has settled; `false` if it had already ended.
    #[pyo3(signature = (code, message, data, timeout))]
    fn fail(
        &self,
        py: Python<'_>,
        code: i64,
        message: String,
        data: Option<&str>,
        timeout: f64,
    ) -> PyResult<bool> {
        let data = data.map(args::json).transpose()?;
        self.settle(
            py,
            Err(ErrorObject {
                code,
                message,
                data,
            }),
            timeout,
        )
    }

    /// Waits until the task's status is one of `statuses` (any terminal one when empty), at
    /// most `timeout` seconds; returns whether it got there.
    fn wait_status(&self, py: Python<'_>, statuses: Vec<String>, timeout: f64) -> PyResult<bool> {
        let reached = reach(self.held.task.clone(), statuses);
        match run_interruptibly(
            py,
            &self.handle,
            Some(deadline_after(timeout)),
            None,
            reached,
        )? {
            Waited::Done(()) => Ok(true),
            Waited::TimedOut | Waited::Stopped => Ok(false),
        }
    }

    /// `wait_status` for asyncio tests: `callback(reached, None)` later.
    fn wait_status_async(
        &self,
        statuses: Vec<String>,
        timeout: f64,
        callback: Py<PyAny>,
    ) -> Pending {
        let reached = reach(self.held.task.clone(), statuses);
        let deadline = tokio::time::Instant::from_std(deadline_after(timeout));
        let work = async move { Ok(tokio::time::timeout_at(deadline, reached).await.is_ok()) };
        call_back(&self.handle, work, callback)
    }
}

impl GatedTask {
    /// Ends the task with `outcome` and waits until it has settled; `false` if it had ended.
    fn settle(
        &self,
        py: Python<'_>,
        outcome: Result<Value, ErrorObject>,
        timeout: f64,
    ) -> PyResult<bool> {
        let what = "the task did not settle";
        self.step(py, timeout, what, |held| async move {
            held.settle(outcome).await
        })
    }

    /// Moves the held task (`step`) and waits up to `timeout` seconds until the move is
    /// applied (`TimeoutError` saying `what` did not happen); `false` if the task had ended.
    fn step<F>(
        &self,
        py: Python<'_>,
        timeout: f64,
        what: &str,
        step: impl FnOnce(Arc<Held>) -> F,
    ) -> PyResult<bool>
    where
        F: Future<Output = Result<(), Ended>> + Send + 'static,
    {
        let applied = step(self.held.clone());
        wait(py, &self.handle, timeout, what, async move {
            applied.await.is_ok()
        })
    }
}

/// Resolves when `task`'s status is one of `statuses` (any terminal one when empty).
pub async fn reach(task: Arc<Task>, statuses: Vec<String>) {
    let mut rx = task.subscribe();
    loop {
        let now = task.status();
        let there = if statuses.is_empty() {
            now.is_terminal()
        } else {
            statuses.iter().any(|s| s == now.as_str())
        };
        if there || rx.changed().await.is_err() {
            return;
        }
    }
}

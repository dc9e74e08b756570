//! The request context a Python handler receives (`_core.Context`, wrapped by the package's
//! `Context`): the request's ids and revision, progress and log messages, asking the client, the
//! stateless era's round state, its task.

use crate::python::args;
use crate::python::callback::{call_back, Pending};
use crate::python::errors::{ClientError, InputRequired};
use crate::python::wait::{deadline_after, run_interruptibly, Waited};
use crate::server::context::RequestContext;
use crate::server::rounds::Ask;
use pyo3::prelude::*;
use serde_json::Value;
use std::future::Future;
use tokio::runtime::Handle;

/// How long a handler's `ask` waits for the client when the caller gives no timeout.
const ASK_TIMEOUT_SECONDS: f64 = 300.0;

/// The request context handed to a Python handler.
#[pyclass(frozen, module = "everything_mcp._core")]
pub struct Context {
    /// The core context.
    pub(super) ctx: RequestContext,
    /// The runtime: `ask` waits on it from a sync handler's (blocking-pool) thread, `ask_async`
    /// starts its task there.
    pub(super) handle: Handle,
    /// The call's arguments as JSON text, in bytes: the package's record of the call counts
    /// them against its handle's byte bound (the arguments it keeps are Python objects).
    pub(super) arguments_bytes: usize,
}

#[pymethods]
impl Context {
    /// The JSON-RPC id of the request, as JSON text.
    #[getter]
    fn request_id(&self) -> String {
        serde_json::to_string(&self.ctx.request_id).unwrap_or_default()
    }

    /// The call's arguments as JSON text, in bytes (what the handle's record of the call
    /// counts against `keep_calls_bytes`).
    #[getter]
    fn arguments_bytes(&self) -> usize {
        self.arguments_bytes
    }

    /// The session (connection) id.
    #[getter]
    fn session_id(&self) -> String {
        self.ctx.session.id.to_string()
    }

    /// The negotiated protocol revision.
    #[getter]
    fn protocol_version(&self) -> &'static str {
        self.ctx.scope.revision.as_str()
    }

    /// `params._meta` as JSON text.
    #[getter]
    fn meta(&self) -> String {
        Value::Object(self.ctx.meta_map()).to_string()
    }

    /// The client's declared capabilities as JSON text.
    #[getter]
    fn client_capabilities(&self) -> String {
        self.ctx.client_capabilities().to_string()
    }

    /// Whether the client cancelled the request (or the connection ended).
    #[getter]
    fn cancelled(&self) -> bool {
        self.ctx.is_cancelled()
    }

    /// Sends `notifications/progress` if the client asked for progress.
    #[pyo3(signature = (progress, total=None, message=None))]
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.ctx.progress(progress, total, message);
    }

    /// Sends `notifications/message` (`data` is JSON text) unless the client's level filters it.
    #[pyo3(signature = (level, data, logger=None))]
    fn log(&self, level: &str, data: &str, logger: Option<&str>) -> PyResult<()> {
        let (level, data) = args::log(level, data)?;
        self.ctx.log(level, data, logger);
        Ok(())
    }

    /// Asks the client (`sampling/createMessage`, `elicitation/create`, `roots/list`) and waits
    /// for its answer (JSON text), at most `timeout` seconds. A JSON-RPC error from the client,
    /// a missing capability or a timeout raises `ClientError`. In the stateless era the ask is
    /// an `inputRequests` entry under `key` (default: `"<n>"`, the nth unkeyed ask of this run);
    /// an unknown answer raises `InputRequired` (this round is over).
    #[pyo3(signature = (method, params=None, timeout=None, key=None))]
    fn ask(
        &self,
        py: Python<'_>,
        method: &str,
        params: Option<&str>,
        timeout: Option<f64>,
        key: Option<String>,
    ) -> PyResult<String> {
        let asks = vec![self.ask_of(key, method, params)?];
        let asking = self.asking(asks, timeout, true);
        self.wait(py, asking)
    }

    /// `ask` for `async def` handlers: returns at once and calls `callback(answer_json, None)`
    /// or `callback(None, ClientError)` later (see `callback.rs`).
    #[pyo3(signature = (method, params, timeout, callback, key=None))]
    fn ask_async(
        &self,
        method: &str,
        params: Option<&str>,
        timeout: Option<f64>,
        callback: Py<PyAny>,
        key: Option<String>,
    ) -> PyResult<Pending> {
        let asks = vec![self.ask_of(key, method, params)?];
        Ok(call_back(
            &self.handle,
            self.asking(asks, timeout, true),
            callback,
        ))
    }

    /// Asks several things at once (JSON text `[[key, method, params|null], …]`): one round in
    /// the stateless era, concurrent requests in the handshake era. Answers: a JSON array, in
    /// order.
    #[pyo3(signature = (asks, timeout=None))]
    fn ask_all(&self, py: Python<'_>, asks: &str, timeout: Option<f64>) -> PyResult<String> {
        let asking = self.asking(asks_of(asks)?, timeout, false);
        self.wait(py, asking)
    }

    /// `ask_all` for `async def` handlers (see `ask_async`).
    #[pyo3(signature = (asks, timeout, callback))]
    fn ask_all_async(
        &self,
        asks: &str,
        timeout: Option<f64>,
        callback: Py<PyAny>,
    ) -> PyResult<Pending> {
        let asking = self.asking(asks_of(asks)?, timeout, false);
        Ok(call_back(&self.handle, asking, callback))
    }

    /// The state the handler carries between rounds (JSON text; `null` at first and in the
    /// handshake era).
    #[getter]
    fn round_state(&self) -> String {
        self.ctx.round_state().to_string()
    }

    /// Replaces the state carried to the next round (JSON text).
    fn set_round_state(&self, state: &str) -> PyResult<()> {
        self.ctx.set_round_state(args::json(state)?);
        Ok(())
    }

    /// Whether the request is served in the stateless era (asks are input requests).
    #[getter]
    fn stateless(&self) -> bool {
        self.ctx.rounds.is_some()
    }

    /// The id of the task this work runs as, or `None` for an ordinary request.
    #[getter]
    fn task_id(&self) -> Option<String> {
        self.ctx.task.as_ref().map(|t| t.id.to_string())
    }

    /// Sets the status message of the task this work runs as (a no-op outside a task).
    fn task_status(&self, message: String) {
        self.ctx.task_status(None, Some(message));
    }
}

/// `[[key, method, params|null], …]` as asks.
fn asks_of(text: &str) -> PyResult<Vec<Ask>> {
    let parsed: Vec<(String, String, Option<Value>)> = serde_json::from_str(text)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("bad asks: {e}")))?;
    Ok(parsed
        .into_iter()
        .map(|(key, method, params)| Ask {
            key,
            method,
            params,
        })
        .collect())
}

impl Context {
    /// One ask, under `key` or the next automatic one.
    fn ask_of(&self, key: Option<String>, method: &str, params: Option<&str>) -> PyResult<Ask> {
        Ok(Ask {
            key: key.unwrap_or_else(|| self.ctx.next_key()),
            method: method.into(),
            params: params.map(args::json).transpose()?,
        })
    }

    /// Waits for `asking` from a sync handler's thread, interruptibly.
    fn wait(
        &self,
        py: Python<'_>,
        asking: impl Future<Output = PyResult<String>> + Send + 'static,
    ) -> PyResult<String> {
        match run_interruptibly(py, &self.handle, None, None, asking)? {
            Waited::Done(answer) => answer,
            Waited::TimedOut | Waited::Stopped => Err(ClientError::new_err("the server stopped")),
        }
    }

    /// Asking the client, bounded by `timeout` seconds, with its outcome as Python sees it
    /// (`one`: the single answer, else a JSON array): shared by `ask*` and `ask_all*`.
    fn asking(
        &self,
        asks: Vec<Ask>,
        timeout: Option<f64>,
        one: bool,
    ) -> impl Future<Output = PyResult<String>> + Send + 'static {
        let seconds = timeout.unwrap_or(ASK_TIMEOUT_SECONDS);
        let deadline = tokio::time::Instant::from_std(deadline_after(seconds));
        let ctx = self.ctx.clone();
        async move {
            let what = asks
                .iter()
                .map(|a| a.method.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            match tokio::time::timeout_at(deadline, ctx.ask_all(&asks)).await {
                Ok(Ok(mut answers)) if one => Ok(answers.pop().unwrap_or(Value::Null).to_string()),
                Ok(Ok(answers)) => Ok(Value::Array(answers).to_string()),
                Ok(Err(_)) if ctx.round_is_over() => Err(InputRequired::new_err(
                    "this round of the request is over: the client was asked for input",
                )),
                Ok(Err(e)) => Err(ClientError::new_err(e.message)),
                Err(_elapsed) => Err(ClientError::new_err(format!(
                    "the client did not answer {what} within {seconds} s"
                ))),
            }
        }
    }
}

//! Python callables as registry handlers. The Python package wraps each user function in an
//! *invoker*, `invoker(*args, context, reply)`: the arguments are JSON text (or a URI), the
//! answer goes to a [`Reply`] as JSON text, so conversions live in Python and this side stays
//! thin. The invoker runs on tokio's blocking pool (never on a worker thread), attached to Python
//! only for the call. A sync function answers before the invoker returns; an `async def`
//! function is started as a task on the package's event-loop thread, the invoker returns a way to
//! cancel it, and the task's done-callback answers later: no thread waits for it.

use super::args;
use super::callback::{call_back, Pending};
use super::errors::{ClientError, InputRequired};
use super::wait::{deadline_after, run_interruptibly, Waited};
use crate::server::context::RequestContext;
use crate::server::handler::{
    BoxFuture, CompleteFn, HandlerError, HandlerResult, ObjectFn, ResourceFn, TemplateFn,
};
use crate::server::rounds::Ask;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use serde_json::Value;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::runtime::Handle;
use tokio::sync::oneshot;

/// How long a handler's `ask` waits for the client when the caller gives no timeout.
const ASK_TIMEOUT_SECONDS: f64 = 300.0;

/// The request context handed to a Python handler.
#[pyclass(frozen, module = "everything_mcp._core")]
pub struct Context {
    /// The core context.
    ctx: RequestContext,
    /// The runtime: `ask` waits on it from a sync handler's (blocking-pool) thread, `ask_async`
    /// starts its task there.
    handle: Handle,
}

#[pymethods]
impl Context {
    /// The JSON-RPC id of the request, as JSON text.
    #[getter]
    fn request_id(&self) -> String {
        serde_json::to_string(&self.ctx.request_id).unwrap_or_default()
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
        let (level, data) = super::args::log(level, data)?;
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

/// What a Python handler answered: its result as JSON text, or how it failed.
type Answer = Result<String, HandlerError>;

/// Where a Python handler's answer goes, once: the first call of `result`, `error` or `fail`
/// wins, later ones do nothing.
///
/// Why an object rather than the invoker's return value: an `async def` handler answers after the
/// invoker returned, from its task's done-callback; one channel serves both kinds. Why typed
/// methods rather than a marker key inside the result JSON: no result a user legitimately returns
/// can be mistaken for an error.
#[pyclass(frozen, module = "everything_mcp._core")]
pub struct Reply {
    /// Taken by the first answer; the handler's future awaits the other end.
    tx: Mutex<Option<oneshot::Sender<Answer>>>,
}

impl Reply {
    fn send(&self, answer: Answer) {
        let tx = crate::lock::lock(&self.tx).take();
        if let Some(tx) = tx {
            // The request may be gone (cancelled, connection closed): nobody to tell.
            let _ = tx.send(answer);
        }
    }
}

#[pymethods]
impl Reply {
    /// Answers with the handler's result (JSON text).
    fn result(&self, json: String) {
        self.send(Ok(json));
    }

    /// Answers with this JSON-RPC error (`data` as JSON text; `None`: no `data` member).
    #[pyo3(signature = (code, message, data=None))]
    fn error(&self, code: i64, message: String, data: Option<&str>) -> PyResult<()> {
        let data = data.map(args::json).transpose()?;
        self.send(Err(HandlerError::Rpc(crate::jsonrpc::ErrorObject {
            code,
            message,
            data,
        })));
        Ok(())
    }

    /// Answers with a failure: an `isError` result for a tool, `-32603` elsewhere.
    fn fail(&self, text: String) {
        self.send(Err(HandlerError::Failed(text)));
    }
}

/// A Python invoker, shared by every call of one handler.
pub type Invoker = Arc<Py<PyAny>>;

/// A tool, prompt or custom method served by `invoker(arguments_json, context, reply)`.
pub fn object(invoker: Py<PyAny>, handle: &Handle) -> ObjectFn {
    let (invoker, handle) = (Arc::new(invoker), handle.clone());
    Arc::new(move |ctx, args| {
        let args = vec![Value::Object(args).to_string()];
        call_invoker(invoker.clone(), handle.clone(), ctx, args)
    })
}

/// A resource read by `invoker(uri, context, reply)`, which answers a contents array.
pub fn resource(invoker: Py<PyAny>, handle: &Handle) -> ResourceFn {
    let (invoker, handle) = (Arc::new(invoker), handle.clone());
    Arc::new(move |ctx, uri| {
        let call = call_invoker(invoker.clone(), handle.clone(), ctx, vec![uri]);
        Box::pin(async move { contents(call.await?) })
    })
}

/// A resource template read by `invoker(uri, variables_json, context, reply)`, which answers a
/// contents array.
pub fn template(invoker: Py<PyAny>, handle: &Handle) -> TemplateFn {
    let (invoker, handle) = (Arc::new(invoker), handle.clone());
    Arc::new(move |ctx, uri, vars| {
        let args = vec![uri, Value::Object(vars).to_string()];
        let call = call_invoker(invoker.clone(), handle.clone(), ctx, args);
        Box::pin(async move { contents(call.await?) })
    })
}

/// A completion provider: `invoker(value, context_arguments_json, context, reply)` answers a
/// JSON array of strings.
pub fn completion(invoker: Py<PyAny>, handle: &Handle) -> CompleteFn {
    let (invoker, handle) = (Arc::new(invoker), handle.clone());
    Arc::new(move |ctx, _argument, value, context| {
        let args = vec![value, Value::Object(context).to_string()];
        let call = call_invoker(invoker.clone(), handle.clone(), ctx, args);
        Box::pin(async move {
            serde_json::from_value::<Vec<String>>(call.await?).map_err(|e| {
                HandlerError::failed(format!("completions must be a list of strings: {e}"))
            })
        })
    })
}

/// A resource handler's JSON answer as a contents array.
fn contents(value: Value) -> HandlerResult<Vec<Value>> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(HandlerError::failed(format!(
            "a resource handler must return a contents array, got {other}"
        ))),
    }
}

/// Runs `invoker(*args, context, reply)` on the blocking pool and awaits its answer. The
/// request's cancellation (or this future being dropped) cancels a still-running `async def`
/// handler. An exception escaping the invoker is a failure with its text (the invoker already
/// turns user exceptions into answers; this is the safety net).
pub fn call_invoker(
    invoker: Invoker,
    handle: Handle,
    ctx: RequestContext,
    args: Vec<String>,
) -> BoxFuture<HandlerResult<Value>> {
    Box::pin(async move {
        let (tx, answer) = oneshot::channel();
        let cancelled = ctx.scope.cancel.clone();
        let context = Context {
            ctx,
            handle: handle.clone(),
        };
        // Made before the invoker runs: this future may be dropped (the request cancelled) while
        // the blocking thread still starts the handler, and the slot then still cancels it.
        let running = Running {
            slot: Arc::new(Mutex::new(CancelSlot::default())),
            handle,
        };
        let slot = running.slot.clone();
        // A panic in the invoker drops `tx`: the request then ends below.
        let _ = tokio::task::spawn_blocking(move || {
            Python::attach(|py| start(py, &invoker, args, context, tx, &slot))
        })
        .await;
        let answer = tokio::select! {
            answer = answer => answer,
            () = cancelled.cancelled() => return Err(HandlerError::failed("the request was cancelled")),
        };
        crate::lock::lock(&running.slot).cancel = None; // it answered: nothing left to cancel
        let text = answer
            .unwrap_or_else(|_| Err(HandlerError::failed("the handler ended without answering")))?;
        serde_json::from_str(&text)
            .map_err(|e| HandlerError::failed(format!("the handler returned invalid JSON: {e}")))
    })
}

/// Calls the invoker; an `async def` handler still running leaves its `cancel` callable in
/// `slot`, or is cancelled at once when its request already was (or nobody awaits it any more).
fn start(
    py: Python<'_>,
    invoker: &Py<PyAny>,
    args: Vec<String>,
    context: Context,
    tx: oneshot::Sender<Answer>,
    slot: &Mutex<CancelSlot>,
) {
    let cancelled = context.ctx.scope.cancel.clone();
    let reply = Reply {
        tx: Mutex::new(Some(tx)),
    };
    // Cannot fail short of memory; the dropped sender then ends the request.
    let Ok(reply) = Py::new(py, reply) else {
        return;
    };
    let called = (|| -> PyResult<Option<Py<PyAny>>> {
        let mut call_args: Vec<Py<PyAny>> = args
            .iter()
            .map(|a| PyString::new(py, a).into_any().unbind())
            .collect();
        call_args.push(Py::new(py, context)?.into_any());
        call_args.push(reply.clone_ref(py).into_any());
        let returned = invoker.bind(py).call1(PyTuple::new(py, call_args)?)?;
        Ok((!returned.is_none()).then(|| returned.unbind()))
    })();
    match called {
        Ok(Some(cancel)) => {
            // Under the slot's lock, so a cancellation (or the awaiting future's drop) either
            // comes before and is seen here, or after and finds the callable in the slot. (The
            // check alone, before the future took the callable, lost a cancellation arriving in
            // between: tests/test_authoring.py's cancelled handler ran on, once under load.)
            let now = {
                let mut slot = crate::lock::lock(slot);
                if slot.gone || cancelled.is_cancelled() {
                    Some(cancel)
                } else {
                    slot.cancel = Some(cancel);
                    None
                }
            };
            if let Some(cancel) = now {
                cancel_in_python(py, &cancel);
            }
        }
        Ok(None) => {
            reply.get().send(Err(HandlerError::failed(
                "the handler returned without answering",
            )));
        }
        Err(e) => {
            reply
                .get()
                .send(Err(HandlerError::failed(e.value(py).to_string())));
        }
    }
}

/// Where a started `async def` handler's `cancel` callable waits, shared by the blocking thread
/// that starts it and the future that awaits its answer.
#[derive(Default)]
struct CancelSlot {
    /// The invoker's `cancel` callable; `None` before it is started and once there is nothing
    /// to cancel.
    cancel: Option<Py<PyAny>>,
    /// Whether the awaiting future is gone: a handler started after that is cancelled at once.
    gone: bool,
}

/// The awaiting side of a started handler: dropped before it answered, it cancels the Python
/// task.
struct Running {
    /// The handler's cancel callable, once started.
    slot: Arc<Mutex<CancelSlot>>,
    /// To reach the blocking pool from `drop`.
    handle: Handle,
}

impl Drop for Running {
    fn drop(&mut self) {
        let cancel = {
            let mut slot = crate::lock::lock(&self.slot);
            slot.gone = true;
            slot.cancel.take()
        };
        if let Some(cancel) = cancel {
            // Attached on the blocking pool, never on this worker thread: waiting for the GIL
            // there would stall the connections it serves. A runtime shutting down refuses the
            // job; the event loop is stopped then anyway.
            drop(
                self.handle
                    .spawn_blocking(move || Python::attach(|py| cancel_in_python(py, &cancel))),
            );
        }
    }
}

/// Calls a handler's `cancel`; what it raises is reported as unraisable.
fn cancel_in_python(py: Python<'_>, cancel: &Py<PyAny>) {
    if let Err(e) = cancel.call0(py) {
        e.write_unraisable(py, None);
    }
}

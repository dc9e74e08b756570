//! Python callables as registry handlers. The Python package wraps each user function in an
//! *invoker* that takes JSON text (and a [`Context`]) and returns JSON text, so conversions live
//! in Python and this side stays thin: run the invoker on tokio's blocking pool (never on a
//! worker thread), attached to Python only for the call, and turn its text into the core's
//! values. Async user functions are driven by the invoker on the package's event-loop thread.

use super::wait::{deadline_after, wait_interruptibly, Waited};
use crate::server::context::RequestContext;
use crate::server::handler::{BoxFuture, HandlerError, HandlerResult};
use pyo3::prelude::*;
use serde_json::Value;
use std::sync::Arc;
use tokio::runtime::Handle;

/// The request context handed to a Python handler.
#[pyclass(frozen, module = "everything_mcp._core")]
pub struct Context {
    /// The core context.
    ctx: RequestContext,
    /// The runtime, to wait for the client from the handler's (blocking-pool) thread.
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
        self.ctx.revision.as_str()
    }

    /// `params._meta` as JSON text.
    #[getter]
    fn meta(&self) -> String {
        Value::Object(self.ctx.meta.clone()).to_string()
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
    /// a missing capability or a timeout raises `ClientError`.
    #[pyo3(signature = (method, params=None, timeout=None))]
    fn ask(
        &self,
        py: Python<'_>,
        method: &str,
        params: Option<&str>,
        timeout: Option<f64>,
    ) -> PyResult<String> {
        let params = params.map(super::args::json).transpose()?;
        let seconds = timeout.unwrap_or(300.0);
        let deadline = deadline_after(seconds);
        let ctx = self.ctx.clone();
        let method_owned = method.to_string();
        let (tx, mut rx) = tokio::sync::oneshot::channel();
        self.handle.spawn(async move {
            let _ = tx.send(ctx.ask_client(&method_owned, params).await);
        });
        match wait_interruptibly(py, &self.handle, Some(deadline), &mut rx)? {
            Waited::Done(Ok(Ok(v))) => Ok(v.to_string()),
            Waited::Done(Ok(Err(e))) => Err(super::errors::ClientError::new_err(e.message)),
            Waited::Done(Err(_)) | Waited::Stopped => {
                Err(super::errors::ClientError::new_err("the server stopped"))
            }
            Waited::TimedOut => Err(super::errors::ClientError::new_err(format!(
                "the client did not answer {method} within {seconds} s"
            ))),
        }
    }
}

/// A Python invoker, shared by every call of one handler.
pub type Invoker = Arc<Py<PyAny>>;

/// Runs `invoker(*args, context)` on the blocking pool and parses its JSON answer. A Python
/// exception escaping the invoker becomes a handler failure with its text (the invoker already
/// turns user exceptions into results; this is the safety net).
pub fn call_invoker(
    invoker: Invoker,
    handle: Handle,
    ctx: RequestContext,
    args: Vec<String>,
) -> BoxFuture<HandlerResult<Value>> {
    Box::pin(async move {
        let runtime = handle.clone();
        let context = Context {
            ctx,
            handle: runtime,
        };
        let joined = tokio::task::spawn_blocking(move || {
            Python::attach(|py| -> PyResult<String> {
                let context = Py::new(py, context)?;
                let mut call_args: Vec<Py<PyAny>> = args
                    .into_iter()
                    .map(|a| a.into_pyobject(py).map(|o| o.into_any().unbind()))
                    .collect::<Result<_, _>>()?;
                call_args.push(context.into_any());
                let tuple = pyo3::types::PyTuple::new(py, call_args)?;
                invoker.bind(py).call1(tuple)?.extract()
            })
        })
        .await;
        let text = match joined {
            Ok(Ok(text)) => text,
            Ok(Err(e)) => {
                return Err(HandlerError::failed(Python::attach(|py| {
                    e.value(py).to_string()
                })))
            }
            Err(join) => return Err(HandlerError::failed(format!("the handler failed: {join}"))),
        };
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| HandlerError::failed(format!("the handler returned invalid JSON: {e}")))?;
        // `{"__rpc_error__": {...}}` asks for a JSON-RPC error instead of a result.
        if let Some(err) = value.get("__rpc_error__") {
            let error = serde_json::from_value(err.clone())
                .map_err(|e| HandlerError::failed(format!("malformed error object: {e}")))?;
            return Err(HandlerError::Rpc(error));
        }
        Ok(value)
    })
}

//! Where a Python handler's answer goes (`_core.Reply`).

use crate::python::args;
use crate::server::handler::HandlerError;
use pyo3::prelude::*;
use serde_json::{json, Value};
use std::sync::Mutex;
use tokio::sync::oneshot;

/// What a Python handler answered: its result, or how it failed.
pub type Answer = Result<Answered, HandlerError>;

/// A handler's result as Python handed it over.
pub enum Answered {
    /// JSON text.
    Json(String),
    /// A tool's result made of one text block with this text (a tool returning a `str`).
    ToolText(String),
}

impl Answered {
    /// The result as JSON.
    pub fn into_value(self) -> Result<Value, HandlerError> {
        match self {
            Self::Json(text) => serde_json::from_str(&text).map_err(|e| {
                HandlerError::failed(format!("the handler returned invalid JSON: {e}"))
            }),
            Self::ToolText(text) => Ok(json!({"content": [{"type": "text", "text": text}]})),
        }
    }
}

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
    pub(super) tx: Mutex<Option<oneshot::Sender<Answer>>>,
}

impl Reply {
    pub(super) fn send(&self, answer: Answer) {
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
        self.send(Ok(Answered::Json(json)));
    }

    /// Answers a tool call with one text block: what `result` with the JSON of
    /// `{"content": [{"type": "text", "text": text}]}` does, without the JSON text.
    fn tool_text(&self, text: String) {
        self.send(Ok(Answered::ToolText(text)));
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

//! [`RequestContext`]: everything a handler may use while serving one request — its
//! arguments' surroundings (`_meta`, revision), progress, logging, cancellation, and asking the
//! client something. Handlers are written once against this type; the era-specific plumbing
//! (session vs. per-request `_meta`, push request vs. `input_required`) lives behind it.

use super::session::Session;
use super::sink::Sink;
use crate::jsnum;
use crate::jsonrpc::{ErrorObject, Message, RequestId};
use crate::protocol::{LogLevel, Revision};
use serde_json::{Map, Value};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// How long [`RequestContext::ask_client`] waits for the client's answer.
pub const ASK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// The client capability a server → client request needs.
fn required_capability(method: &str) -> Option<&'static str> {
    match method {
        "sampling/createMessage" => Some("sampling"),
        "elicitation/create" => Some("elicitation"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// The context of one request being served.
#[derive(Clone)]
pub struct RequestContext {
    /// The session the request belongs to. In the stateless era this is a per-request session
    /// built from the request's `_meta` (revision, client capabilities, log level).
    pub session: Arc<Session>,
    /// Where messages related to this request go: the connection for stdio, the request's own
    /// SSE stream for Streamable HTTP.
    pub sink: Sink,
    /// The id of the request being served.
    pub request_id: RequestId,
    /// The method being served.
    pub method: String,
    /// The revision the request is served under.
    pub revision: Revision,
    /// `params._meta` as sent (empty when absent).
    pub meta: Map<String, Value>,
    /// Cancelled by `notifications/cancelled`, or when the connection ends.
    pub cancel: CancellationToken,
}

impl RequestContext {
    /// The `progressToken` of the request, if the client asked for progress.
    pub fn progress_token(&self) -> Option<&Value> {
        self.meta.get("progressToken")
    }

    /// Sends `notifications/progress` if the client asked for it (otherwise does nothing).
    /// `message` is dropped for revisions that do not define it (2024-11-05).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = self.progress_token() else {
            return;
        };
        let mut params = Map::new();
        params.insert("progressToken".into(), token.clone());
        params.insert("progress".into(), jsnum::to_json(progress));
        if let Some(t) = total {
            params.insert("total".into(), jsnum::to_json(t));
        }
        if let (Some(m), true) = (message, self.revision.has_progress_message()) {
            params.insert("message".into(), m.into());
        }
        self.sink.send(&Message::notification(
            "notifications/progress",
            Some(Value::Object(params)),
        ));
    }

    /// Sends `notifications/message` unless the client's level filters it out.
    pub fn log(&self, level: LogLevel, data: Value, logger: Option<&str>) {
        self.session.log_to(&self.sink, level, data, logger);
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Resolves when the request is cancelled.
    pub async fn cancelled(&self) {
        self.cancel.cancelled().await;
    }

    /// Asks the client something (`sampling/createMessage`, `elicitation/create`,
    /// `roots/list`) and waits for its answer, at most [`ASK_TIMEOUT`]. In the handshake era
    /// this is a server → client request on this request's stream (the POST's SSE stream over
    /// HTTP). The request is not sent when the client did not declare the capability it needs
    /// (`sampling`, `elicitation`, `roots`): that is an error at once.
    pub async fn ask_client(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ErrorObject> {
        if let Some(capability) = required_capability(method) {
            if self.client_capabilities().get(capability).is_none() {
                return Err(ErrorObject::new(
                    crate::jsonrpc::code::METHOD_NOT_FOUND,
                    format!("the client did not declare the {capability:?} capability needed for {method}"),
                ));
            }
        }
        tokio::select! {
            r = tokio::time::timeout(ASK_TIMEOUT, self.session.request(&self.sink, method, params)) => {
                r.unwrap_or_else(|_| Err(ErrorObject::internal(format!("the client did not answer {method} within {} s", ASK_TIMEOUT.as_secs()))))
            }
            () = self.cancel.cancelled() => Err(ErrorObject::internal("the request was cancelled")),
        }
    }

    /// `sampling/createMessage`: asks the client's LLM.
    pub async fn sample(&self, params: Value) -> Result<Value, ErrorObject> {
        self.ask_client("sampling/createMessage", Some(params))
            .await
    }

    /// `elicitation/create`: asks the user, through the client (form or URL mode).
    pub async fn elicit(&self, params: Value) -> Result<Value, ErrorObject> {
        self.ask_client("elicitation/create", Some(params)).await
    }

    /// `roots/list`: asks the client for its roots.
    pub async fn list_roots(&self) -> Result<Value, ErrorObject> {
        self.ask_client("roots/list", None).await
    }

    /// Ends this request's stream without ending the request (SEP-1699 polling): over
    /// Streamable HTTP the client must resume it with `Last-Event-ID` to get what follows.
    /// Elsewhere (stdio, legacy SSE, JSON responses) it does nothing.
    pub fn close_stream(&self) {
        self.sink.disconnect();
    }

    /// The client's declared capabilities.
    pub fn client_capabilities(&self) -> Value {
        self.session.state().client_capabilities
    }
}

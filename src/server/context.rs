//! [`RequestContext`]: everything a handler may use while serving one request — its
//! arguments' surroundings (`_meta`, revision), progress, logging, cancellation, and asking the
//! client something. Handlers are written once against this type; the era-specific plumbing
//! (session vs. per-request `_meta`, push request vs. `input_required`) lives behind it.

pub use super::model::RequestContext;
use super::rounds::Ask;
use super::scope::{log_message, ClientInfo, Declarations, Declared};
use crate::jsnum;
use crate::jsonrpc::{ErrorObject, Message};
use crate::protocol::meta::RequestMeta;
use crate::protocol::method_names::missing_for_request;
use crate::protocol::method_names::{NotificationMethod, ServerRequest};
use crate::protocol::LogLevel;
use serde_json::{Map, Value};
use std::sync::Arc;

/// How long [`RequestContext::ask_client`] waits for the client's answer.
pub const ASK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

impl RequestContext {
    /// The `progressToken` of the request, if the client asked for progress.
    pub fn progress_token(&self) -> Option<Value> {
        self.meta.as_ref()?.value("progressToken")
    }

    /// `params._meta` as sent, parsed (empty when absent or not an object).
    pub fn meta_map(&self) -> Map<String, Value> {
        self.meta
            .as_ref()
            .map(RequestMeta::to_map)
            .unwrap_or_default()
    }

    /// Sends `notifications/progress` if the client asked for it (otherwise does nothing).
    /// `message` is dropped for revisions that do not define it (2024-11-05).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = self.progress_token() else {
            return;
        };
        let mut params = Map::new();
        params.insert("progressToken".into(), token);
        params.insert("progress".into(), jsnum::to_json(progress));
        if let Some(t) = total {
            params.insert("total".into(), jsnum::to_json(t));
        }
        if let (Some(m), true) = (message, self.scope.revision.has_progress_message()) {
            params.insert("message".into(), m.into());
        }
        self.sink.send(&Message::notification(
            NotificationMethod::Progress.as_str(),
            Some(Value::Object(params)),
        ));
    }

    /// Sends `notifications/message` unless the client's level filters it out.
    pub fn log(&self, level: LogLevel, data: Value, logger: Option<&str>) {
        match &self.scope.declared {
            Declared::Connection => {
                self.session.log_to(&self.sink, level, data, logger);
            }
            Declared::Request(d) => {
                if d.log_filter.allows(level) {
                    self.sink.send(&log_message(level, data, logger));
                }
            }
        }
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.scope.cancel.is_cancelled()
    }

    /// Resolves when the request is cancelled.
    pub async fn cancelled(&self) {
        self.scope.cancel.cancelled().await;
    }

    /// Asks the client something (`sampling/createMessage`, `elicitation/create`,
    /// `roots/list`) and waits for its answer, at most [`ASK_TIMEOUT`]. In the handshake era
    /// this is a server → client request on this request's stream (the POST's SSE stream over
    /// HTTP). The request is not sent when the client did not declare the capability it needs
    /// (`sampling`, `elicitation`, `roots`): that is an error at once. In the stateless era it
    /// is a multi-round-trip ask ([`super::rounds`]) under the automatic key `"<n>"` (the nth
    /// unkeyed ask of this run).
    pub async fn ask_client(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ErrorObject> {
        let key = self.next_key();
        self.ask_keyed(&key, method, params).await
    }

    /// The automatic key of the next unkeyed ask (`"<n>"`; empty in the handshake era, where
    /// keys mean nothing).
    pub fn next_key(&self) -> String {
        self.rounds
            .as_ref()
            .map_or_else(String::new, |r| r.auto_key())
    }

    /// [`RequestContext::ask_client`] under an explicit key: the key of its entry in
    /// `inputRequests` in the stateless era (ignored in the handshake era).
    pub async fn ask_keyed(
        &self,
        key: &str,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ErrorObject> {
        let ask = Ask {
            key: key.into(),
            method: method.into(),
            params,
        };
        let mut answers = self.ask_all(std::slice::from_ref(&ask)).await?;
        Ok(answers.pop().unwrap_or(Value::Null))
    }

    /// Asks several things at once: in ONE round in the stateless era (every unanswered one
    /// appears in the same `inputRequests`), concurrently in the handshake era. The answers
    /// come in the order of `asks`; the first failure fails them all.
    pub async fn ask_all(&self, asks: &[Ask]) -> Result<Vec<Value>, ErrorObject> {
        if let Some(task) = &self.task {
            return self.ask_in_task(task, asks).await;
        }
        let Some(rounds) = &self.rounds else {
            let each = asks
                .iter()
                .map(|a| self.push_request(&a.method, a.params.clone()));
            return futures::future::join_all(each).await.into_iter().collect();
        };
        match rounds.resolve(asks, &self.client_capabilities())? {
            Some(answers) => Ok(answers),
            None => {
                // The round is over: the serving future answers input_required and drops this
                // future; a handler running elsewhere (Python) is released by the cancellation.
                self.scope.cancel.cancelled().await;
                Err(ErrorObject::internal(
                    "this round of the request is over: the client must answer the input requests",
                ))
            }
        }
    }

    /// Whether this stateless request's round ended because input is needed (or the request
    /// fails on a missing capability): a handler that notices must stop, its answer is unused.
    pub fn round_is_over(&self) -> bool {
        self.rounds.as_ref().is_some_and(|r| r.is_over())
    }

    /// The state a stateless handler carries between rounds (`null` at first, and always in
    /// the handshake era, where the handler runs once).
    pub fn round_state(&self) -> Value {
        self.rounds.as_ref().map_or(Value::Null, |r| r.state())
    }

    /// Replaces the state carried to the next round (sealed into `requestState`); does nothing
    /// in the handshake era.
    pub fn set_round_state(&self, state: Value) {
        if let Some(r) = &self.rounds {
            r.set_state(state);
        }
    }

    /// Sets the status message of the task this work runs as (`notifications/tasks/status`
    /// announces it in the handshake era); `status` moves it to `working` or
    /// `input_required` too. Outside a task it does nothing.
    pub fn task_status(&self, status: Option<super::tasks::task::Status>, message: Option<String>) {
        if let Some(task) = &self.task {
            match status {
                Some(s) if !s.is_terminal() => task.set_status(s, message),
                _ => task.set_message(message),
            };
        }
    }

    /// Asking the client from a task. Handshake era: real requests tagged with the task
    /// (`_meta["io.modelcontextprotocol/related-task"]`), the task `input_required` while they
    /// wait. Stateless era: the task's `inputRequests`, answered by `tasks/update`.
    async fn ask_in_task(
        &self,
        task: &Arc<super::tasks::task::Task>,
        asks: &[Ask],
    ) -> Result<Vec<Value>, ErrorObject> {
        use super::tasks::task::{Status, TaskEra};
        let capabilities = self.client_capabilities();
        for a in asks {
            if let Some(missing) = missing_for_request(&a.method, a.params.as_ref(), &capabilities)
            {
                return Err(ErrorObject::new(
                    crate::jsonrpc::code::METHOD_NOT_FOUND,
                    format!(
                        "the client did not declare the {missing:?} capability needed for {}",
                        a.method
                    ),
                ));
            }
        }
        match task.era {
            TaskEra::Handshake => {
                let (was, message) = {
                    let s = task.state();
                    (s.status, s.status_message.clone())
                };
                task.set_status(Status::InputRequired, message.clone());
                let related = serde_json::json!({ "taskId": &*task.id });
                let each = asks.iter().map(|a| {
                    let mut params = match a.params.clone() {
                        Some(Value::Object(m)) => m,
                        _ => Map::new(),
                    };
                    let meta = params
                        .entry("_meta")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(meta) = meta {
                        meta.insert(
                            crate::protocol::capabilities::RELATED_TASK.into(),
                            related.clone(),
                        );
                    }
                    self.push_request(&a.method, Some(Value::Object(params)))
                });
                let answers: Result<Vec<Value>, ErrorObject> =
                    futures::future::join_all(each).await.into_iter().collect();
                // The ask undoes its own input_required. A work that had moved its task to
                // input_required itself (in its own words) moves it back itself, as the
                // reference's tools do ("Continuing with …"): no `working` in between.
                if was != Status::InputRequired && task.status() == Status::InputRequired {
                    task.set_status(Status::Working, message);
                }
                answers
            }
            TaskEra::Stateless => {
                for a in asks {
                    if !ServerRequest::parse(&a.method).is_some_and(|m| m.is_question()) {
                        return Err(ErrorObject::invalid_params(format!(
                            "{} is not a request a server can ask a client",
                            a.method
                        )));
                    }
                }
                let receivers = task.request_input(asks);
                let answers = tokio::select! {
                    a = futures::future::join_all(receivers) => a,
                    () = self.scope.cancel.cancelled() => {
                        return Err(ErrorObject::internal("the task was cancelled"));
                    }
                };
                answers
                    .into_iter()
                    .map(|a| {
                        a.map_err(|_| {
                            ErrorObject::internal("the task ended before the client answered")
                        })
                    })
                    .collect()
            }
        }
    }

    /// A real server → client request (the handshake era).
    async fn push_request(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ErrorObject> {
        if let Some(missing) =
            missing_for_request(method, params.as_ref(), &self.client_capabilities())
        {
            return Err(ErrorObject::new(
                crate::jsonrpc::code::METHOD_NOT_FOUND,
                format!(
                    "the client did not declare the {missing:?} capability needed for {method}"
                ),
            ));
        }
        tokio::select! {
            r = self.server.clock.timeout(ASK_TIMEOUT, self.session.request(&self.sink, method, params)) => {
                r.unwrap_or_else(|| Err(ErrorObject::internal(format!("the client did not answer {method} within {} s", ASK_TIMEOUT.as_secs()))))
            }
            () = self.scope.cancel.cancelled() => Err(ErrorObject::internal("the request was cancelled")),
        }
    }

    /// `sampling/createMessage`: asks the client's LLM.
    pub async fn sample(&self, params: Value) -> Result<Value, ErrorObject> {
        self.ask_client(ServerRequest::CreateMessage.as_str(), Some(params))
            .await
    }

    /// `elicitation/create`: asks the user, through the client (form or URL mode).
    pub async fn elicit(&self, params: Value) -> Result<Value, ErrorObject> {
        self.ask_client(ServerRequest::Elicit.as_str(), Some(params))
            .await
    }

    /// `roots/list`: asks the client for its roots.
    pub async fn list_roots(&self) -> Result<Value, ErrorObject> {
        self.ask_client(ServerRequest::ListRoots.as_str(), None)
            .await
    }

    /// Ends this request's stream without ending the request (SEP-1699 polling): over
    /// Streamable HTTP the client must resume it with `Last-Event-ID` to get what follows.
    /// Elsewhere (stdio, legacy SSE, JSON responses) it does nothing.
    pub fn close_stream(&self) {
        self.sink.disconnect();
    }

    /// The client's declared capabilities.
    pub fn client_capabilities(&self) -> Arc<Value> {
        match &self.scope.declared {
            Declared::Connection => self
                .session
                .read(|s| s.declared.client_capabilities.clone()),
            Declared::Request(d) => d.client_capabilities.clone(),
        }
    }

    /// The client's `clientInfo`, if it sent one.
    pub fn client_info(&self) -> Option<ClientInfo> {
        match &self.scope.declared {
            Declared::Connection => self.session.read(|s| s.declared.client_info.clone()),
            Declared::Request(d) => d.client_info.clone(),
        }
    }

    /// Everything the client declared for this request, as of now.
    pub fn declarations(&self) -> Declarations {
        match &self.scope.declared {
            Declared::Connection => self.session.read(|s| s.declared.clone()),
            Declared::Request(d) => Declarations::clone(d),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::protocol::method_names::missing_for_request;
    use serde_json::json;

    #[test]
    fn server_requests_need_what_the_client_declared() {
        let none = json!({});
        assert_eq!(
            missing_for_request("roots/list", None, &none),
            Some("roots")
        );
        assert_eq!(
            missing_for_request("roots/list", None, &json!({ "roots": {} })),
            None
        );
        let form = json!({ "elicitation": {} });
        let url = Some(json!({ "mode": "url", "url": "https://x" }));
        assert_eq!(missing_for_request("elicitation/create", None, &form), None);
        assert_eq!(
            missing_for_request("elicitation/create", url.as_ref(), &form),
            Some("elicitation.url")
        );
        let both = json!({ "elicitation": { "form": {}, "url": {} } });
        assert_eq!(
            missing_for_request("elicitation/create", url.as_ref(), &both),
            None
        );
        let url_only = json!({ "elicitation": { "url": {} } });
        assert_eq!(
            missing_for_request("elicitation/create", None, &url_only),
            Some("elicitation.form")
        );
        let tools = Some(json!({ "tools": [] }));
        let sampling = json!({ "sampling": {} });
        assert_eq!(
            missing_for_request("sampling/createMessage", tools.as_ref(), &sampling),
            Some("sampling.tools")
        );
        assert_eq!(
            missing_for_request("sampling/createMessage", None, &sampling),
            None
        );
        assert_eq!(missing_for_request("ping", None, &none), None);
    }
}

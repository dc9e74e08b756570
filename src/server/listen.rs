//! `subscriptions/listen` (2026-07-28): the stateless era's only way for a client to hear of
//! changes. A listen request opens a stream that never answers on its own: the server first
//! acknowledges the filter it honours (`notifications/subscriptions/acknowledged`), then sends
//! every matching notification tagged with the listen request's id
//! (`_meta["io.modelcontextprotocol/subscriptionId"]`). The stream ends when the client closes
//! it (HTTP: drops the response; stdio: `notifications/cancelled`), with nothing more sent, or
//! when the server ends it gracefully ([`Server::end_listeners`]), with the listen result.
//! The open streams, their filters and who hears a broadcast are `listeners.rs`.

use super::limits::{refused, Limit};
use super::listeners::{Filter, Listener};
use super::methods::params::required_object;
use super::model::{RequestContext, Server};
use super::session::Session;
use crate::jsonrpc::ErrorObject;
use crate::protocol::envelope::SUBSCRIPTION_ID;
use serde_json::{json, Map, Value};
use std::sync::Arc;

impl Filter {
    /// Reads `params.notifications` (required by the schema); a malformed filter is `-32602`
    /// naming the field, so a client never silently listens to less than it meant to.
    pub fn parse(params: &Map<String, Value>) -> Result<Self, ErrorObject> {
        let notifications = required_object(params, "notifications")?;
        let flag = |key: &str| match notifications.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(ErrorObject::invalid_params(format!(
                "\"notifications.{key}\" must be a boolean, got {}",
                crate::jsonrpc::json_type(other)
            ))),
        };
        let strings = |key: &str| -> Result<Vec<String>, ErrorObject> {
            let mut out: Vec<String> = Vec::new();
            match notifications.get(key) {
                None | Some(Value::Null) => {}
                Some(Value::Array(items)) => {
                    for item in items {
                        let Value::String(item) = item else {
                            return Err(ErrorObject::invalid_params(format!(
                                "\"notifications.{key}\" must be an array of strings"
                            )));
                        };
                        if !out.contains(item) {
                            out.push(item.clone());
                        }
                    }
                }
                Some(other) => {
                    return Err(ErrorObject::invalid_params(format!(
                        "\"notifications.{key}\" must be an array, got {}",
                        crate::jsonrpc::json_type(other)
                    )))
                }
            }
            Ok(out)
        };
        Ok(Self {
            tools_list_changed: flag("toolsListChanged")?,
            prompts_list_changed: flag("promptsListChanged")?,
            resources_list_changed: flag("resourcesListChanged")?,
            resource_subscriptions: strings("resourceSubscriptions")?,
            task_ids: strings("taskIds")?,
        })
    }
}

impl Server {
    /// Ends the listen streams of connection `conn` (or all of them) gracefully: each one is
    /// answered with the listen result (`{"_meta":{subscriptionId},"resultType":"complete"}`),
    /// which tells the client the stream ended on purpose. Returns how many were ended.
    pub fn end_listeners(&self, conn: Option<&str>) -> usize {
        self.listeners.end(conn)
    }

    /// How many listen streams are open.
    pub fn listener_count(&self) -> usize {
        self.listeners.count()
    }
}

/// Serves `subscriptions/listen`: acknowledge, register, then wait. The handler never answers
/// while the stream is open; a client closing it cancels the request (nothing more is sent), a
/// graceful end answers with the listen result.
pub async fn listen(
    server: &Arc<Server>,
    ctx: RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let filter = Filter::parse(params)?;
    let max = server.config.limits.max_listen_streams;
    if server.listeners.count() >= max {
        server.limit_hits.hit(Limit::ListenStreams);
        return Err(refused(
            Limit::ListenStreams,
            max,
            "Too many listen streams are open",
        ));
    }
    if !filter.task_ids.is_empty() && !super::tasks::client_declares_extension(&ctx) {
        return Err(super::tasks::extension_required(
            "Listening to tasks (notifications.taskIds)",
        ));
    }
    let listener = Arc::new(Listener::new(
        ctx.session.id.clone(),
        ctx.request_id.clone(),
        filter,
        ctx.sink.clone(),
        ctx.scope.cancel.clone(),
    ));
    // The stream is a connection of its own to the hooks that act on a subscription: it
    // serves the client that opened it, holds its subscriptions, ends with it, and carries
    // only what its filter names (nothing a hook logs goes on it).
    let uris = listener.filter.resource_subscriptions.clone();
    let ends = ctx.scope.cancel.child_token();
    let _ended = ends.clone().drop_guard();
    let stream = Arc::new(Session::standing(
        ctx.session.id.clone(),
        ctx.session.transport,
        ctx.sink.clone(),
        ends,
        ctx.declarations().without_logs(),
    ));
    stream.update(|s| s.subscriptions = uris.iter().cloned().collect());
    listener.serve_on(&stream);
    if !server.listeners.open(&listener) {
        return Err(ErrorObject::internal("the connection is closed"));
    }
    // `resourceSubscriptions` is the era's `resources/subscribe`: catalogs that act on a
    // subscription (review-lab's timer) see one, made by the stream.
    let registry = server.registry();
    for uri in uris {
        for hook in &registry.on_subscribe {
            hook(server.clone(), stream.clone(), uri.clone(), true);
        }
    }
    listener.ended().await;
    Ok(json!({ "_meta": { SUBSCRIPTION_ID: listener.id } }))
}

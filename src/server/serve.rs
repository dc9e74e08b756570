//! Serving a request that the dispatcher let through: the one future per request
//! ([`Server::serve`]) that runs its handler until it answers, is cancelled, panics (`-32603`)
//! or, in the stateless era, needs input it has no answer for (`input_required`); what the
//! transport does with a frame's outcome ([`Work`]); and the small steps every request takes
//! (in flight on its connection, its params as an object, its answer as a message).

use super::context::RequestContext;
use super::handler::{panic_message, BoxFuture};
use super::methods::{self, Route};
use super::model::Server;
use super::outgoing::Outgoing;
use super::rounds::Rounds;
use super::scope::{Declared, Scope};
use super::session::Session;
use super::sink::Sink;
use crate::jsonrpc::{self, ErrorObject, Message, Request, RequestId};
use crate::protocol::meta::{RequestMeta, META, PROGRESS_TOKEN};
use crate::protocol::method_names::ClientRequest;
use crate::protocol::Revision;
use futures::FutureExt;
use serde_json::{Map, Value};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What the transport must do after handing a frame to [`Server::receive`].
pub enum Work {
    /// Nothing to send (notifications, responses, cancelled requests).
    Nothing,
    /// Send this now.
    Reply(Outgoing),
    /// Spawn this; send what it yields (if anything) on the same sink.
    Task(BoxFuture<Option<Outgoing>>),
    /// Over HTTP: answer the POST with this instead (an inbound hook's scripted status).
    Http(Arc<super::seams::HttpAnswer>),
}

impl Server {
    /// The future that serves a begun request of connection `conn` (`None`: a request that
    /// arrived outside any connection) on `session` (the connection, or the one that stands
    /// for an exchange alone) under `declared` (the connection's declarations, or the
    /// request's own): the handler runs until it answers or the request is cancelled; a panic
    /// becomes `-32603`. With `stateless` (the era's rounds, the method and revision its
    /// result is completed for) it also ends when the handler asks the client something it
    /// has no answer for: the handler is dropped, the request answers `input_required`, and
    /// the handler's token is cancelled so a handler blocked elsewhere (a Python thread in
    /// `ctx.ask`) unwinds.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn serve(
        self: &Arc<Self>,
        conn: Option<&Arc<Session>>,
        (session, declared): (Arc<Session>, Declared),
        sink: Sink,
        mut req: Request,
        route: Route,
        params: Map<String, Value>,
        (generation, cancel): (u64, CancellationToken),
        stateless: Option<(Arc<Rounds>, Option<ClientRequest>, Revision)>,
    ) -> BoxFuture<Option<Outgoing>> {
        // The completion is applied here, in the one future, rather than by a second boxed
        // future around it (an allocation and about 100 instructions a stateless request).
        let (rounds, completion, revision) = match stateless {
            Some((rounds, method, revision)) => (Some(rounds), Some((method, revision)), revision),
            None => (None, None, session.revision()),
        };
        // A responder's answers leave as it gives them (a replay's were completed when they
        // were recorded).
        let completion = completion.filter(|_| !matches!(route, Route::Respond(_)));
        // Handlers read `_meta` from `RequestContext::meta`, never from their params (the
        // parser took it out of them).
        let meta = req.meta.take();
        let ctx = RequestContext {
            server: self.clone(),
            scope: Scope {
                revision,
                declared,
                // A child, so ending a round can stop the handler without cancelling the
                // request.
                cancel: cancel.child_token(),
            },
            session,
            sink,
            request_id: req.id.clone(),
            method: req.method.clone(),
            meta,
            rounds: rounds.clone(),
            task: None,
            task_allowed: false,
        };
        let handler_cancel = ctx.scope.cancel.clone();
        let server = self.clone();
        let conn = conn.cloned();
        Box::pin(async move {
            let id = req.id;
            let serve = AssertUnwindSafe(methods::call(&server, ctx, route, params)).catch_unwind();
            let needed = async {
                match &rounds {
                    Some(r) => r.needed().await,
                    None => std::future::pending().await,
                }
            };
            // Biased: the handler is polled before `needed`, so every ask of one poll (the
            // branches of a `join!`) has registered before the round ends.
            let result = tokio::select! {
                biased;
                () = cancel.cancelled() => None,
                r = serve => Some(r.unwrap_or_else(|panic| {
                    let what = panic_message(panic.as_ref());
                    tracing::error!(method = %req.method, "handler panicked: {what}");
                    Err(ErrorObject::internal(format!("the handler of {} panicked: {what}", req.method)))
                })),
                () = needed => rounds.as_ref().map(|r| r.input_required(&server.state_key)),
            };
            // Only a round that ended stops the handler's token: after an ordinary answer,
            // work the handler spawned with its context keeps running as before.
            if rounds.as_ref().is_some_and(|r| r.is_over()) {
                handler_cancel.cancel();
            }
            if let Some(conn) = &conn {
                conn.end_request(&id, generation);
            }
            // A cancelled request gets no response (the spec: the receiver SHOULD NOT respond),
            // even when its handler noticed the cancellation and returned.
            let out = result
                .filter(|_| !cancel.is_cancelled())
                .map(|r| match (r, completion) {
                    (Ok(value), Some((method, revision))) => {
                        super::outgoing::complete(&server.identity(), method, revision, id, value)
                    }
                    (r, _) => Outgoing::One(outcome_message(id, r)),
                });
            out
        })
    }
}

/// Registers `req` as in flight on `conn`: its generation and cancellation token, or the
/// refusal of an id already in flight there (answered with a null id: echoing the id would look
/// like the answer to the request that is still running under it).
pub(super) fn begin(
    conn: &Session,
    req: &Request,
) -> Result<(u64, CancellationToken), ErrorObject> {
    conn.begin_request(&req.id).ok_or_else(|| {
        ErrorObject::invalid_request(format!(
            "request id {} is already in flight on this connection",
            req.id
        ))
    })
}

/// Takes `req`'s params as an object (absent → empty); arrays are not MCP params, which is
/// `-32602` for a method that exists (`routed`) and nothing for one that does not (its
/// `-32601` follows).
pub(super) fn split_params(
    req: &mut Request,
    routed: bool,
) -> Result<Map<String, Value>, ErrorObject> {
    let params = match req.params.take() {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) if !routed => Map::new(),
        Some(other) => {
            return Err(ErrorObject::invalid_params(format!(
                "\"params\" must be an object, got {}",
                jsonrpc::json_type(&other)
            )))
        }
    };
    Ok(params)
}

/// Every revision's schema types `params._meta` as an object and its `progressToken` as a string
/// or an integer: anything else is `-32602`, before a handler could take it for absent (a
/// `_meta` that is not an object is left in `params` by the frame reader).
pub(super) fn check_meta(
    params: &Map<String, Value>,
    meta: Option<&RequestMeta>,
) -> Result<(), ErrorObject> {
    if let Some(other) = params.get(META) {
        return Err(ErrorObject::invalid_params(format!(
            "\"_meta\" must be an object, got {}",
            jsonrpc::json_type(other)
        )));
    }
    match meta.and_then(|m| m.get(PROGRESS_TOKEN)) {
        None | Some(Value::String(_)) => Ok(()),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(()),
        Some(other) => Err(ErrorObject::invalid_params(format!(
            "\"_meta.progressToken\" must be a string or an integer, got {}",
            jsonrpc::json_type(other)
        ))),
    }
}

/// The response (or error response) for a finished request.
pub(super) fn outcome_message(id: RequestId, result: Result<Value, ErrorObject>) -> Message {
    match result {
        Ok(v) => Message::response(id, v),
        Err(e) => Message::error(Some(id), e),
    }
}

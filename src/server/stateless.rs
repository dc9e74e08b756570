//! The stateless era's gate (2026-07-28). A request is served statelessly when its `_meta`
//! carries the envelope (`io.modelcontextprotocol/protocolVersion`), or when it arrives on a
//! connection that already serves that era; it is then described by its own envelope instead of
//! a handshake, served by a session of its own ([`Session::for_request`]), and its result is
//! completed the way every stateless result must be ([`complete`]). Handlers and
//! `RequestContext` are the same in both eras.

use super::dispatch::Work;
use super::methods::Route;
use super::rounds::Rounds;
use super::session::{Phase, Session};
use super::sink::{Outgoing, Sink};
use super::Server;
use crate::jsonrpc::{ErrorObject, Message, Request};
use crate::meta::RequestMeta;
use crate::protocol::envelope::{self, SERVER_INFO};
use crate::protocol::methods::ClientRequest;
use crate::protocol::Revision;
use serde_json::{Map, Value};
use std::sync::Arc;

/// How long a client may cache a cacheable result (`ttlMs`): not at all, because a test
/// registers and removes tools, resources and prompts at any moment.
const CACHE_TTL_MS: u64 = 0;

/// Who may share a cached result (`cacheScope`): only this client, because what a client sees
/// depends on the capabilities it declared (capability-gated tools).
const CACHE_SCOPE: &str = "private";

impl Server {
    /// Whether this server serves the stateless era: a stateless revision is allowed (after
    /// `--era` and `--revision`, and not while a handshake-only catalog such as `everything-v1`
    /// is loaded: [`Server::new`] drops the stateless revisions then).
    pub fn serves_stateless(&self) -> bool {
        self.eras.1
    }

    /// Whether this server serves the handshake era (a handshake revision is allowed).
    pub fn serves_handshake(&self) -> bool {
        self.eras.0
    }

    /// Whether a request of connection `session` with this `_meta` is served statelessly:
    /// the server serves that era, and the connection already does or the request carries the
    /// envelope before any handshake (a server serving only the stateless era serves every
    /// request so).
    pub(super) fn is_stateless_request(
        &self,
        session: &Session,
        meta: Option<&RequestMeta>,
    ) -> bool {
        if !self.serves_stateless() {
            return false;
        }
        match session.phase() {
            Phase::Stateless => true,
            Phase::New => !self.serves_handshake() || envelope::is_stateless(meta),
            Phase::Initializing | Phase::Ready => false,
        }
    }

    /// Serves a stateless request that arrived on connection `conn`: method, then envelope,
    /// then the handler on a session of the request's own. `frame` is the request's wire text
    /// (`None` inside a batch), which its rounds re-read if they need the arguments.
    pub(super) fn handle_stateless(
        self: &Arc<Self>,
        conn: &Arc<Session>,
        sink: &Sink,
        req: Request,
        route: Option<Route>,
        params: Map<String, Value>,
        frame: Option<Arc<str>>,
    ) -> Work {
        let reply =
            |e: ErrorObject| Work::Reply(Outgoing::One(Message::error(Some(req.id.clone()), e)));
        // Methods the era removed are unknown here, whatever the envelope says.
        let route = match route {
            Some(Route::Builtin(m)) if !m.in_stateless_era() => None,
            other => other,
        };
        let Some(route) = route else {
            return reply(ErrorObject::method_not_found(&req.method));
        };
        let envelope = match envelope::read(req.meta.as_ref(), &self.config.revisions) {
            Ok(e) => e,
            Err(e) => return reply(e),
        };
        conn.update(|s| {
            if s.phase == Phase::New {
                s.phase = Phase::Stateless;
            }
        });
        let builtin = match &route {
            Route::Builtin(m) => Some(*m),
            Route::Custom(_) => None,
        };
        // A tampered, expired or misplaced requestState is refused before anything runs.
        let rounds = match Rounds::open(&self.state_key, &req.method, builtin, &params, frame) {
            Ok(r) => Arc::new(r),
            Err(e) => return reply(e),
        };
        let (generation, cancel) = match super::dispatch::begin(conn, &req) {
            Ok(begun) => begun,
            Err(refused) => return Work::Reply(Outgoing::One(Message::error(None, refused))),
        };
        // Everything the request's handler sends is recorded as of the request's revision.
        let sink = &sink.clone().tagged(envelope.revision);
        let revision = envelope.revision;
        let session = Arc::new(Session::for_request(
            conn.id.clone(),
            conn.transport,
            sink.clone(),
            envelope,
            cancel.child_token(),
        ));
        let work = self.serve(
            conn,
            session,
            sink,
            req,
            route,
            params,
            (generation, cancel),
            Some(rounds),
        );
        let server = self.clone();
        Work::Task(Box::pin(async move {
            work.await.map(|out| match out {
                Outgoing::One(Message::Response { id, result }) => Outgoing::One(
                    Message::response(id, complete(&server, builtin, revision, result)),
                ),
                other => other,
            })
        }))
    }
}

/// Completes a stateless result as the spec requires: `resultType` (`"complete"` unless the
/// handler chose another, e.g. `"input_required"`), the server's identity in
/// `_meta["io.modelcontextprotocol/serverInfo"]`, and for cacheable methods `ttlMs` and
/// `cacheScope`. What the handler set itself is kept.
pub fn complete(
    server: &Server,
    method: Option<ClientRequest>,
    revision: Revision,
    result: Value,
) -> Value {
    let Value::Object(mut result) = result else {
        return result;
    };
    result
        .entry("resultType")
        .or_insert_with(|| "complete".into());
    if method.is_some_and(ClientRequest::is_cacheable) {
        result.entry("ttlMs").or_insert_with(|| CACHE_TTL_MS.into());
        result
            .entry("cacheScope")
            .or_insert_with(|| CACHE_SCOPE.into());
    }
    if revision == Revision::V2026_07_28 && !crate::field::contains(&result, "_meta") {
        result.insert("_meta".into(), server.stateless_meta.clone());
        return Value::Object(result);
    }
    let meta = result
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.entry(SERVER_INFO)
            .or_insert_with(|| server.server_info(revision));
    }
    Value::Object(result)
}

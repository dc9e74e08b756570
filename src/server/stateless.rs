//! The stateless era's gate (2026-07-28). A request is served statelessly when its `_meta`
//! carries the envelope (`io.modelcontextprotocol/protocolVersion`), or when it arrives on a
//! connection that already serves that era; it is then described by its own envelope instead of
//! a handshake (its [`super::scope::Scope`] holds what the envelope declares), and its result is
//! completed the way every stateless result must be ([`complete`]). Handlers and
//! `RequestContext` are the same in both eras.

use super::serve::{begin, check_meta, split_params, Work};

use super::exchange::{Exchange, Origin};
use super::methods::Route;
use super::model::Server;
use super::rounds::Rounds;
use super::scope::{Declarations, Declared};
use super::session::{Phase, Session};
use super::sink::{Outgoing, Sink};
use crate::jsonrpc::{ErrorObject, Message, Request};
use serde_json::Map;
use std::sync::Arc;

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

    /// Serves a stateless request from `origin`: params, method, then the envelope the
    /// [`Exchange`] read, then the handler under the envelope's declarations (on its
    /// connection, or on one that stands for the exchange and ends with it). `frame` is the request's wire text (`None` inside a batch), which its rounds re-read
    /// if they need the arguments.
    pub(super) fn handle_stateless(
        self: &Arc<Self>,
        origin: Origin<'_>,
        sink: &Sink,
        mut req: Request,
        exchange: Exchange,
        frame: Option<Arc<str>>,
    ) -> Work {
        let route = self.route(&req.method);
        let params = match split_params(&mut req, route.is_some()) {
            Ok(p) => p,
            Err(e) => return Work::Reply(Outgoing::One(Message::error(Some(req.id), e))),
        };
        let reply =
            |e: ErrorObject| Work::Reply(Outgoing::One(Message::error(Some(req.id.clone()), e)));
        // Methods the era removed are unknown here, whatever the envelope says.
        let route = match route {
            Some(Route::Builtin(m)) if !m.in_stateless_era() => None,
            other => other,
        };
        let Some(route) = route else {
            return reply(self.method_not_found(&req.method));
        };
        let envelope = match exchange.envelope {
            Some(Ok(e)) => e,
            Some(Err(e)) => return reply(e),
            None => {
                return reply(ErrorObject::internal(
                    "no envelope was read for a stateless request",
                ))
            }
        };
        if let Err(e) = check_meta(&params, req.meta.as_ref()) {
            return reply(e);
        }
        if let Origin::Connection(conn) = origin {
            conn.update(|s| {
                if s.phase == Phase::New {
                    s.phase = Phase::Stateless;
                }
            });
        }
        let builtin = match &route {
            Route::Builtin(m) => Some(*m),
            Route::Custom(_) | Route::Respond(_) => None,
        };
        // A responder's answers are what it says, completed already: its `requestState`s are
        // not this server's to open.
        let responds = matches!(route, Route::Respond(_));
        let (state_params, frame) = match responds {
            true => (&Map::new(), None),
            false => (&params, frame),
        };
        // A tampered, expired or misplaced requestState is refused before anything runs.
        let rounds = match Rounds::open(&self.state_key, &req.method, builtin, state_params, frame)
        {
            Ok(r) => Arc::new(r),
            Err(e) => return reply(e),
        };
        // On a connection the request is in flight there (a client may cancel it); an
        // exchange alone is its request, and its end is the request's.
        let (conn, begun) = match origin {
            Origin::Connection(conn) => match begin(conn, &req) {
                Ok(begun) => (Some(conn), begun),
                Err(refused) => return Work::Reply(Outgoing::One(Message::error(None, refused))),
            },
            Origin::Alone(alone) => (None, (0, alone.ended.clone())),
        };
        // Everything the request's handler sends is recorded as of the request's revision.
        let (revision, declarations) = Declarations::of_envelope(envelope);
        let tagged = sink.clone().tagged(revision);
        // On a connection the declarations are the request's own; an exchange alone is a
        // connection of its own that serves the client as its request declared, and ends with it.
        let served = match origin {
            Origin::Connection(conn) => (conn.clone(), Declared::Request(Arc::new(declarations))),
            Origin::Alone(alone) => (
                Arc::new(Session::standing(
                    alone.conn.clone(),
                    alone.transport,
                    tagged.clone(),
                    begun.1.clone(),
                    declarations,
                )),
                Declared::Connection,
            ),
        };
        Work::Task(self.serve(
            conn,
            served,
            tagged,
            req,
            route,
            params,
            begun,
            Some((rounds, builtin, revision)),
        ))
    }
}

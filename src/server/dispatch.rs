//! From bytes to work: record the frame, decode it, apply the lifecycle rules, and either answer
//! at once (errors, `initialize`, `ping`) or hand back a future that serves the request.
//!
//! The decision part runs in frame order on the transport's read loop, so a pipelined
//! `initialize` + `tools/list` can never race; the serving part runs concurrently, so a slow
//! tool does not block `ping` or `notifications/cancelled`.

use super::context::RequestContext;
use super::exchange::{Alone, Decoded, Exchange, Origin};
use super::handler::{panic_message, BoxFuture};
use super::methods::{self, Route};
use super::model::Server;
use super::rounds::Rounds;
use super::seams::{Inbound, InboundFrame};
use super::session::{Phase, Session};
use super::sink::{Outgoing, Sink};
use crate::jsonrpc::{
    self, ErrorObject, Frame, Invalid, Message, Notification, Request, RequestId,
};
use crate::protocol::method_names::{ClientRequest, NotificationMethod};
use crate::protocol::{Era, Revision};
use crate::traffic::{FrameSummary, HttpMeta};
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
}

impl Server {
    /// What serves `method`: a built-in MCP request (one an extension brings only while the
    /// registry declares it) or a registered custom method; `None` means `-32601`.
    pub fn route(&self, method: &str) -> Option<Route> {
        match ClientRequest::parse(method) {
            Some(builtin) => match builtin.extension() {
                Some(id) if !self.registry().extensions.contains_key(id) => None,
                _ => Some(Route::Builtin(builtin)),
            },
            None => self
                .registry()
                .methods
                .get(method)
                .cloned()
                .map(Route::Custom),
        }
    }

    /// Whether a handshake-era client may call `method` here (anything else is `-32601`).
    pub fn knows_handshake_method(&self, method: &str) -> bool {
        match ClientRequest::parse(method) {
            Some(m) => m.in_handshake_era(),
            None => self.registry().methods.contains_key(method),
        }
    }

    /// Takes one incoming frame of connection `session` (one stdio line, one HTTP body).
    /// `sink` is where messages related to this frame's requests go. `http` is recorded with
    /// the frame.
    pub fn receive(
        self: &Arc<Self>,
        session: &Arc<Session>,
        sink: &Sink,
        raw: &[u8],
        http: Option<Arc<HttpMeta>>,
    ) -> Work {
        let origin = Origin::Connection(session);
        let decoded = self.decode(origin, raw);
        self.accept(origin, sink, decoded, http)
    }

    /// Records a decoded frame from `origin` (with `http` metadata), then answers or schedules
    /// it as its [`Exchange`] says.
    pub fn accept(
        self: &Arc<Self>,
        origin: Origin<'_>,
        sink: &Sink,
        decoded: Decoded,
        http: Option<Arc<HttpMeta>>,
    ) -> Work {
        let meta = origin.inbound_meta(http);
        let Decoded {
            text,
            exact,
            frame,
            exchange,
        } = decoded;
        match frame {
            Err(invalid) => {
                self.recorder
                    .record(&meta, text, invalid_parsed(&invalid, exact));
                Work::Reply(Outgoing::One(invalid.into_message()))
            }
            Ok(Frame::Single(message)) => {
                let parsed = FrameSummary::of_message(&message);
                let meta = exchange.tag(meta);
                // Kept (a count, not a copy) for a stateless request's rounds, which re-read
                // the request's arguments from it only if they ever seal or open a state.
                let frame = text.clone();
                self.recorder.record(&meta, text, parsed);
                if self.seams.armed() {
                    if let Some(work) = self.inbound_seam(origin, &meta, &exchange, &message) {
                        return work;
                    }
                }
                self.handle_message(origin, sink, message, exchange, Some(frame))
            }
            Ok(Frame::Batch(items)) => {
                let batch = FrameSummary::batch();
                self.recorder.record(&meta, text, batch);
                self.receive_batch(origin, sink, items)
            }
        }
    }

    /// The inbound seam ([`super::seams`]): what replaces serving `message`, if its hooks say
    /// so (a drop is nothing; an answer is the error, for a request).
    fn inbound_seam(
        &self,
        origin: Origin<'_>,
        meta: &crate::traffic::FrameMeta,
        exchange: &Exchange,
        message: &Message,
    ) -> Option<Work> {
        let frame = InboundFrame {
            conn: origin.conn(),
            transport: origin.transport(),
            era: exchange.era,
            revision: meta.revision,
            message,
        };
        match self.seams.inbound(&frame) {
            Inbound::Pass => None,
            Inbound::Drop => Some(Work::Nothing),
            Inbound::Answer(error) => Some(match message {
                Message::Request(r) => {
                    Work::Reply(Outgoing::One(Message::error(Some(r.id.clone()), error)))
                }
                _ => Work::Nothing,
            }),
        }
    }

    /// Records a decoded frame from `origin` (with `http` metadata) that the transport refuses
    /// before it is served, and returns the refusal: `error`, keeping the request's id when it
    /// has one.
    pub fn reject(
        &self,
        origin: Origin<'_>,
        decoded: Decoded,
        error: ErrorObject,
        http: Option<Arc<HttpMeta>>,
    ) -> Outgoing {
        let meta = origin.inbound_meta(http);
        let Decoded {
            text, exact, frame, ..
        } = decoded;
        let (parsed, id) = match &frame {
            Ok(Frame::Single(message)) => {
                let id = match message {
                    Message::Request(r) => Some(r.id.clone()),
                    _ => None,
                };
                (FrameSummary::of_message(message), id)
            }
            Err(invalid) => (invalid_parsed(invalid, exact), None),
            Ok(Frame::Batch(_)) => (FrameSummary::batch().text_exact(exact), None),
        };
        self.recorder.record(&meta, text, parsed);
        Outgoing::One(Message::error(id, error))
    }

    /// Takes a frame that was over `max_message_bytes`: recorded (truncated), answered with
    /// `-32600`, never parsed.
    pub fn receive_oversized(
        &self,
        origin: Origin<'_>,
        prefix: &[u8],
        size: usize,
        http: Option<Arc<HttpMeta>>,
    ) -> Work {
        let limit = self.config.max_message_bytes;
        let error = ErrorObject::invalid_request(format!(
            "message of {size} bytes exceeds the {limit}-byte limit"
        ));
        self.recorder.record_oversized(
            &origin.inbound_meta(http),
            prefix,
            size,
            error.message.clone(),
        );
        Work::Reply(Outgoing::One(Message::error(None, error)))
    }

    /// Serves the elements of an allowed batch; their replies go out as one array.
    fn receive_batch(
        self: &Arc<Self>,
        origin: Origin<'_>,
        sink: &Sink,
        items: Vec<Result<Message, Invalid>>,
    ) -> Work {
        let mut replies = Vec::new();
        let mut tasks = Vec::new();
        for item in items {
            let work =
                item.map(|m| self.handle_message(origin, sink, m, Exchange::batch_item(), None));
            match work {
                Err(invalid) => replies.push(invalid.into_message()),
                Ok(Work::Nothing) => {}
                Ok(Work::Reply(out)) => out.add_to(&mut replies),
                Ok(Work::Task(t)) => tasks.push(t),
            }
        }
        if tasks.is_empty() {
            return if replies.is_empty() {
                Work::Nothing
            } else {
                Work::Reply(Outgoing::Batch(replies))
            };
        }
        Work::Task(Box::pin(async move {
            for out in futures::future::join_all(tasks).await.into_iter().flatten() {
                out.add_to(&mut replies);
            }
            (!replies.is_empty()).then_some(Outgoing::Batch(replies))
        }))
    }

    /// Routes one decoded message; `frame` is its wire text when it came alone (not in a batch).
    fn handle_message(
        self: &Arc<Self>,
        origin: Origin<'_>,
        sink: &Sink,
        message: Message,
        exchange: Exchange,
        frame: Option<Arc<str>>,
    ) -> Work {
        let conn = match origin {
            Origin::Connection(conn) => conn,
            Origin::Alone(alone) => {
                return self.handle_alone(alone, sink, message, exchange, frame)
            }
        };
        match message {
            Message::Request(req) => self.handle_request(conn, sink, req, exchange, frame),
            Message::Notification(n) => {
                self.handle_notification(conn, n);
                Work::Nothing
            }
            Message::Response { id, result } => {
                if !conn.complete_request(&id, Ok(result)) {
                    tracing::warn!(conn = %conn.id, %id, "response to an unknown or finished server request ignored");
                }
                Work::Nothing
            }
            Message::Error {
                id: Some(id),
                error,
            } => {
                if !conn.complete_request(&id, Err(error)) {
                    tracing::warn!(conn = %conn.id, %id, "error response to an unknown or finished server request ignored");
                }
                Work::Nothing
            }
            Message::Error { id: None, error } => {
                tracing::warn!(conn = %conn.id, code = error.code, "client reported an error without id: {}", error.message);
                Work::Nothing
            }
        }
    }

    /// Routes a message that arrived outside any connection (an HTTP POST without a session).
    /// The transport serves only the stateless era so (a handshake-era frame alone is an
    /// `initialize`, which opens a session first): its request is served by a session of its
    /// own that ends with the exchange; a notification's hooks see such a session; nothing
    /// waits for a response there.
    fn handle_alone(
        self: &Arc<Self>,
        alone: &Alone,
        sink: &Sink,
        message: Message,
        exchange: Exchange,
        frame: Option<Arc<str>>,
    ) -> Work {
        match message {
            Message::Request(req) => {
                self.handle_stateless(Origin::Alone(alone), sink, req, exchange, frame)
            }
            Message::Notification(n) => {
                let stand_in = Arc::new(Session::new(
                    alone.conn.clone(),
                    alone.transport,
                    sink.clone(),
                ));
                stand_in.update(|s| s.phase = Phase::Stateless);
                self.handle_notification(&stand_in, n);
                Work::Nothing
            }
            Message::Response { .. } | Message::Error { .. } => {
                tracing::warn!(conn = %alone.conn, "a response outside any session answers no server request; ignored");
                Work::Nothing
            }
        }
    }

    /// Routes a request of connection `conn` to its era (as its [`Exchange`] decided): the
    /// stateless gate (`stateless.rs`) or the handshake lifecycle rules; then answers or
    /// schedules it. `frame` is the request's wire text, if it came alone.
    fn handle_request(
        self: &Arc<Self>,
        conn: &Arc<Session>,
        sink: &Sink,
        req: Request,
        exchange: Exchange,
        frame: Option<Arc<str>>,
    ) -> Work {
        if exchange.era == Era::Stateless {
            return self.handle_stateless(Origin::Connection(conn), sink, req, exchange, frame);
        }
        let reply = |m: Message| Work::Reply(Outgoing::One(m));
        let route = self.route(&req.method);
        let mut req = req;
        let params = match split_params(&mut req, route.is_some()) {
            Ok(p) => p,
            Err(e) => return reply(Message::error(Some(req.id), e)),
        };
        if exchange.carries_envelope && conn.phase() != Phase::New {
            let e = ErrorObject::invalid_request(
                "this connection serves the handshake era (it sent initialize); requests carrying the 2026-07-28 envelope are not accepted on it",
            );
            return reply(Message::error(Some(req.id), e));
        }
        let Some(route) = route.filter(|r| match r {
            Route::Builtin(m) => m.in_handshake_era(),
            Route::Custom(_) => true,
        }) else {
            return reply(Message::error(
                Some(req.id),
                ErrorObject::method_not_found(&req.method),
            ));
        };
        // Answered in frame order, before anything that follows them is decided.
        match route {
            Route::Builtin(ClientRequest::Initialize) => {
                let result = methods::lifecycle::initialize(self, conn, &params);
                return reply(outcome_message(req.id, result));
            }
            Route::Builtin(ClientRequest::Ping) => {
                return reply(outcome_message(req.id, methods::lifecycle::ping()))
            }
            _ => {}
        }
        if conn.phase() == Phase::New {
            let e = ErrorObject::invalid_request(format!(
                "received {:?} before initialize; the client must send initialize first",
                req.method
            ));
            return reply(Message::error(Some(req.id), e));
        }
        match begin(conn, &req) {
            Ok(begun) => {
                let request_session = conn.clone();
                Work::Task(self.serve(
                    Some(conn),
                    request_session,
                    sink,
                    req,
                    route,
                    params,
                    begun,
                    None,
                ))
            }
            Err(refused) => reply(Message::error(None, refused)),
        }
    }

    /// The future that serves a begun request of connection `conn` (`None`: a request that
    /// arrived outside any connection) on `session` (the connection's own in the handshake
    /// era, the request's own in the stateless era): the handler runs until it answers or the
    /// request is cancelled; a panic becomes `-32603`. With `stateless` (the era's rounds, the
    /// method and revision its result is completed for) it also ends when the handler asks
    /// the client something it has no answer for: the handler is dropped, the request answers
    /// `input_required`, and the handler's token is cancelled so a handler blocked elsewhere
    /// (a Python thread in `ctx.ask`) unwinds.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn serve(
        self: &Arc<Self>,
        conn: Option<&Arc<Session>>,
        session: Arc<Session>,
        sink: &Sink,
        mut req: Request,
        route: Route,
        params: Map<String, Value>,
        (generation, cancel): (u64, CancellationToken),
        stateless: Option<(Arc<Rounds>, Option<ClientRequest>, Revision)>,
    ) -> BoxFuture<Option<Outgoing>> {
        // The completion is applied here, in the one future, rather than by a second boxed
        // future around it (an allocation and about 100 instructions a stateless request).
        let (rounds, completion) = match stateless {
            Some((rounds, method, revision)) => (Some(rounds), Some((method, revision))),
            None => (None, None),
        };
        // Handlers read `_meta` from `RequestContext::meta`, never from their params (the
        // parser took it out of them).
        let meta = req.meta.take();
        let ctx = RequestContext {
            server: self.clone(),
            revision: session.revision(),
            session,
            sink: sink.clone(),
            request_id: req.id.clone(),
            method: req.method.clone(),
            meta,
            // A child, so ending a round can stop the handler without cancelling the request.
            cancel: cancel.child_token(),
            rounds: rounds.clone(),
            task: None,
            task_allowed: false,
        };
        let handler_cancel = ctx.cancel.clone();
        let server = self.clone();
        let conn = conn.cloned();
        Box::pin(async move {
            let id = req.id;
            let session = ctx.session.clone();
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
            if conn.as_ref().is_some_and(|c| !Arc::ptr_eq(&session, c)) {
                session.close(); // a request's own session ends with it
            }
            out
        })
    }

    /// Handles a client notification (never answered).
    fn handle_notification(self: &Arc<Self>, session: &Arc<Session>, n: Notification) {
        match NotificationMethod::parse(&n.method) {
            Some(NotificationMethod::Initialized) => {
                let changed = session.update(|s| {
                    let was = s.phase;
                    if was == Phase::Initializing {
                        s.phase = Phase::Ready;
                    }
                    was
                });
                match changed {
                    Phase::New => {
                        tracing::warn!(conn = %session.id, "notifications/initialized before initialize ignored")
                    }
                    Phase::Initializing => {
                        for hook in &self.registry().on_initialized {
                            hook(self.clone(), session.clone());
                        }
                    }
                    Phase::Ready | Phase::Stateless => {}
                }
            }
            Some(NotificationMethod::Cancelled) => {
                let id = n
                    .params
                    .as_ref()
                    .and_then(|p| p.get("requestId"))
                    .and_then(RequestId::from_value);
                match id {
                    Some(id) => {
                        if !session.cancel_request(&id) {
                            tracing::debug!(conn = %session.id, %id, "cancellation of a request not in flight ignored");
                        }
                    }
                    None => {
                        tracing::warn!(conn = %session.id, "notifications/cancelled without a valid requestId ignored")
                    }
                }
            }
            _ => {
                let method = n.method.as_str();
                tracing::debug!(conn = %session.id, method, "notification received");
                for hook in &self.registry().on_notification {
                    hook(self.clone(), session.clone(), method, n.params.as_ref());
                }
            }
        }
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
    match req.params.take() {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m),
        Some(_) if !routed => Ok(Map::new()),
        Some(other) => Err(ErrorObject::invalid_params(format!(
            "\"params\" must be an object, got {}",
            jsonrpc::json_type(&other)
        ))),
    }
}

/// The response (or error response) for a finished request.
fn outcome_message(id: RequestId, result: Result<Value, ErrorObject>) -> Message {
    match result {
        Ok(v) => Message::response(id, v),
        Err(e) => Message::error(Some(id), e),
    }
}

/// The recorder's view of a frame that is not a valid message.
fn invalid_parsed(invalid: &Invalid, exact: bool) -> FrameSummary {
    FrameSummary::invalid(invalid.error.message.clone(), invalid.id.clone()).text_exact(exact)
}

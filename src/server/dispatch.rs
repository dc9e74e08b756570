//! From bytes to work: record the frame, decode it, apply the lifecycle rules, and either answer
//! at once (errors, `initialize`, `ping`) or hand back a future that serves the request.
//!
//! The decision part runs in frame order on the transport's read loop, so a pipelined
//! `initialize` + `tools/list` can never race; the serving part runs concurrently, so a slow
//! tool does not block `ping` or `notifications/cancelled`.

use super::exchange::{Alone, Decoded, Exchange, Origin};
use super::methods::{self, Route};
use super::model::Server;
use super::scope::{Declarations, Declared};
use super::seamed::Seamed;
use super::seams::Inbound;
pub use super::serve::Work;
use super::serve::{begin, check_meta, outcome_message, split_params};
use super::session::{Phase, Session};
use super::sink::{Outgoing, Sink};
use crate::jsonrpc::{ErrorObject, Frame, Invalid, Message, Notification, Request, RequestId};
use crate::protocol::method_names::{ClientRequest, NotificationMethod};
use crate::protocol::Era;
use crate::traffic::{FrameSummary, HttpMeta};
use std::sync::Arc;

impl Server {
    /// What serves `method`: a built-in MCP request (one an extension brings only while the
    /// registry declares it) or a registered custom method; `None` means `-32601`.
    pub fn route(&self, method: &str) -> Option<Route> {
        if self.responds {
            if let Some(responder) = &self.registry().responder {
                return Some(Route::Respond(responder.clone()));
            }
        }
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

    /// The `-32601` for `method`, in the server's dialect's words when it has its own.
    pub fn method_not_found(&self, method: &str) -> ErrorObject {
        self.config
            .dialect
            .and_then(|d| d.method_not_found(method))
            .unwrap_or_else(|| ErrorObject::method_not_found(method))
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
                let mut meta = exchange.tag(meta);
                // Kept (a count, not a copy) for a stateless request's rounds, which re-read
                // the request's arguments from it only if they ever seal or open a state.
                let frame = text.clone();
                if !self.seams.armed() {
                    self.recorder.record(&meta, text, parsed);
                    return self.handle_message(origin, sink, message, exchange, Some(frame));
                }
                // The inbound seam decides before the frame is recorded, so that its record
                // carries the mark of the rule that acted on it (and an HTTP answer's status).
                let verdict = self.inbound_seam(origin, &meta, &exchange, &message);
                meta.fault = verdict.mark;
                let mut parsed = parsed;
                if let (Inbound::Http(answer), Some(http)) = (&verdict.inbound, &meta.http) {
                    meta.http = Some(Arc::new(HttpMeta {
                        status: answer.status,
                        ..HttpMeta::clone(http)
                    }));
                    // A scripted challenge refuses the request as the auth lab's own do, and
                    // its record says why (the report reads it as it reads theirs).
                    if let Some(challenge) = &answer.challenge {
                        parsed.error = Some(challenge.description());
                    }
                }
                // Decided before the frame is recorded too: a delay's sleep is set by then, so a
                // test that sees the record and advances a manual clock ends the delay.
                let seamed = self.instead(origin, &message, &exchange, verdict.inbound);
                self.recorder.record(&meta, text, parsed);
                if let Some(first) = &verdict.first {
                    self.send_first(origin, &sink.marked_by(meta.fault.clone()), first);
                }
                if let Some(shape) = verdict.http {
                    super::seams::shape_exchange(shape);
                }
                match seamed {
                    Seamed::Instead(work) => work,
                    Seamed::Late(delay) => {
                        let work =
                            self.handle_message(origin, sink, message, exchange, Some(frame));
                        delay.then(work)
                    }
                    Seamed::Answered(delay) => {
                        let work =
                            self.handle_message(origin, sink, message, exchange, Some(frame));
                        delay.after(work)
                    }
                    Seamed::Pass => {
                        self.handle_message(origin, sink, message, exchange, Some(frame))
                    }
                }
            }
            Ok(Frame::Batch(items)) => {
                let batch = FrameSummary::batch();
                self.recorder.record(&meta, text, batch);
                self.receive_batch(origin, sink, items)
            }
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
        self.limit_hits.hit(super::limits::Limit::MessageBytes);
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
                // Batch items do not pass the inbound seam: no scripted HTTP answer here.
                Ok(Work::Nothing | Work::Http(_)) => {}
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
                let stand_in = Arc::new(Session::standing(
                    alone.conn.clone(),
                    alone.transport,
                    sink.clone(),
                    alone.ended.clone(),
                    Declarations::none(),
                ));
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
        let dialect = self.config.dialect;
        let Some(route) = route.filter(|r| match r {
            Route::Builtin(m) => {
                m.in_handshake_era() && dialect.is_none_or(|d| d.serves(m.as_str()))
            }
            Route::Custom(_) | Route::Respond(_) => true,
        }) else {
            return reply(Message::error(
                Some(req.id),
                self.method_not_found(&req.method),
            ));
        };
        if let Err(e) = check_meta(&params, req.meta.as_ref()) {
            return reply(Message::error(Some(req.id), e));
        }
        let is = |m: ClientRequest| req.method == m.as_str();
        // A responder's `initialize` answered at once is answered in frame order too.
        let handshake = matches!(route, Route::Respond(_)) && is(ClientRequest::Initialize);
        // Answered in frame order, before anything that follows them is decided.
        match route {
            Route::Respond(_) if is(ClientRequest::Initialize) => {
                // The session's handshake as the core keeps it (whatever the client sent); the
                // answer is the responder's, served as any request's.
                let _ = methods::lifecycle::initialize(self, conn, &params);
                conn.update(|s| {
                    if s.phase == Phase::New {
                        s.phase = Phase::Initializing;
                    }
                });
            }
            Route::Respond(_) if is(ClientRequest::Ping) => {
                return reply(outcome_message(req.id, methods::lifecycle::ping()))
            }
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
                let served = self.serve(
                    Some(conn),
                    (conn.clone(), Declared::Connection),
                    sink.clone(),
                    req,
                    route,
                    params,
                    begun,
                    None,
                );
                if handshake {
                    return answered_at_once(served);
                }
                Work::Task(served)
            }
            Err(refused) => reply(Message::error(None, refused)),
        }
    }

    /// Handles a client notification (never answered).
    fn handle_notification(self: &Arc<Self>, session: &Arc<Session>, n: Notification) {
        let lenient = self.config.dialect.is_some_and(|d| d.lenient_handshake());
        let method = match n.method.as_str() {
            "initialized" if lenient => Some(NotificationMethod::Initialized),
            other => NotificationMethod::parse(other),
        };
        match method {
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

/// `served` polled once: its answer now, when it has one (a replayed `initialize`: the client's
/// next frame, its `initialized`, is then decided after it, as with any server), else the
/// future to spawn (one passed to a real server).
fn answered_at_once(mut served: super::handler::BoxFuture<Option<Outgoing>>) -> Work {
    let mut cx = std::task::Context::from_waker(futures::task::noop_waker_ref());
    match served.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(Some(out)) => Work::Reply(out),
        std::task::Poll::Ready(None) => Work::Nothing,
        std::task::Poll::Pending => Work::Task(served),
    }
}

/// The recorder's view of a frame that is not a valid message.
fn invalid_parsed(invalid: &Invalid, exact: bool) -> FrameSummary {
    FrameSummary::invalid(invalid.error.message.clone(), invalid.id.clone()).text_exact(exact)
}

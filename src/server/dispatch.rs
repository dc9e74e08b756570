//! From bytes to work: record the frame, decode it, apply the lifecycle rules, and either answer
//! at once (errors, `initialize`, `ping`) or hand back a future that serves the request.
//!
//! The decision part runs in frame order on the transport's read loop, so a pipelined
//! `initialize` + `tools/list` can never race; the serving part runs concurrently, so a slow
//! tool does not block `ping` or `notifications/cancelled`.

use super::context::RequestContext;
use super::handler::BoxFuture;
use super::methods::{self, Route};
use super::rounds::Rounds;
use super::session::{Phase, Session};
use super::sink::{Outgoing, Sink};
use super::Server;
use crate::jsonrpc::{
    self, ErrorObject, Frame, Invalid, Message, Notification, Request, RequestId,
};
use crate::protocol::meta::RequestMeta;
use crate::protocol::methods::{ClientRequest, NotificationMethod};
use crate::protocol::revision::negotiate;
use crate::protocol::{envelope, frame};
use crate::protocol::{Era, Revision};
use crate::traffic::{Direction, FrameMeta, HttpMeta, Kind, Parsed};
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

/// One incoming frame, decoded but not yet recorded or acted on. Transports that must decide
/// something first (HTTP: the status code, whether a session is needed) look at it, then hand
/// it to [`Server::accept`].
pub struct Decoded {
    /// The frame as text (invalid UTF-8 replaced), for the record (which keeps this very
    /// allocation).
    text: Arc<str>,
    /// Whether `text` is the frame exactly (no invalid UTF-8 was replaced).
    exact: bool,
    /// The decision: messages to handle, or the error to answer with.
    frame: Result<Frame, Invalid>,
}

impl Decoded {
    /// Whether the frame is a valid message (or an allowed batch).
    pub fn is_valid(&self) -> bool {
        self.frame.is_ok()
    }

    /// Whether answering it takes a response: it holds a request, or it is invalid (its error
    /// is the answer). Notifications and responses alone are not answered.
    pub fn expects_reply(&self) -> bool {
        match &self.frame {
            Err(_) => true,
            Ok(Frame::Single(m)) => matches!(m, Message::Request(_)),
            Ok(Frame::Batch(items)) => items
                .iter()
                .any(|i| matches!(i, Ok(Message::Request(_)) | Err(_))),
        }
    }

    /// Whether a single request or notification carries the stateless envelope.
    pub fn has_envelope(&self) -> bool {
        match &self.frame {
            Ok(Frame::Single(message)) => envelope::is_stateless(envelope_meta(message).as_deref()),
            _ => false,
        }
    }

    /// The revision a single request's envelope names, if it names a known one (served or
    /// not): what its records are tagged with.
    pub fn requested_revision(&self) -> Option<Revision> {
        envelope::requested_revision(self.request()?.meta.as_ref())
    }

    /// The frame as text (for recording a transport-level refusal of it).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The method of a single request or notification.
    pub fn method(&self) -> Option<&str> {
        match &self.frame {
            Ok(Frame::Single(m)) => m.method(),
            _ => None,
        }
    }

    /// The error a rejected frame is answered with.
    pub fn error(&self) -> Option<&ErrorObject> {
        self.frame.as_ref().err().map(|i| &*i.error)
    }

    /// The frame's single request, if it is one: what a transport checks against its own
    /// metadata (the stateless era's HTTP headers) before the request is served.
    pub fn request(&self) -> Option<&Request> {
        match &self.frame {
            Ok(Frame::Single(Message::Request(r))) => Some(r),
            _ => None,
        }
    }

    /// Whether the frame is a single JSON-RPC response (a result or an error answering some
    /// request): the stateless era has no server requests to answer, so HTTP refuses these.
    pub fn is_response(&self) -> bool {
        matches!(
            &self.frame,
            Ok(Frame::Single(
                Message::Response { .. } | Message::Error { .. }
            ))
        )
    }
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

    /// Decodes one incoming frame of `session` (batches are refused here unless the session's
    /// revision allows them).
    /// `session` is `None` for a frame that arrived outside any session (an HTTP POST without
    /// `Mcp-Session-Id`): batches are refused there.
    pub fn decode(&self, session: Option<&Session>, raw: &[u8]) -> Decoded {
        // UTF-8 is checked once: valid text is parsed as it is, invalid is refused by
        // `parse_json` (and recorded with the bad bytes replaced).
        let (text, exact, value) = match std::str::from_utf8(raw) {
            Ok(valid) => {
                let text = Arc::from(valid);
                let value = frame::parse_raw_str(&text);
                (text, true, value)
            }
            Err(_) => (
                Arc::from(String::from_utf8_lossy(raw)),
                false,
                jsonrpc::parse_json(raw).map(frame::RawFrame::from),
            ),
        };
        let value = match value {
            Ok(v) => v,
            Err(invalid) => {
                return Decoded {
                    text,
                    exact,
                    frame: Err(invalid),
                }
            }
        };
        let refusal = if value.is_batch() {
            batch_refusal(session.and_then(|s| s.state().revision))
        } else {
            None
        };
        let frame = match refusal {
            Some(e) => Err(Invalid::anonymous(ErrorObject::invalid_request(e))),
            None => value.classify(),
        };
        Decoded { text, exact, frame }
    }

    /// Takes one incoming frame of `session` (one stdio line, one HTTP body). `sink` is where
    /// messages related to this frame's requests go. `http` is recorded with the frame.
    pub fn receive(
        self: &Arc<Self>,
        session: &Arc<Session>,
        sink: &Sink,
        raw: &[u8],
        http: Option<Arc<HttpMeta>>,
    ) -> Work {
        let decoded = self.decode(Some(session), raw);
        self.accept(session, sink, decoded, http)
    }

    /// Records a decoded frame (with `http` metadata), then answers or schedules it.
    pub fn accept(
        self: &Arc<Self>,
        session: &Arc<Session>,
        sink: &Sink,
        decoded: Decoded,
        http: Option<Arc<HttpMeta>>,
    ) -> Work {
        let meta = inbound_meta(session, http);
        let Decoded { text, exact, frame } = decoded;
        match frame {
            Err(invalid) => {
                self.recorder
                    .record(&meta, text, invalid_parsed(&invalid, exact));
                Work::Reply(Outgoing::One(invalid.into_message()))
            }
            Ok(Frame::Single(message)) => {
                let parsed = Parsed::of_message(&message);
                let meta = self.tag_inbound(meta, session, &message);
                // Kept (a count, not a copy) for a stateless request's rounds, which re-read
                // the request's arguments from it only if they ever seal or open a state.
                let frame = text.clone();
                self.recorder.record(&meta, text, parsed);
                self.handle_message(session, sink, message, Some(frame))
            }
            Ok(Frame::Batch(items)) => {
                let batch = Parsed {
                    exact: true,
                    error: None,
                    kind: Kind::Batch,
                    method: None,
                    id: None,
                };
                self.recorder.record(&meta, text, batch);
                self.receive_batch(session, sink, items)
            }
        }
    }

    /// Records a decoded frame (with `http` metadata) that the transport refuses before it is
    /// served, and returns the refusal: `error`, keeping the request's id when it has one.
    pub fn reject(
        &self,
        session: &Session,
        decoded: Decoded,
        error: ErrorObject,
        http: Option<Arc<HttpMeta>>,
    ) -> Outgoing {
        let meta = inbound_meta(session, http);
        let Decoded { text, exact, frame } = decoded;
        let (parsed, id) = match &frame {
            Ok(Frame::Single(message)) => {
                let id = match message {
                    Message::Request(r) => Some(r.id.clone()),
                    _ => None,
                };
                (Parsed::of_message(message), id)
            }
            Err(invalid) => (invalid_parsed(invalid, exact), None),
            Ok(Frame::Batch(_)) => (
                Parsed {
                    exact,
                    error: None,
                    kind: Kind::Batch,
                    method: None,
                    id: None,
                },
                None,
            ),
        };
        self.recorder.record(&meta, text, parsed);
        Outgoing::One(Message::error(id, error))
    }

    /// Takes a frame that was over `max_message_bytes`: recorded (truncated), answered with
    /// `-32600`, never parsed.
    pub fn receive_oversized(
        &self,
        session: &Session,
        prefix: &[u8],
        size: usize,
        http: Option<Arc<HttpMeta>>,
    ) -> Work {
        let limit = self.config.max_message_bytes;
        let error = ErrorObject::invalid_request(format!(
            "message of {size} bytes exceeds the {limit}-byte limit"
        ));
        self.recorder.record_oversized(
            &inbound_meta(session, http),
            prefix,
            size,
            error.message.clone(),
        );
        Work::Reply(Outgoing::One(Message::error(None, error)))
    }

    /// Serves the elements of an allowed batch; their replies go out as one array.
    fn receive_batch(
        self: &Arc<Self>,
        session: &Arc<Session>,
        sink: &Sink,
        items: Vec<Result<Message, Invalid>>,
    ) -> Work {
        let mut replies = Vec::new();
        let mut tasks = Vec::new();
        for item in items {
            match item.map(|m| self.handle_message(session, sink, m, None)) {
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
        session: &Arc<Session>,
        sink: &Sink,
        message: Message,
        frame: Option<Arc<str>>,
    ) -> Work {
        match message {
            Message::Request(req) => self.handle_request(session, sink, req, frame),
            Message::Notification(n) => {
                self.handle_notification(session, n);
                Work::Nothing
            }
            Message::Response { id, result } => {
                if !session.complete_request(&id, Ok(result)) {
                    tracing::warn!(conn = %session.id, %id, "response to an unknown or finished server request ignored");
                }
                Work::Nothing
            }
            Message::Error {
                id: Some(id),
                error,
            } => {
                if !session.complete_request(&id, Err(error)) {
                    tracing::warn!(conn = %session.id, %id, "error response to an unknown or finished server request ignored");
                }
                Work::Nothing
            }
            Message::Error { id: None, error } => {
                tracing::warn!(conn = %session.id, code = error.code, "client reported an error without id: {}", error.message);
                Work::Nothing
            }
        }
    }

    /// Routes a request to its era: the stateless gate (`stateless.rs`) or the handshake
    /// lifecycle rules; then answers or schedules it. `frame` is the request's wire text, if
    /// it came alone.
    fn handle_request(
        self: &Arc<Self>,
        session: &Arc<Session>,
        sink: &Sink,
        mut req: Request,
        frame: Option<Arc<str>>,
    ) -> Work {
        let reply = |m: Message| Work::Reply(Outgoing::One(m));
        let route = self.route(&req.method);
        let params = match split_params(req.params.take()) {
            Ok(p) => p,
            Err(e) if route.is_some() => return reply(Message::error(Some(req.id), e)),
            Err(_) => Map::new(),
        };
        if self.is_stateless_request(session, req.meta.as_ref()) {
            return self.handle_stateless(session, sink, req, route, params, frame);
        }
        if envelope::is_stateless(req.meta.as_ref()) && session.phase() != Phase::New {
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
                let result = methods::lifecycle::initialize(self, session, &params);
                return reply(outcome_message(req.id, result));
            }
            Route::Builtin(ClientRequest::Ping) => {
                return reply(outcome_message(req.id, methods::lifecycle::ping()))
            }
            _ => {}
        }
        if session.phase() == Phase::New {
            let e = ErrorObject::invalid_request(format!(
                "received {:?} before initialize; the client must send initialize first",
                req.method
            ));
            return reply(Message::error(Some(req.id), e));
        }
        match begin(session, &req) {
            Ok(begun) => {
                let request_session = session.clone();
                Work::Task(self.serve(
                    session,
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

    /// The future that serves a begun request of connection `conn` on `session` (the
    /// connection's own in the handshake era, the request's own in the stateless era): the
    /// handler runs until it answers or the request is cancelled; a panic becomes `-32603`.
    /// With `stateless` (the era's rounds, the method and revision its result is completed
    /// for) it also ends when the handler asks the client something it has no answer for: the
    /// handler is dropped, the request answers `input_required`, and the handler's token is
    /// cancelled so a handler blocked elsewhere (a Python thread in `ctx.ask`) unwinds.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn serve(
        self: &Arc<Self>,
        conn: &Arc<Session>,
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
        let conn = conn.clone();
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
            conn.end_request(&id, generation);
            // A cancelled request gets no response (the spec: the receiver SHOULD NOT respond),
            // even when its handler noticed the cancellation and returned.
            let out = result
                .filter(|_| !cancel.is_cancelled())
                .map(|r| match (r, completion) {
                    (Ok(value), Some((method, revision))) => {
                        super::stateless::complete(&server, method, revision, id, value)
                    }
                    (r, _) => Outgoing::One(outcome_message(id, r)),
                });
            if !Arc::ptr_eq(&session, &conn) {
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
    // A connection of one request (a stateless POST) has no other request to tell it apart
    // from and no cancellation to find it by: its end is the request's. Registering it cost
    // every such request about 1,600 instructions (a table, a child token; callgrind).
    if conn.one_request {
        return Ok((0, conn.closed.clone()));
    }
    conn.begin_request(&req.id).ok_or_else(|| {
        ErrorObject::invalid_request(format!(
            "request id {} is already in flight on this connection",
            req.id
        ))
    })
}

/// Why a batch cannot be served under the negotiated `revision`, if it cannot.
fn batch_refusal(revision: Option<crate::protocol::Revision>) -> Option<String> {
    match revision {
        None => Some("a JSON-RPC batch is not allowed before initialize (and initialize must not be batched)".into()),
        Some(r) if !r.allows_batches() => Some(format!(
            "JSON-RPC batches are not supported in protocol revision {r} (only 2025-03-26 allows them); send one message per frame"
        )),
        Some(_) => None,
    }
}

impl Server {
    /// The era and revision an incoming `message` of `session` belongs to, for its record: a
    /// stateless request's envelope says it; `initialize` will get the revision negotiation picks; a
    /// stateless connection's frame without a usable envelope is still of that era; anything
    /// else belongs to the session's negotiated revision (unknown before `initialize`).
    fn tag_inbound(&self, meta: FrameMeta, session: &Session, message: &Message) -> FrameMeta {
        if !self.recorder.capturing() {
            return meta; // no record will hold it
        }
        let params = match message {
            Message::Request(r) => r.params.as_ref(),
            Message::Notification(n) => n.params.as_ref(),
            _ => None,
        }
        .and_then(Value::as_object);
        let sent_meta = envelope_meta(message);
        // The gate's own decision: an envelope the server does not serve statelessly (a
        // handshake-only server, a handshake connection) does not make the frame stateless.
        if params.is_some() && self.is_stateless_request(session, sent_meta.as_deref()) {
            // A connection whose sink is tagged (a stateless POST's, when its revision is served)
            // names this very revision already: reading it again cost about 300 instructions
            // (callgrind).
            let revision = session
                .sink
                .revision()
                .or_else(|| envelope::requested_revision(sent_meta.as_deref()));
            return FrameMeta {
                era: Some(Era::Stateless),
                ..meta
            }
            .with_revision(revision);
        }
        if let Message::Request(r) = message {
            if r.method == ClientRequest::Initialize.as_str() {
                let requested = params
                    .and_then(|p| p.get("protocolVersion"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let revision = negotiate(requested, &self.config.revisions);
                return meta.with_revision(revision);
            }
        }
        let (phase, revision) = session.read(|s| (s.phase, s.revision));
        if phase == Phase::Stateless {
            return FrameMeta {
                era: Some(Era::Stateless),
                ..meta
            }
            .with_revision(revision);
        }
        meta.with_revision(revision)
    }
}

/// The `_meta` of a request or notification: a request's as the parser kept it; a
/// notification's (which keeps it in its params, for its hooks) read from its params.
fn envelope_meta(message: &Message) -> Option<std::borrow::Cow<'_, RequestMeta>> {
    use std::borrow::Cow;
    match message {
        Message::Request(r) => r.meta.as_ref().map(Cow::Borrowed),
        Message::Notification(n) => n
            .params
            .as_ref()
            .and_then(RequestMeta::in_params)
            .map(Cow::Owned),
        _ => None,
    }
}

/// The recorder's description of a frame of `session` arriving.
fn inbound_meta(session: &Session, http: Option<Arc<HttpMeta>>) -> FrameMeta {
    FrameMeta {
        dir: Direction::In,
        transport: session.transport,
        conn: session.id.clone(),
        stream: None,
        http,
        era: None,
        revision: None,
    }
}

/// The text of a panic payload.
pub(super) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Separates `params` into an object (absent → empty); arrays are not MCP params.
fn split_params(params: Option<Value>) -> Result<Map<String, Value>, ErrorObject> {
    match params {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m),
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
fn invalid_parsed(invalid: &Invalid, exact: bool) -> Parsed {
    Parsed {
        exact,
        error: Some(invalid.error.message.clone()),
        kind: Kind::Invalid,
        method: None,
        id: invalid.id.clone(),
    }
}

//! A connection's state: its lifecycle phase, the requests it has in flight (so
//! `notifications/cancelled` can stop them), the requests the server sent it (so their
//! responses find their way back), its subscriptions and, in the handshake era, what
//! `initialize` settled (revision, the client's declarations). What a single request is served
//! under is its [`super::scope::Scope`].

use super::limits::{self, Limit};
use super::scope::{log_message, Declarations};
use super::sink::Sink;
use crate::jsonrpc::{ErrorObject, Message, RequestId};
use crate::lock::lock;
use crate::protocol::{LogFilter, LogLevel, Revision};
use crate::traffic::TransportKind;
use serde_json::Value;
use std::any::{Any, TypeId};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Where a connection is in the lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Nothing but `initialize` (and `ping`) is accepted yet.
    New,
    /// `initialize` was answered; `notifications/initialized` has not arrived. Requests are
    /// served (clients pipeline) and notifications such as `list_changed` are sent.
    Initializing,
    /// `notifications/initialized` arrived.
    Ready,
    /// A connection that serves the stateless era (its first request carried a 2026 envelope),
    /// or one that stands for a single stateless exchange, listen stream or task
    /// ([`Session::standing`]): each request brings its own declarations
    /// ([`super::scope::Scope`]); the connection itself gets no broadcasts.
    Stateless,
}

/// What the `initialize` exchange settled, plus the settings the client changes later.
#[derive(Debug, Clone)]
pub struct SessionState {
    /// Lifecycle phase.
    pub phase: Phase,
    /// The negotiated revision (set by `initialize`).
    pub revision: Option<Revision>,
    /// What the client declared in `initialize` (its log level changed by
    /// `logging/setLevel`); for a standing connection, what the request it stands for declared.
    pub declared: Declarations,
    /// URIs the client subscribed to with `resources/subscribe` (a listen stream: its
    /// `resourceSubscriptions`).
    pub subscriptions: HashSet<String>,
}

impl SessionState {
    /// Before `initialize`: nothing declared.
    fn fresh() -> Self {
        Self {
            phase: Phase::New,
            revision: None,
            declared: Declarations::none(),
            subscriptions: HashSet::new(),
        }
    }
}

/// How many of a catalog's timers run for a connection (a session extension: the catalog
/// counts them as it starts and stops them), for a dialect whose peer stays alive while one
/// runs (the reference, after its stdin ends).
#[derive(Default)]
pub struct RunningTimers(std::sync::atomic::AtomicUsize);

impl RunningTimers {
    /// One more runs.
    pub fn started(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// One stopped.
    pub fn stopped(&self) {
        let _ = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    /// Whether any runs.
    pub fn any(&self) -> bool {
        self.0.load(Ordering::Relaxed) > 0
    }
}

/// A request the server sent to the client, waiting for its response.
struct PendingRequest {
    /// Completed with the client's result or error.
    reply: oneshot::Sender<Result<Value, ErrorObject>>,
}

/// Removes a server → client request from the pending ones when its waiter goes away, however
/// it ends (answered, failed, timed out, dropped).
struct ForgetPending<'a> {
    /// The session's pending requests.
    pending: &'a Mutex<crate::fast_map::FastMap<RequestId, PendingRequest>>,
    /// The request's id.
    id: RequestId,
}

impl Drop for ForgetPending<'_> {
    fn drop(&mut self) {
        lock(self.pending).remove(&self.id);
    }
}

/// One client connection (stdio, in-memory) or one `Mcp-Session-Id` (HTTP).
pub struct Session {
    /// Stable id: recorded as `conn` in traffic, issued as `Mcp-Session-Id` over HTTP.
    pub id: Arc<str>,
    /// The transport the client came in on.
    pub transport: TransportKind,
    /// Where messages not tied to a request go (stdio: stdout; HTTP: the GET stream).
    pub sink: Sink,
    /// Cancelled when the connection ends: every handler of this session stops.
    pub closed: CancellationToken,
    /// Lifecycle, revision, client declarations, log level, subscriptions.
    state: Mutex<SessionState>,
    /// Requests from the client being handled, by id, so they can be cancelled. The number
    /// tells apart two requests that reused an id (one cancelled, one new).
    inflight: Mutex<crate::fast_map::FastMap<RequestId, (u64, CancellationToken)>>,
    /// Numbers in-flight requests.
    next_generation: AtomicU64,
    /// Requests to the client awaiting a response, by the id the server gave them.
    pending: Mutex<crate::fast_map::FastMap<RequestId, PendingRequest>>,
    /// The next id for a server → client request (a separate id space from the client's).
    next_request_id: AtomicI64,
    /// State that catalogs attach to the session (see [`Session::extension`]).
    extensions: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

impl Session {
    /// A fresh session in phase [`Phase::New`].
    pub fn new(id: Arc<str>, transport: TransportKind, sink: Sink) -> Self {
        let state = SessionState::fresh();
        Self::with_state(id, transport, sink, CancellationToken::new(), state)
    }

    /// A connection that stands for one stateless exchange (an HTTP POST without a session),
    /// listen stream or task on connection `id`: in phase [`Phase::Stateless`], serving the
    /// client as `declared` (what the request that opened it declared), and ending when
    /// `closed` fires (the exchange, the stream or the task ends), which stops anything a
    /// handler started on it. It is not registered with the server: a stateless client hears
    /// of changes only through `subscriptions/listen`.
    pub fn standing(
        id: Arc<str>,
        transport: TransportKind,
        sink: Sink,
        closed: CancellationToken,
        declared: Declarations,
    ) -> Self {
        let mut state = SessionState::fresh();
        state.phase = Phase::Stateless;
        state.declared = declared;
        Self::with_state(id, transport, sink, closed, state)
    }

    /// A session with this state and close token, nothing in flight.
    fn with_state(
        id: Arc<str>,
        transport: TransportKind,
        sink: Sink,
        closed: CancellationToken,
        state: SessionState,
    ) -> Self {
        Self {
            id,
            transport,
            sink,
            closed,
            state: Mutex::new(state),
            inflight: Mutex::default(),
            next_generation: AtomicU64::new(0),
            pending: Mutex::default(),
            next_request_id: AtomicI64::new(0),
            extensions: Mutex::new(HashMap::new()),
        }
    }

    /// A copy of the state.
    pub fn state(&self) -> SessionState {
        lock(&self.state).clone()
    }

    /// Reads the state under its lock, without copying it.
    pub fn read<R>(&self, f: impl FnOnce(&SessionState) -> R) -> R {
        f(&lock(&self.state))
    }

    /// Changes the state under its lock.
    pub fn update<R>(&self, f: impl FnOnce(&mut SessionState) -> R) -> R {
        f(&mut lock(&self.state))
    }

    /// The lifecycle phase.
    pub fn phase(&self) -> Phase {
        lock(&self.state).phase
    }

    /// Which log messages the client receives.
    pub fn log_filter(&self) -> LogFilter {
        lock(&self.state).declared.log_filter
    }

    /// The negotiated revision, or the newest handshake revision before `initialize`.
    pub fn revision(&self) -> Revision {
        lock(&self.state)
            .revision
            .unwrap_or(Revision::LATEST_HANDSHAKE)
    }

    /// Registers a client request as in flight: its generation (for [`Session::end_request`])
    /// and cancellation token; `None` if that id is already in flight.
    pub fn begin_request(&self, id: &RequestId) -> Option<(u64, CancellationToken)> {
        let mut inflight = lock(&self.inflight);
        if inflight.contains_key(id) {
            return None;
        }
        let generation = self.next_generation.fetch_add(1, Ordering::Relaxed);
        let token = self.closed.child_token();
        inflight.insert(id.clone(), (generation, token.clone()));
        Some((generation, token))
    }

    /// Forgets a finished client request, unless its id already belongs to a newer request.
    pub fn end_request(&self, id: &RequestId, generation: u64) {
        let mut inflight = lock(&self.inflight);
        if inflight.get(id).is_some_and(|(g, _)| *g == generation) {
            inflight.remove(id);
        }
    }

    /// Cancels an in-flight client request; `false` if it was not in flight.
    pub fn cancel_request(&self, id: &RequestId) -> bool {
        match lock(&self.inflight).remove(id) {
            Some((_, token)) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Sends a request to the client on `sink` and waits for its response. Fails with a
    /// `-32603`-style error if the connection closes first. A caller that stops waiting (a
    /// timeout, a cancelled request) drops the future, and with it the pending entry: an
    /// unanswered request does not stay in the session until it ends.
    pub async fn request(
        &self,
        sink: &Sink,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ErrorObject> {
        let id = RequestId::from(self.next_request_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = lock(&self.pending);
            let max = sink.wire().limits.max_pending_requests;
            if pending.len() >= max {
                sink.wire().hits.hit(Limit::PendingRequests);
                return Err(limits::refused(
                    Limit::PendingRequests,
                    max,
                    "Too many requests to the client await an answer",
                ));
            }
            pending.insert(id.clone(), PendingRequest { reply: tx });
        }
        let _forget = ForgetPending {
            pending: &self.pending,
            id: id.clone(),
        };
        if !sink.send(&Message::request(id, method, params)) {
            return Err(ErrorObject::internal("the connection is closed"));
        }
        tokio::select! {
            r = rx => r.unwrap_or_else(|_| Err(ErrorObject::internal("the connection closed before the client answered"))),
            () = self.closed.cancelled() => {
                Err(ErrorObject::internal("the connection closed before the client answered"))
            }
        }
    }

    /// Delivers a client response to the server request it answers; `false` if no request
    /// with that id is waiting.
    pub fn complete_request(&self, id: &RequestId, result: Result<Value, ErrorObject>) -> bool {
        match lock(&self.pending).remove(id) {
            Some(p) => {
                let _ = p.reply.send(result);
                true
            }
            None => false,
        }
    }

    /// Sends `notifications/message` on `sink` unless the client's level filters it out.
    pub fn log_to(&self, sink: &Sink, level: LogLevel, data: Value, logger: Option<&str>) -> bool {
        self.log_filter().allows(level) && sink.send(&log_message(level, data, logger))
    }

    /// Per-session state of type `T` owned by whoever defines `T` (a catalog's timers, say),
    /// created on first use and dropped with the session.
    pub fn extension<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        let mut map = lock(&self.extensions);
        let entry = map
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Arc::new(T::default()));
        Arc::clone(entry)
            .downcast::<T>()
            .unwrap_or_else(|_| Arc::new(T::default()))
    }

    /// Ends the session: every handler and every waiting server request stops.
    pub fn close(&self) {
        self.closed.cancel();
        lock(&self.pending).clear();
        lock(&self.extensions).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::Recorder;
    use tokio::sync::mpsc;

    #[tokio::test]
    async fn a_request_nobody_waits_for_any_more_is_forgotten() {
        let (tx, mut rx) = mpsc::unbounded_channel::<Arc<str>>();
        let recorder = Arc::new(Recorder::new(None, None).unwrap());
        let sink = Sink::new(
            Arc::new(tx),
            crate::server::seams::Wire::bare(recorder),
            TransportKind::Memory,
            "m".into(),
        );
        let session = Session::new("m".into(), TransportKind::Memory, sink.clone());
        let mut asking = Box::pin(session.request(&sink, "roots/list", None));
        assert!(futures::poll!(asking.as_mut()).is_pending());
        assert!(rx.try_recv().unwrap().contains(r#""method":"roots/list""#));
        assert_eq!(lock(&session.pending).len(), 1);
        drop(asking); // e.g. the caller's timeout expired
        assert!(lock(&session.pending).is_empty());
        let late = Ok(serde_json::json!({ "roots": [] }));
        assert!(!session.complete_request(&RequestId::from(0_i64), late));
    }
}

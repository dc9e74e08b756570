//! Streamable HTTP in the stateless era (2026-07-28): a POST that carries the envelope (or the
//! `MCP-Protocol-Version: 2026-07-28` header) is served on its own, with no session: an exchange
//! alone ([`Alone`]), whose request the dispatcher serves on a connection that stands for the
//! exchange, and whose end (the answer sent, or its stream dropped) is the request's.
//!
//! The answer is `application/json` when the handler emitted nothing before its result (as both
//! official SDKs answer), and an SSE stream once it emits a related notification (progress, a
//! log message): the notifications as they come, then the response, then the end of the stream.
//! SSE events carry no ids (the era has no resumption). Closing the stream cancels the request.

use super::negotiation::{accepts, version_header};
use super::peer::Peer;
use super::recording::{http_meta, http_meta_reusing, Refusal};
use super::sse;
use super::state::HttpState;
use crate::jsonrpc::{ErrorObject, Message};
use crate::lock::lock;
use crate::protocol::envelope;
use crate::protocol::method_names::ClientRequest;
use crate::protocol::Era;
use crate::server::dispatch::Work;
use crate::server::exchange::{Alone, Decoded, Origin};
use crate::server::sink::{Outgoing, Outlet, Sink, Undeliverable};
use crate::traffic::TransportKind;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::sync::Mutex;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The path both eras share.
const PATH: &str = "/mcp";

/// `405 Allow: POST` for a GET or DELETE that names a stateless revision in its
/// `MCP-Protocol-Version` header, or any GET or DELETE when the server serves that era alone:
/// the era has no standalone stream and no session to end, and the spec asks for exactly this
/// answer (a client probing the era learns it from it).
pub fn refuse_non_post(
    state: &HttpState,
    method: &Method,
    headers: &HeaderMap,
) -> Option<Response> {
    // A server of the stateless era alone has no session for any GET or DELETE to name.
    let only_stateless = !state.server.serves_handshake();
    if !only_stateless
        && state.server.era_of_header(version_header(headers)) != Some(Era::Stateless)
    {
        return None;
    }
    let message = if only_stateless {
        let served: Vec<&str> = state
            .server
            .config
            .revisions
            .iter()
            .map(|r| r.as_str())
            .collect();
        format!("Method not allowed: this server serves only protocol revision {} (the stateless era: no sessions, no standalone stream), where {method} has no meaning; send requests with POST", served.join(", "))
    } else {
        format!("Method not allowed: {method} has no meaning in protocol revision 2026-07-28; send requests with POST")
    };
    let mut refusal = Refusal::new(StatusCode::METHOD_NOT_ALLOWED, message);
    if state.server.config.dialect.is_some_and(|d| d.bare_405()) {
        refusal = refusal.plain("");
    }
    // Recorded under no connection: the era has none, and a session header is ignored.
    let mut response = refusal.respond(
        state,
        TransportKind::Http,
        None,
        (method, PATH, headers),
        b"",
    );
    response
        .headers_mut()
        .insert(header::ALLOW, axum::http::HeaderValue::from_static("POST"));
    Some(response)
}

/// Serves one stateless POST that arrived on TCP connection `peer` (`None` for an app served
/// without connect info, e.g. in-process tests: then the POST is named on its own).
pub async fn post(
    state: &Arc<HttpState>,
    headers: &HeaderMap,
    peer: Option<&Peer>,
    alone: Alone,
    decoded: Decoded,
) -> Response {
    // A listen stream is SSE from its first frame (the acknowledgement) and never ends in one
    // JSON body, so a client that cannot take a stream cannot listen.
    if decoded.method() == Some(ClientRequest::Listen.as_str())
        && !accepts(headers, &["text/event-stream"])
    {
        let r = Refusal::new(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: subscriptions/listen answers with a stream; Accept must admit text/event-stream",
        );
        let conn = None;
        let request = (&Method::POST, PATH, headers);
        return r.respond(
            state,
            TransportKind::Http,
            conn,
            request,
            decoded.text().as_bytes(),
        );
    }
    let outlet = Arc::new(PostOutlet::default());
    let server = &state.server;
    let sink = Sink::new(
        outlet.clone(),
        server.wire(),
        TransportKind::Http,
        alone.conn.clone(),
    );
    let origin = Origin::Alone(&alone);
    if let Some(error) = refusal(state, headers, &decoded) {
        let http = Some(http_meta(
            &Method::POST,
            PATH,
            StatusCode::BAD_REQUEST,
            headers,
        ));
        let out = server.reject(origin, decoded, error, http);
        return answered(&alone, &outlet, json(&sink, &out));
    }
    let expects_reply = decoded.expects_reply();
    let status = if expects_reply {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    // Built only when something is recorded: the CLI without --record keeps no tape.
    let http = server.recorder.capturing().then(|| match peer {
        Some(p) => http_meta_reusing(&p.last_post_meta, &Method::POST, PATH, status, headers),
        None => http_meta(&Method::POST, PATH, status, headers),
    });
    let id = decoded.request().map(|r| r.id.clone());
    let out = match server.accept(origin, &sink, decoded, http) {
        Work::Nothing => return answered(&alone, &outlet, StatusCode::ACCEPTED.into_response()),
        Work::Http(answer) => {
            return answered(&alone, &outlet, super::scripted::response(state, &answer));
        }
        Work::Reply(out) => out,
        Work::Task(fut) => {
            let mut fut = fut;
            tokio::select! {
                biased;
                out = &mut fut => match out {
                    Some(out) => out,
                    None => return answered(&alone, &outlet, StatusCode::NO_CONTENT.into_response()),
                },
                first = outlet.recv() => {
                    // The handler spoke before answering: the answer is a stream now.
                    let answered = sink.clone();
                    let task = tokio::spawn(async move {
                        if let Some(out) = fut.await {
                            answered.send_outgoing(&out);
                        }
                    });
                    return stream(state, alone, first, outlet, Some(task));
                }
                // The listener is stopping: the request is answered now (and recorded), so
                // graceful shutdown does not wait on a handler that runs on.
                () = state.shutdown.cancelled() => Outgoing::One(Message::error(
                    id,
                    ErrorObject::internal("the server is shutting down"),
                )),
            }
        }
    };
    if let Some(first) = outlet.try_recv() {
        // Notifications were emitted before the result: they lead, the result follows.
        sink.send_outgoing(&out);
        return stream(state, alone, first, outlet, None);
    }
    answered(&alone, &outlet, json(&sink, &out))
}

/// `response`, the whole answer to the POST `alone`, which ends with it (a streamed answer
/// ends when the stream is dropped instead): anything its request started for it stops, as
/// when a client closes a stream.
fn answered(alone: &Alone, outlet: &PostOutlet, response: Response) -> Response {
    end(alone, outlet);
    response
}

/// Ends a POST whose answer has ended: its exchange ends (anything its request started
/// stops, a request still running is cancelled) and its outlet refuses later frames.
fn end(alone: &Alone, outlet: &PostOutlet) {
    alone.ended.cancel();
    outlet.close();
}

/// Where a stateless POST's request hands the frames it sends before its answer (progress, log
/// messages), which turn the answer into a stream, and every later one while it streams. One
/// allocation where an unbounded channel took two and initialised a block of slots: about 550
/// instructions a POST (callgrind), for frames most requests never send.
#[derive(Default)]
struct PostOutlet {
    /// Frames not yet taken, oldest first.
    frames: Mutex<VecDeque<Arc<str>>>,
    /// Wakes [`PostOutlet::recv`] when a frame arrives (a permit is kept if nobody waits).
    arrived: Notify,
    /// Set when the answer has ended: nobody will take a frame any more.
    gone: AtomicBool,
}

impl Outlet for PostOutlet {
    fn deliver(&self, frame: Arc<str>) -> Result<Option<Arc<str>>, Undeliverable> {
        if self.gone.load(Ordering::Acquire) {
            return Err(Undeliverable);
        }
        lock(&self.frames).push_back(frame);
        self.arrived.notify_one();
        Ok(None)
    }
}

impl PostOutlet {
    /// The oldest frame not yet taken, if there is one.
    fn try_recv(&self) -> Option<Arc<str>> {
        lock(&self.frames).pop_front()
    }

    /// The next frame, when it arrives.
    async fn recv(&self) -> Arc<str> {
        loop {
            if let Some(frame) = self.try_recv() {
                return frame;
            }
            self.arrived.notified().await;
        }
    }

    /// Refuses every later frame (the answer has ended) and drops those not taken.
    fn close(&self) {
        self.gone.store(true, Ordering::Release);
        lock(&self.frames).clear();
    }
}

/// Why a stateless POST is refused before it is served, if it is: a JSON-RPC response (the
/// era has no server requests to answer) is `-32600`; a request whose headers disagree with
/// its body is `-32020` ([`headers::check`]). Notifications pass unchecked: the TS client
/// POSTs `notifications/cancelled` without `Mcp-Method`, and they are only acknowledged (202).
fn refusal(state: &HttpState, headers: &HeaderMap, decoded: &Decoded) -> Option<ErrorObject> {
    if decoded.is_response() {
        return Some(ErrorObject::invalid_request(
            "a JSON-RPC response was POSTed, but a 2026-07-28 server sends no requests to answer",
        ));
    }
    let request = decoded.request()?;
    super::headers::check(headers, request, &state.server.registry()).err()
}

/// The HTTP status of a stateless answer: `404` for `-32601`, `400` for the errors the spec
/// maps to Bad Request, `200` for everything else (results and handler errors).
pub fn status_of(out: &Outgoing) -> StatusCode {
    match out {
        Outgoing::One(Message::Error { error, .. })
            if error.code == crate::jsonrpc::code::METHOD_NOT_FOUND =>
        {
            StatusCode::NOT_FOUND
        }
        Outgoing::One(Message::Error { error, .. }) if envelope::is_bad_request(error.code) => {
            StatusCode::BAD_REQUEST
        }
        _ => StatusCode::OK,
    }
}

/// The answer as one `application/json` body, recorded with its status.
fn json(sink: &Sink, out: &Outgoing) -> Response {
    super::recording::json_answer(sink, status_of(out), out)
}

/// An SSE answer: `first`, then every frame the request's sink delivers, until the handler
/// (`task`) has answered. The client closing the stream cancels the request.
fn stream(
    state: &HttpState,
    alone: Alone,
    first: Arc<str>,
    outlet: Arc<PostOutlet>,
    task: Option<tokio::task::JoinHandle<()>>,
) -> Response {
    let stop = shutdown_stop(state, &alone);
    let events = futures::stream::unfold(
        Streaming {
            first: Some(first),
            outlet,
            task,
            alone,
        },
        |mut s| async move {
            let frame = s.next().await?;
            Some((sse::message(None, &frame), s))
        },
    );
    sse::response(sse::body(
        events,
        (state.config.keepalive, &state.server.clock),
        stop,
    ))
}

/// What ends a stateless stream on shutdown: at once, unless the POST is a listen stream, which
/// is first ended gracefully so its listen result is its last frame (the stream then ends by
/// itself; the grace bounds the wait).
fn shutdown_stop(state: &HttpState, alone: &Alone) -> CancellationToken {
    let stop = CancellationToken::new();
    let (server, shutdown, closed) = (
        state.server.clone(),
        state.shutdown.clone(),
        alone.ended.clone(),
    );
    let (id, body_stop) = (alone.conn.clone(), stop.clone());
    tokio::spawn(async move {
        tokio::select! {
            () = shutdown.cancelled() => {}
            () = closed.cancelled() => return, // the stream is gone: nothing to stop
        }
        if server.end_listeners(Some(&id)) > 0 {
            let _ = tokio::time::timeout(crate::transport::CLOSE_GRACE, closed.cancelled()).await;
        }
        body_stop.cancel();
    });
    stop
}

/// The state of a stateless SSE answer.
struct Streaming {
    /// The frame that turned the answer into a stream.
    first: Option<Arc<str>>,
    /// Every later frame of the request.
    outlet: Arc<PostOutlet>,
    /// The handler's task; `None` once it finished (then the stream ends when no frame is left).
    task: Option<tokio::task::JoinHandle<()>>,
    /// The POST's exchange: ended when the stream is dropped, which cancels the request if
    /// it is still running (the client closing the stream is cancellation in this era).
    alone: Alone,
}

impl Streaming {
    /// The next frame, or `None` when the handler answered and everything was sent.
    async fn next(&mut self) -> Option<Arc<str>> {
        if let Some(first) = self.first.take() {
            return Some(first);
        }
        loop {
            match &mut self.task {
                Some(task) => tokio::select! {
                    biased;
                    frame = self.outlet.recv() => return Some(frame),
                    _ = task => self.task = None,
                },
                None => return self.outlet.try_recv(),
            }
        }
    }
}

impl Drop for Streaming {
    fn drop(&mut self) {
        end(&self.alone, &self.outlet);
    }
}

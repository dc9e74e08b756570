//! Streamable HTTP (2025-03-26 … 2025-11-25) at `/mcp`: POST carries client messages and gets
//! an SSE stream (or JSON) back, GET opens the session's standalone stream or resumes one with
//! `Last-Event-ID`, DELETE ends the session.

use super::negotiation::{
    accepts, header_str, header_value, LAST_EVENT_ID, SESSION_HEADER, VERSION_HEADER,
};
use super::outbox::Inbox;
use super::recording::{http_meta, http_meta_reusing, record_exchange, Refusal};
use super::sessions::{
    parse_event_id, Attach, HttpSession, SessionKind, SseEvent, StreamOutlet, STANDALONE,
};
use super::sse;
use super::state::HttpState;
use crate::jsonrpc::Message;
use crate::protocol::method_names::ClientRequest;
use crate::protocol::Revision;
use crate::server::dispatch::Work;
use crate::server::exchange::{Decoded, Origin};
use crate::server::limits::Limit;
use crate::server::sink::{Outgoing, Sink};
use crate::traffic::TransportKind;
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use std::sync::Arc;
use std::task::Poll;

const PATH: &str = "/mcp";

/// Refuses a request to `/mcp`, recording it (with `body`) under the session it names.
pub fn refuse(
    state: &HttpState,
    method: &Method,
    headers: &HeaderMap,
    refusal: Refusal,
    body: &[u8],
) -> Response {
    let conn = header_str(headers, &SESSION_HEADER);
    refusal.respond(
        state,
        TransportKind::Http,
        conn,
        (method, PATH, headers),
        body,
    )
}

/// The session a request names, checked: 400 without the header or with an unsupported
/// `MCP-Protocol-Version`, 404 when unknown or ended.
fn find_session(
    state: &HttpState,
    method: &Method,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Arc<HttpSession>, Box<Response>> {
    let fail = |refusal: Refusal| Err(Box::new(refuse(state, method, headers, refusal, body)));
    let Some(id) = header_str(headers, &SESSION_HEADER) else {
        return fail(Refusal::new(
            StatusCode::BAD_REQUEST,
            "Bad Request: Mcp-Session-Id header is required (only initialize may be sent without one)",
        ));
    };
    let Some(session) = state
        .sessions
        .get(id)
        .filter(|s| s.kind == SessionKind::Streamable)
    else {
        return fail(session_gone(state, id));
    };
    if let Some(version) = header_str(headers, &VERSION_HEADER) {
        let revisions = &state.server.config.revisions;
        if !version
            .parse::<Revision>()
            .is_ok_and(|r| r.has_handshake() && revisions.contains(&r))
        {
            let supported: Vec<&str> = revisions
                .iter()
                .rev()
                .filter(|r| r.has_handshake())
                .map(|r| r.as_str())
                .collect();
            let message = format!(
                "Bad Request: Unsupported protocol version: {version} (supported versions: {})",
                supported.join(", ")
            );
            return fail(Refusal::new(StatusCode::BAD_REQUEST, message));
        }
    }
    session.touch();
    Ok(session)
}

/// The refusal for an unknown or ended session: `404` with `-32001`, as the SDKs answer (a
/// dialect may say another status: the reference's `400`).
fn session_gone(state: &HttpState, id: &str) -> Refusal {
    let status = state
        .server
        .config
        .dialect
        .map_or(StatusCode::NOT_FOUND, |d| {
            StatusCode::from_u16(d.unknown_session_status()).unwrap_or(StatusCode::NOT_FOUND)
        });
    Refusal {
        code: -32001,
        ..Refusal::new(status, format!("Session not found: {id}"))
    }
}

/// A POST of the handshake era that names a session (its body read, its era decided).
pub async fn post_in_session(state: &Arc<HttpState>, headers: &HeaderMap, body: &[u8]) -> Response {
    let m = &Method::POST;
    let session = match find_session(state, m, headers, body) {
        Ok(s) => s,
        Err(response) => return *response,
    };
    let origin = Origin::Connection(&session.core);
    let decoded = state.server.decode(origin, body);
    if !decoded.is_valid() {
        let http = http_meta(m, PATH, StatusCode::BAD_REQUEST, headers);
        let out = match state
            .server
            .accept(origin, &session.core.sink, decoded, Some(http))
        {
            Work::Reply(out) => Some(out),
            Work::Task(_) | Work::Nothing | Work::Http(_) => {
                unreachable!("an invalid frame is answered at once")
            }
        };
        return json_reply(&session, StatusCode::BAD_REQUEST, out, None);
    }
    if !decoded.expects_reply() {
        let http = http_meta(m, PATH, StatusCode::ACCEPTED, headers);
        let _ = state
            .server
            .accept(origin, &session.core.sink, decoded, Some(http));
        return StatusCode::ACCEPTED.into_response();
    }
    serve_request(state, &session, headers, decoded, false).await
}

/// A POST of the handshake era without a session: only an `initialize` request opens one.
pub async fn initialize(
    state: &Arc<HttpState>,
    headers: &HeaderMap,
    body: &[u8],
    decoded: Decoded,
) -> Response {
    let m = &Method::POST;
    if decoded.method() != Some(ClientRequest::Initialize.as_str()) || !decoded.expects_reply() {
        let (code, message) = match (decoded.error(), decoded.method()) {
            (Some(e), _) => (e.code, e.message.clone()),
            // An unknown method is -32601 at once, session or not: a 2.x client probes with
            // server/discover and falls back to initialize on the error.
            (None, Some(method)) if decoded.expects_reply() && !state.server.knows_handshake_method(method) => {
                (-32601, format!("Method not found: {method}"))
            }
            _ => (-32000, "Bad Request: Mcp-Session-Id header is required (only initialize may be sent without one)".into()),
        };
        return refuse(
            state,
            m,
            headers,
            Refusal {
                code,
                // An unknown method keeps its id, as on stdio (a 2026 client's server/discover
                // probe, which falls back to initialize on the error).
                id: (code == -32601)
                    .then(|| decoded.request().map(|r| r.id.clone()))
                    .flatten(),
                ..Refusal::new(StatusCode::BAD_REQUEST, message)
            },
            body,
        );
    }
    let bounds = state.stream_bounds(state.config.event_store_capacity);
    let server = state.server.clone();
    let session = Arc::new_cyclic(|weak| {
        let standalone = StreamOutlet {
            session: weak.clone(),
            stream: STANDALONE,
            holds: state.config.standalone_stream,
        };
        let core = server.open_session(TransportKind::Http, Arc::new(standalone));
        HttpSession::new_inner(core, SessionKind::Streamable, bounds, server.clock.clone())
    });
    if !state
        .sessions
        .insert(session.clone(), state.config.max_sessions)
    {
        state.server.close_session(&session.core);
        state.server.limit_hits.hit(Limit::Sessions);
        let message = format!(
            "Service Unavailable: too many sessions (limit {}); end one with DELETE or let it expire",
            state.config.max_sessions
        );
        return refuse(
            state,
            m,
            headers,
            Refusal::new(StatusCode::SERVICE_UNAVAILABLE, message),
            body,
        );
    }
    serve_request(state, &session, headers, decoded, true).await
}

/// Serves a frame that holds requests: an SSE stream of related messages and the response, or
/// (JSON-response mode) the response as `application/json`. With `opens_session` the frame is
/// the `initialize` that created `session`: a success carries `Mcp-Session-Id`, an error
/// answer ends the session again (the answer itself is still a normal 200 response).
async fn serve_request(
    state: &Arc<HttpState>,
    session: &Arc<HttpSession>,
    headers: &HeaderMap,
    decoded: Decoded,
    opens_session: bool,
) -> Response {
    let http = state.server.recorder.capturing().then(|| {
        http_meta_reusing(
            &session.last_post_meta,
            &Method::POST,
            PATH,
            StatusCode::OK,
            headers,
        )
    });
    let session_header = opens_session.then(|| header_value(&session.core.id));
    if state.config.json_response {
        let work = state.server.accept(
            Origin::Connection(&session.core),
            &session.core.sink,
            decoded,
            http,
        );
        let out = match work {
            Work::Reply(out) => Some(out),
            Work::Task(fut) => {
                // Disconnection is not cancellation: the handler runs on its own task. Shutdown
                // does not wait for it.
                let task = tokio::spawn(fut);
                tokio::select! {
                    r = task => r.ok().flatten(),
                    () = state.shutdown.cancelled() => None,
                }
            }
            Work::Nothing => None,
            Work::Http(answer) => {
                if opens_session || answer.end_session {
                    state.end_session(&session.core.id);
                }
                return super::scripted::response(state, &answer);
            }
        };
        if opens_session && initialize_failed(out.as_ref()) {
            state.end_session(&session.core.id);
            return json_reply(session, StatusCode::OK, out, None);
        }
        return json_reply(session, StatusCode::OK, out, session_header);
    }
    let (stream, rx, priming_id) = match session.open_post_stream() {
        Ok(opened) => opened,
        Err(Attach::Refused(limit, max)) => {
            let refusal = Refusal {
                id: decoded.request().map(|r| r.id.clone()),
                ..stream_refused(limit, max)
            };
            return refuse(
                state,
                &Method::POST,
                headers,
                refusal,
                decoded.text().as_bytes(),
            );
        }
        Err(_) => {
            return refuse(
                state,
                &Method::POST,
                headers,
                session_gone(state, &session.core.id),
                b"",
            )
        }
    };
    let outlet = StreamOutlet {
        session: Arc::downgrade(session),
        stream,
        holds: false,
    };
    let sink = Sink::new(
        Arc::new(outlet),
        state.server.wire(),
        TransportKind::Http,
        session.core.id.clone(),
    );
    let mut session_header = session_header;
    match state
        .server
        .accept(Origin::Connection(&session.core), &sink, decoded, http)
    {
        Work::Reply(out) => {
            let failed = opens_session && initialize_failed(Some(&out));
            sink.send_outgoing(&out);
            session.finish_stream(stream);
            if failed {
                session_header = None;
                state.end_session(&session.core.id);
            }
        }
        Work::Task(fut) => {
            // One poll here first: a handler that answers at once (most tools) then has its
            // response in the stream before the body is written, so it leaves in one write.
            let mut fut = Box::pin(fut);
            match futures::poll!(fut.as_mut()) {
                Poll::Ready(out) => {
                    if let Some(out) = out {
                        sink.send_outgoing(&out);
                    }
                    session.finish_stream(stream);
                }
                Poll::Pending => {
                    // Disconnection is not cancellation: the handler goes on on its own task.
                    let session = session.clone();
                    tokio::spawn(async move {
                        if let Some(out) = fut.await {
                            sink.send_outgoing(&out);
                        }
                        session.finish_stream(stream);
                    });
                }
            }
        }
        Work::Nothing => session.finish_stream(stream),
        Work::Http(answer) => {
            session.finish_stream(stream);
            if opens_session || answer.end_session {
                state.end_session(&session.core.id);
            }
            return super::scripted::response(state, &answer);
        }
    }
    // SEP-1699 (2025-11-25): a priming event (id, empty data) and the reconnection delay first,
    // so a client that loses the stream can resume it with Last-Event-ID.
    let priming = (session.core.revision() >= Revision::V2025_11_25)
        .then(|| sse::event(None, Some(&priming_id), Some(state.config.sse_retry), ""));
    let mut response = if rx.is_closed() {
        // Answered before the response started (most requests): the whole stream is known, so
        // it goes out as one body with a Content-Length, without the streaming machinery.
        sse::response(Body::from(complete_stream(priming, rx)))
    } else {
        sse_response(state, priming.into_iter().collect(), rx, None)
    };
    if let Some(id) = session_header {
        response.headers_mut().insert(SESSION_HEADER.clone(), id);
    }
    response
}

/// The SSE body of a stream that has ended: `first`, then every event left in `rx`.
fn complete_stream(first: Option<Bytes>, mut rx: Inbox<SseEvent>) -> Bytes {
    let mut events: Vec<Bytes> = first.into_iter().collect();
    while let Some(e) = rx.try_recv() {
        events.push(sse::message(e.id.as_deref(), &e.data));
    }
    sse::concat(events)
}

/// The 503 of a stream a bound on live streams refused, naming the option that raises it.
fn stream_refused(limit: Limit, max: usize) -> Refusal {
    Refusal::new(
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "Service Unavailable: too many open SSE streams (limit {max}, {}); wait for one to end",
            limit.option()
        ),
    )
}

/// Whether an `initialize` answer is an error (then no session is issued).
fn initialize_failed(out: Option<&Outgoing>) -> bool {
    !matches!(
        out,
        Some(Outgoing::One(Message::Response { .. }) | Outgoing::Completed(_))
    )
}

/// An `application/json` answer (recorded as the outgoing frame), or 204 when there is none
/// (a request cancelled while the client waited).
fn json_reply(
    session: &HttpSession,
    status: StatusCode,
    out: Option<Outgoing>,
    session_header: Option<HeaderValue>,
) -> Response {
    let Some(out) = out else {
        return StatusCode::NO_CONTENT.into_response();
    };
    let mut response = super::recording::json_answer(&session.core.sink, status, &out);
    if let Some(id) = session_header {
        response.headers_mut().insert(SESSION_HEADER.clone(), id);
    }
    response
}

/// An SSE response: `first` events, then `rx` until it ends (or the server shuts down), with
/// keep-alive comments. `detach` runs when the client goes away.
fn sse_response(
    state: &HttpState,
    first: Vec<Bytes>,
    rx: Inbox<SseEvent>,
    detach: Option<DetachGuard>,
) -> Response {
    let mut rx = rx;
    let live = futures::stream::poll_fn(move |cx| {
        let _detach_when_dropped = &detach;
        rx.poll_recv(cx)
            .map(|e| e.map(|e| sse::message(e.id.as_deref(), &e.data)))
    });
    let events = futures::stream::iter(first).chain(live);
    sse::response(sse::body(
        events,
        (state.config.keepalive, &state.server.clock),
        state.shutdown.clone(),
    ))
}

/// Detaches a GET connection from its stream when the response body is dropped.
struct DetachGuard {
    session: Arc<HttpSession>,
    stream: u64,
    conn: u64,
}

impl Drop for DetachGuard {
    fn drop(&mut self) {
        self.session.detach(self.stream, self.conn);
    }
}

/// `GET /mcp` of the handshake era: the standalone stream, or a resumed stream with
/// `Last-Event-ID`.
pub async fn get(state: &Arc<HttpState>, headers: &HeaderMap) -> Response {
    let m = &Method::GET;
    if !accepts(headers, &["text/event-stream"]) {
        let r = Refusal::new(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: Client must accept text/event-stream",
        );
        return refuse(state, m, headers, r, b"");
    }
    let session = match find_session(state, m, headers, b"") {
        Ok(s) => s,
        Err(response) => return *response,
    };
    let resume = match header_str(headers, &LAST_EVENT_ID) {
        None => None,
        Some(id) => match parse_event_id(id) {
            Some(r) => Some(r),
            None => {
                let r = Refusal::new(
                    StatusCode::BAD_REQUEST,
                    format!("Bad Request: Last-Event-ID {id:?} is not an event id of this server"),
                );
                return refuse(state, m, headers, r, b"");
            }
        },
    };
    // Without a standalone stream a GET is 405, but resuming a POST stream still works.
    if !state.config.standalone_stream && resume.is_none_or(|(stream, _)| stream == STANDALONE) {
        let r = Refusal::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "Method Not Allowed: this server offers no standalone SSE stream",
        );
        let mut response = refuse(state, m, headers, r, b"");
        response
            .headers_mut()
            .insert(header::ALLOW, header_value("POST, DELETE"));
        return response;
    }
    match session.attach(resume) {
        Attach::Busy => {
            let r = Refusal::new(
                StatusCode::CONFLICT,
                "Conflict: Only one SSE stream is allowed per session",
            );
            refuse(state, m, headers, r, b"")
        }
        Attach::Unknown if resume.is_some() => {
            let r = Refusal::new(
                StatusCode::BAD_REQUEST,
                "Bad Request: Last-Event-ID names no stream of this session",
            );
            refuse(state, m, headers, r, b"")
        }
        Attach::Unknown => refuse(
            state,
            m,
            headers,
            session_gone(state, &session.core.id),
            b"",
        ),
        Attach::Refused(limit, max) => refuse(state, m, headers, stream_refused(limit, max), b""),
        Attach::Attached { replay, rx, conn } => {
            record_exchange(
                state,
                TransportKind::Http,
                &session.core.id,
                (m, PATH, headers),
                StatusCode::OK,
            );
            // The standalone events it takes were not recorded yet: now, after the GET.
            session.record_held();
            let stream = resume.map_or(STANDALONE, |(s, _)| s);
            let guard = DetachGuard {
                session: session.clone(),
                stream,
                conn,
            };
            let first = replay
                .iter()
                .map(|e| sse::message(e.id.as_deref(), &e.data))
                .collect();
            sse_response(state, first, rx, Some(guard))
        }
    }
}

/// `DELETE /mcp` of the handshake era: ends the session (200); its id gets 404 from then on.
pub async fn delete(state: &Arc<HttpState>, headers: &HeaderMap) -> Response {
    let session = match find_session(state, &Method::DELETE, headers, b"") {
        Ok(s) => s,
        Err(response) => return *response,
    };
    // Recorded before the session ends: while it lives, the record gets its era and revision.
    record_exchange(
        state,
        TransportKind::Http,
        &session.core.id,
        (&Method::DELETE, PATH, headers),
        StatusCode::OK,
    );
    state.end_session(&session.core.id);
    StatusCode::OK.into_response()
}

//! Streamable HTTP (2025-03-26 … 2025-11-25) at `/mcp`: POST carries client messages and gets
//! an SSE stream (or JSON) back, GET opens the session's standalone stream or resumes one with
//! `Last-Event-ID`, DELETE ends the session.

use super::sessions::{
    parse_event_id, Attach, Event, HttpSession, SessionKind, StreamOutlet, STANDALONE,
};
use super::{
    accepts, header_value, http_meta, is_json, read_body, record_exchange, sse, HttpState, Refusal,
};
use crate::jsonrpc::Message;
use crate::protocol::Revision;
use crate::server::dispatch::{Decoded, Work};
use crate::server::sink::{Outgoing, Sink};
use crate::traffic::TransportKind;
use axum::body::Body;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderName, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use std::sync::Arc;
use tokio::sync::mpsc;

const PATH: &str = "/mcp";
const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Looks up the session a request names: 400 without the header, 404 when unknown or ended.
fn find_session(
    state: &HttpState,
    method: &Method,
    headers: &HeaderMap,
) -> Result<Arc<HttpSession>, Box<Response>> {
    let request = (method, PATH, headers);
    let Some(id) = header_str(headers, SESSION_HEADER) else {
        let r = Refusal::new(StatusCode::BAD_REQUEST, "Bad Request: Mcp-Session-Id header is required (only initialize may be sent without one)");
        return Err(Box::new(r.respond(
            state,
            TransportKind::Http,
            None,
            request,
            b"",
        )));
    };
    match state
        .sessions
        .get(id)
        .filter(|s| s.kind == SessionKind::Streamable)
    {
        Some(s) => Ok(s),
        None => {
            let r = Refusal {
                status: StatusCode::NOT_FOUND,
                code: -32001,
                message: format!("Session not found: {id}"),
            };
            Err(Box::new(r.respond(
                state,
                TransportKind::Http,
                Some(id),
                request,
                b"",
            )))
        }
    }
}

/// `POST /mcp`.
pub async fn post(State(state): State<Arc<HttpState>>, headers: HeaderMap, body: Body) -> Response {
    let request = (&Method::POST, PATH, &headers);
    let refuse = |status, message: &str, body: &[u8]| {
        let conn = header_str(&headers, SESSION_HEADER);
        Refusal::new(status, message).respond(&state, TransportKind::Http, conn, request, body)
    };
    if !accepts(&headers, "application/json") || !accepts(&headers, "text/event-stream") {
        return refuse(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: Client must accept both application/json and text/event-stream",
            b"",
        );
    }
    if !is_json(&headers) {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: Content-Type must be application/json",
            b"",
        );
    }
    let limit = state.server.config.max_message_bytes;
    let body = match read_body(body, limit).await {
        Ok(b) => b,
        Err(prefix) => {
            let message = format!("Payload Too Large: request body exceeds the {limit}-byte limit");
            return refuse(StatusCode::PAYLOAD_TOO_LARGE, &message, &prefix);
        }
    };
    if header_str(&headers, SESSION_HEADER).is_none() {
        return initialize(&state, &headers, &body).await;
    }
    let session = match find_session(&state, &Method::POST, &headers) {
        Ok(s) => s,
        Err(response) => return *response,
    };
    if let Some(version) = header_str(&headers, VERSION_HEADER) {
        if !supported_version(&state, version) {
            let message = format!(
                "Bad Request: Unsupported protocol version: {version} (supported versions: {})",
                handshake_versions(&state).join(", ")
            );
            return refuse(StatusCode::BAD_REQUEST, &message, &body);
        }
    }
    session.touch();
    let decoded = state.server.decode(Some(&session.core), &body);
    if !decoded.is_valid() {
        let http = http_meta(&Method::POST, PATH, StatusCode::BAD_REQUEST, &headers);
        let work = state
            .server
            .accept(&session.core, &session.core.sink, decoded, Some(http));
        return json_reply(&session, StatusCode::BAD_REQUEST, work_reply(work), &[]);
    }
    if !decoded.expects_reply() {
        let http = http_meta(&Method::POST, PATH, StatusCode::ACCEPTED, &headers);
        let _ = state
            .server
            .accept(&session.core, &session.core.sink, decoded, Some(http));
        return StatusCode::ACCEPTED.into_response();
    }
    serve_request(&state, &session, &headers, decoded, None).await
}

/// A POST without a session: only an `initialize` request opens one.
async fn initialize(state: &Arc<HttpState>, headers: &HeaderMap, body: &[u8]) -> Response {
    let request = (&Method::POST, PATH, headers);
    let decoded = state.server.decode(None, body);
    if decoded.method() != Some("initialize") || !decoded.expects_reply() {
        let (code, message) = match (decoded.error(), decoded.method()) {
            (Some(e), _) => (e.code, e.message.clone()),
            // An unknown method is -32601 at once, session or not: a 2.x client probes with
            // server/discover and falls back to initialize on the error.
            (None, Some(m)) if !state.server.knows_method(m) => (-32601, format!("Method not found: {m}")),
            _ => (-32000, "Bad Request: Mcp-Session-Id header is required (only initialize may be sent without one)".into()),
        };
        let r = Refusal {
            status: StatusCode::BAD_REQUEST,
            code,
            message,
        };
        return r.respond(state, TransportKind::Http, None, request, body);
    }
    let capacity = state.config.event_store_capacity;
    let server = state.server.clone();
    let session = Arc::new_cyclic(|weak| {
        let standalone = StreamOutlet {
            session: weak.clone(),
            stream: STANDALONE,
        };
        let core = server.open_session(TransportKind::Http, Arc::new(standalone));
        HttpSession::new_inner(core, SessionKind::Streamable, capacity)
    });
    if !state
        .sessions
        .insert(session.clone(), state.config.max_sessions)
    {
        state.server.close_session(&session.core);
        let message = format!(
            "Service Unavailable: too many sessions (limit {}); end one with DELETE or let it expire",
            state.config.max_sessions
        );
        return Refusal::new(StatusCode::SERVICE_UNAVAILABLE, message).respond(
            state,
            TransportKind::Http,
            None,
            request,
            body,
        );
    }
    let id = header_value(&session.core.id);
    serve_request(state, &session, headers, decoded, Some(id)).await
}

/// Serves a frame that holds requests: an SSE stream of related messages and the response, or
/// (JSON-response mode) the response as `application/json`. `new_session` is the id of a
/// session this `initialize` opens: sent as `Mcp-Session-Id` on success, ended on failure.
async fn serve_request(
    state: &Arc<HttpState>,
    session: &Arc<HttpSession>,
    headers: &HeaderMap,
    decoded: Decoded,
    new_session: Option<axum::http::HeaderValue>,
) -> Response {
    let is_initialize = new_session.is_some();
    let extra: Vec<(HeaderName, axum::http::HeaderValue)> = new_session
        .into_iter()
        .map(|id| (HeaderName::from_static(SESSION_HEADER), id))
        .collect();
    let extra = extra.as_slice();
    let http = Some(http_meta(&Method::POST, PATH, StatusCode::OK, headers));
    if state.config.json_response {
        let work = state
            .server
            .accept(&session.core, &session.core.sink, decoded, http);
        let out = match work {
            Work::Reply(out) => Some(out),
            Work::Task(fut) => tokio::spawn(fut).await.ok().flatten(),
            Work::Nothing => None,
        };
        if is_initialize && initialize_failed(out.as_ref()) {
            state.end_session(&session.core.id);
            return json_reply(session, StatusCode::BAD_REQUEST, out, &[]);
        }
        return json_reply(session, StatusCode::OK, out, extra);
    }
    let (stream, rx, priming_id) = session.open_post_stream();
    let outlet = StreamOutlet {
        session: Arc::downgrade(session),
        stream,
    };
    let sink = Sink::new(
        Arc::new(outlet),
        state.server.recorder.clone(),
        TransportKind::Http,
        session.core.id.clone(),
        Some(stream.to_string().into()),
    );
    match state.server.accept(&session.core, &sink, decoded, http) {
        Work::Reply(out) => {
            if is_initialize && initialize_failed(Some(&out)) {
                session.finish_stream(stream);
                state.end_session(&session.core.id);
                return json_reply(session, StatusCode::BAD_REQUEST, Some(out), &[]);
            }
            sink.send_outgoing(&out);
            session.finish_stream(stream);
        }
        Work::Task(fut) => {
            let session = session.clone();
            tokio::spawn(async move {
                if let Some(out) = fut.await {
                    sink.send_outgoing(&out);
                }
                session.finish_stream(stream);
            });
        }
        Work::Nothing => session.finish_stream(stream),
    }
    // SEP-1699 (2025-11-25): a priming event (id, empty data) and the reconnection delay first,
    // so a client that loses the stream can resume it with Last-Event-ID.
    let priming = (session.core.revision() >= Revision::V2025_11_25)
        .then(|| sse::event(None, Some(&priming_id), Some(state.config.sse_retry), ""));
    sse_response(state, priming.into_iter().collect(), rx, None, extra)
}

/// Whether an `initialize` answer is an error (then no session is issued).
fn initialize_failed(out: Option<&Outgoing>) -> bool {
    !matches!(out, Some(Outgoing::One(Message::Response { .. })))
}

/// The reply of work that was answered at once.
fn work_reply(work: Work) -> Option<Outgoing> {
    match work {
        Work::Reply(out) => Some(out),
        Work::Task(_) | Work::Nothing => None,
    }
}

/// An `application/json` answer (recorded as the outgoing frame), or 204 when there is none
/// (a request cancelled while the client waited).
fn json_reply(
    session: &HttpSession,
    status: StatusCode,
    out: Option<Outgoing>,
    extra: &[(HeaderName, axum::http::HeaderValue)],
) -> Response {
    let Some(out) = out else {
        return StatusCode::NO_CONTENT.into_response();
    };
    let sink = session
        .core
        .sink
        .clone()
        .with_http(Some(serde_json::json!({ "status": status.as_u16() })));
    let text = sink.record_only(&out);
    let mut response = (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        text.to_string(),
    )
        .into_response();
    for (name, value) in extra {
        response.headers_mut().insert(name.clone(), value.clone());
    }
    response
}

/// An SSE response: `first` events, then `rx` until it ends (or the server shuts down), with
/// keep-alive comments. `detach` runs when the client goes away.
fn sse_response(
    state: &HttpState,
    first: Vec<Bytes>,
    rx: mpsc::UnboundedReceiver<Event>,
    detach: Option<DetachGuard>,
    extra: &[(HeaderName, axum::http::HeaderValue)],
) -> Response {
    let live = futures::stream::unfold((rx, detach), |(mut rx, guard)| async move {
        rx.recv().await.map(|e| (to_sse(&e), (rx, guard)))
    });
    let events = futures::stream::iter(first).chain(live);
    let body = sse::body(events, state.config.keepalive, state.shutdown.clone());
    let mut response = Response::new(body);
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, header_value("text/event-stream"));
    h.insert(
        header::CACHE_CONTROL,
        header_value("no-cache, no-transform"),
    );
    h.insert(
        HeaderName::from_static("x-accel-buffering"),
        header_value("no"),
    );
    for (name, value) in extra {
        h.insert(name.clone(), value.clone());
    }
    response
}

fn to_sse(e: &Event) -> Bytes {
    sse::message(e.id.as_deref(), &e.data)
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

/// `GET /mcp`: the standalone stream, or a resumed stream with `Last-Event-ID`.
pub async fn get(State(state): State<Arc<HttpState>>, headers: HeaderMap) -> Response {
    let request = (&Method::GET, PATH, &headers);
    let conn = header_str(&headers, SESSION_HEADER);
    if !accepts(&headers, "text/event-stream") {
        let r = Refusal::new(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: Client must accept text/event-stream",
        );
        return r.respond(&state, TransportKind::Http, conn, request, b"");
    }
    let session = match find_session(&state, &Method::GET, &headers) {
        Ok(s) => s,
        Err(response) => return *response,
    };
    if !state.config.standalone_stream {
        let r = Refusal::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "Method Not Allowed: this server offers no standalone SSE stream",
        );
        let mut response = r.respond(&state, TransportKind::Http, conn, request, b"");
        response
            .headers_mut()
            .insert(header::ALLOW, header_value("POST, DELETE"));
        return response;
    }
    let resume = match header_str(&headers, "last-event-id") {
        None => None,
        Some(id) => match parse_event_id(id) {
            Some(r) => Some(r),
            None => {
                let r = Refusal::new(
                    StatusCode::BAD_REQUEST,
                    format!("Bad Request: Last-Event-ID {id:?} is not an event id of this server"),
                );
                return r.respond(&state, TransportKind::Http, conn, request, b"");
            }
        },
    };
    session.touch();
    match session.attach(resume) {
        Attach::Busy => {
            let r = Refusal::new(
                StatusCode::CONFLICT,
                "Conflict: Only one SSE stream is allowed per session",
            );
            r.respond(&state, TransportKind::Http, conn, request, b"")
        }
        Attach::Unknown => {
            let r = Refusal::new(
                StatusCode::BAD_REQUEST,
                "Bad Request: Last-Event-ID names no stream of this session",
            );
            r.respond(&state, TransportKind::Http, conn, request, b"")
        }
        Attach::Attached {
            replay,
            rx,
            conn: c,
        } => {
            record_exchange(
                &state,
                TransportKind::Http,
                &session.core.id,
                request,
                StatusCode::OK,
            );
            let stream = resume.map_or(STANDALONE, |(s, _)| s);
            let guard = DetachGuard {
                session: session.clone(),
                stream,
                conn: c,
            };
            let first = replay.iter().map(to_sse).collect();
            sse_response(&state, first, rx, Some(guard), &[])
        }
    }
}

/// `DELETE /mcp`: ends the session (200); its id gets 404 from then on.
pub async fn delete(State(state): State<Arc<HttpState>>, headers: HeaderMap) -> Response {
    let session = match find_session(&state, &Method::DELETE, &headers) {
        Ok(s) => s,
        Err(response) => return *response,
    };
    state.end_session(&session.core.id);
    record_exchange(
        &state,
        TransportKind::Http,
        &session.core.id,
        (&Method::DELETE, PATH, &headers),
        StatusCode::OK,
    );
    StatusCode::OK.into_response()
}

fn supported_version(state: &HttpState, version: &str) -> bool {
    version
        .parse::<Revision>()
        .is_ok_and(|r| r.has_handshake() && state.server.config.revisions.contains(&r))
}

fn handshake_versions(state: &HttpState) -> Vec<&'static str> {
    state
        .server
        .config
        .revisions
        .iter()
        .rev()
        .filter(|r| r.has_handshake())
        .map(|r| r.as_str())
        .collect()
}

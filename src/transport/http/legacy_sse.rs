//! The legacy HTTP+SSE transport (2024-11-05): `GET /sse` opens a session's stream and names
//! the endpoint to POST to in an `endpoint` event; `POST /message?sessionId=…` carries client
//! messages (202 `Accepted`), whose answers arrive on the stream. The session ends when the
//! stream closes. An unknown session id is a 404 at once (the reference server hangs).

use super::body::{read_body, read_refused};
use super::negotiation::is_json;
use super::outbox::{outbox, Outbox, Refused};
use super::recording::{record_exchange, Refusal};
use super::sessions::{HttpSession, SessionKind};
use super::sse;
use super::state::HttpState;
use crate::server::dispatch::Work;
use crate::server::exchange::Origin;
use crate::server::limits::{Limit, LimitHits};
use crate::server::sink::{Outlet, Undeliverable};
use crate::traffic::{HttpMeta, TransportKind};
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use std::collections::HashMap;
use std::sync::Arc;

/// The outlet of a legacy SSE session: its one stream's send buffer. A reader that falls
/// `stream_buffer_bytes` behind loses the stream, and with it the session (legacy SSE cannot
/// resume), counted as `stream_buffer_bytes` in the server's limit hits.
struct BoundedOutlet {
    /// The stream's send buffer.
    tx: Outbox<Arc<str>>,
    /// The server's limit hits.
    hits: Arc<LimitHits>,
}

impl Outlet for BoundedOutlet {
    fn deliver(&self, frame: Arc<str>) -> Result<Option<Arc<str>>, Undeliverable> {
        match self.tx.send(frame) {
            Ok(()) => Ok(None),
            Err(refused) => {
                if refused == Refused::Overflow {
                    self.hits.hit(Limit::StreamBufferBytes);
                }
                Err(Undeliverable)
            }
        }
    }
}

/// Ends the session when the `GET /sse` response is dropped (the client went away).
struct EndOnDrop {
    state: Arc<HttpState>,
    id: Arc<str>,
}

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        self.state.end_session(&self.id);
    }
}

/// `GET /sse`: a new session; the first event names its message endpoint.
pub async fn get(State(state): State<Arc<HttpState>>, headers: HeaderMap) -> Response {
    let request = (&Method::GET, "/sse", &headers);
    let (tx, rx) = outbox::<Arc<str>>(state.config.stream_buffer_bytes);
    let outlet = BoundedOutlet {
        tx,
        hits: state.server.limit_hits.clone(),
    };
    let core = state
        .server
        .open_session(TransportKind::Sse, Arc::new(outlet));
    let session = HttpSession::new(
        core.clone(),
        SessionKind::LegacySse,
        state.stream_bounds(0),
        state.server.clock.clone(),
    );
    if !state.sessions.insert(session, state.config.max_sessions) {
        state.server.close_session(&core);
        state.server.limit_hits.hit(Limit::Sessions);
        let message = format!(
            "Service Unavailable: too many sessions (limit {})",
            state.config.max_sessions
        );
        return Refusal::new(StatusCode::SERVICE_UNAVAILABLE, message).respond(
            &state,
            TransportKind::Sse,
            None,
            request,
            b"",
        );
    }
    record_exchange(
        &state,
        TransportKind::Sse,
        &core.id,
        request,
        StatusCode::OK,
    );
    let endpoint = sse::event(
        Some("endpoint"),
        None,
        None,
        &format!("/message?sessionId={}", core.id),
    );
    let guard = EndOnDrop {
        state: state.clone(),
        id: core.id.clone(),
    };
    let live = futures::stream::unfold((rx, guard), |(mut rx, guard)| async move {
        rx.recv()
            .await
            .map(|frame| (sse::message(None, &frame), (rx, guard)))
    });
    let events = futures::stream::iter([endpoint]).chain(live);
    sse::response(sse::body(
        events,
        (state.config.keepalive, &state.server.clock),
        state.shutdown.clone(),
    ))
}

/// `POST /message?sessionId=…`.
pub async fn post(
    State(state): State<Arc<HttpState>>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let request = (&Method::POST, "/message", &headers);
    let id = query.get("sessionId").map(String::as_str);
    let refuse = |refusal: Refusal, body: &[u8]| {
        refusal.respond(&state, TransportKind::Sse, id, request, body)
    };
    let limit = state.server.config.max_message_bytes;
    let Some(id) = id else {
        let r = Refusal::new(
            StatusCode::BAD_REQUEST,
            "Bad Request: the sessionId query parameter is required",
        );
        return refuse(r, &read_refused(body, limit).await);
    };
    let Some(session) = state
        .sessions
        .get(id)
        .filter(|s| s.kind == SessionKind::LegacySse)
    else {
        let r = Refusal::new(
            StatusCode::NOT_FOUND,
            format!("Session not found: {id} (open one with GET /sse)"),
        );
        return refuse(r, &read_refused(body, limit).await);
    };
    if !is_json(&headers) {
        let r = Refusal::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: Content-Type must be application/json",
        );
        return refuse(r, &read_refused(body, limit).await);
    }
    let body = match read_body(body, limit).await {
        Ok(b) => b,
        Err(refusal) => {
            return refuse(
                refusal.into_refusal(limit, &state.server.limit_hits),
                &refusal.prefix,
            )
        }
    };
    session.touch();
    let origin = Origin::Connection(&session.core);
    let decoded = state.server.decode(origin, &body);
    let status = if decoded.is_valid() {
        StatusCode::ACCEPTED
    } else {
        StatusCode::BAD_REQUEST
    };
    let http = Some(super::recording::http_meta(
        &Method::POST,
        "/message",
        status,
        &headers,
    ));
    let sink = session.core.sink.clone();
    match state.server.accept(origin, &sink, decoded, http) {
        // An invalid frame's error goes back in the HTTP response, not on the stream.
        Work::Reply(out) if status == StatusCode::BAD_REQUEST => {
            let text = sink
                .with_http(Some(HttpMeta::status(400)))
                .record_only(&out);
            return (
                status,
                [(header::CONTENT_TYPE, "application/json")],
                text.to_string(),
            )
                .into_response();
        }
        Work::Reply(out) => {
            sink.send_outgoing(&out);
        }
        Work::Task(fut) => {
            tokio::spawn(async move {
                if let Some(out) = fut.await {
                    sink.send_outgoing(&out);
                }
            });
        }
        Work::Http(answer) => {
            if answer.end_session {
                state.end_session(&session.core.id);
            }
            return super::scripted::response(&state, &answer);
        }
        Work::Nothing => {}
    }
    (StatusCode::ACCEPTED, "Accepted").into_response()
}

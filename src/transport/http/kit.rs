//! The HTTP front of a minimal hand-rolled kit (`--dialect universal-mcp-sdk`, docs/dialects.md):
//! no sessions and no SSE. Every `POST /mcp` stands alone: its answer is one `application/json`
//! body (a notification's is `204` with none), and what a handler sends on the way is not
//! delivered (there is no stream to carry it). `GET /mcp` describes the server, `GET /` is a
//! health document, every answer carries `Access-Control-Allow-Origin: *`, and a preflight
//! (`OPTIONS`) is `204`.

use super::body::read_body;
use super::recording::{http_meta, json_answer};
use super::state::HttpState;
use crate::protocol::Revision;
use crate::server::dispatch::Work;
use crate::server::session::{Phase, Session};
use crate::server::sink::Sink;
use crate::traffic::TransportKind;
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use std::sync::Arc;
use tokio::sync::mpsc;

/// The kit's routes (the control API and the lab are merged beside them).
pub fn routes(state: Arc<HttpState>) -> Router {
    Router::new()
        .route("/mcp", post(mcp).get(describe).options(preflight))
        .route("/", get(health).options(preflight))
        .layer(axum::middleware::map_response(any_origin))
        .with_state(state)
}

/// `POST /mcp`: the frame served on a connection of its own that ends with the exchange: an
/// `initialize` opens its handshake as usual; any other frame is served as on a connection
/// past its handshake at 2024-11-05.
async fn mcp(State(state): State<Arc<HttpState>>, request: axum::extract::Request) -> Response {
    let (parts, body) = request.into_parts();
    let limit = state.server.config.max_message_bytes;
    let Ok(body) = read_body(body, limit).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "request body too large").into_response();
    };
    let server = &state.server;
    let conn = server.connection_id(TransportKind::Http);
    // What a handler sends on the way has no stream to go on: recorded as not delivered.
    let (tx, _undelivered) = mpsc::unbounded_channel::<Arc<str>>();
    let sink = Sink::new(
        Arc::new(tx),
        server.wire(),
        TransportKind::Http,
        conn.clone(),
    );
    let session = Arc::new(Session::new(conn, TransportKind::Http, sink.clone()));
    let opens = serde_json::from_slice::<serde_json::Value>(&body)
        .is_ok_and(|v| v["method"] == "initialize");
    if !opens {
        session.update(|s| {
            s.phase = Phase::Ready;
            s.revision = Some(Revision::V2024_11_05);
        });
    }
    let http = server
        .recorder
        .capturing()
        .then(|| http_meta(&Method::POST, "/mcp", StatusCode::OK, &parts.headers));
    let out = match server.receive(&session, &sink, &body, http) {
        Work::Reply(out) => Some(out),
        Work::Task(fut) => fut.await,
        Work::Nothing => None,
        Work::Http(answer) => return super::scripted::response(&state, &answer),
    };
    session.close();
    match out {
        Some(out) => json_answer(&sink, StatusCode::OK, &out),
        None => StatusCode::NO_CONTENT.into_response(),
    }
}

/// `GET /mcp`: what the server is and its endpoints (not a stream).
async fn describe(State(state): State<Arc<HttpState>>) -> Response {
    let config = &state.server.config;
    let body = serde_json::json!({
        "name": config.name,
        "version": config.version,
        "protocolVersion": Revision::V2024_11_05.as_str(),
        "transport": "http",
        "endpoints": {
            "POST /mcp": "JSON-RPC requests and notifications, one per POST",
            "GET /mcp": "this description",
            "GET /": "health",
        },
    });
    json(StatusCode::OK, &body)
}

/// `GET /`: `{"status":"ok"}`.
async fn health() -> Response {
    json(StatusCode::OK, &serde_json::json!({ "status": "ok" }))
}

/// `OPTIONS`: `204`, allowing any origin, the methods served and any header.
async fn preflight() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("Content-Type, Authorization"),
    );
    response
}

/// Every answer allows any origin.
async fn any_origin(mut response: Response) -> Response {
    response.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

/// `value` as an `application/json` answer.
fn json(status: StatusCode, value: &serde_json::Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from(value.to_string()),
    )
        .into_response()
}

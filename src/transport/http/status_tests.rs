//! The HTTP status codes of the app, driven in-process (`tower::ServiceExt::oneshot`, no
//! socket): each refusal's status and its JSON-RPC error body. The same table is asserted over
//! real sockets by `tests/test_http.py`; here a wrong status fails `cargo test` already.

use super::config::HttpConfig;
use super::serving::app;
use super::state::HttpState;
use super::test_support::send;
use crate::server::registry::Registry;
use crate::server::{Server, ServerConfig};
use axum::body::Body;
use axum::http::{header, HeaderMap, Method, Request, StatusCode};
use axum::Router;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const MISSING_SESSION: &str =
    "Bad Request: Mcp-Session-Id header is required (only initialize may be sent without one)";

/// The whole app over a fresh server (offering nothing: status codes do not depend on what is
/// registered) with `server` and `http` settings.
fn app_with(server: ServerConfig, http: HttpConfig) -> Router {
    let server = Server::new(server, Registry::default()).expect("server config");
    app(HttpState::new(server, http, CancellationToken::new()))
}

/// The app as `Server()` + `start_http()` make it.
fn default_app() -> Router {
    app_with(ServerConfig::default(), HttpConfig::default())
}

/// A request to `path` from a well-behaved client on loopback (`Host: 127.0.0.1`, `Accept`
/// both, JSON body), with `headers` added or replacing those.
fn request(method: Method, path: &str, headers: &[(&str, &str)], body: &str) -> Request<Body> {
    let mut builder = Request::builder().method(method).uri(path);
    let defaults = [
        ("host", "127.0.0.1:3001"),
        ("accept", ACCEPT_BOTH),
        ("content-type", "application/json"),
    ];
    for (name, value) in defaults {
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            builder = builder.header(name, value);
        }
    }
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(Body::from(body.to_string())).expect("request")
}

/// `POST /mcp` with `body` and `headers`.
fn post(headers: &[(&str, &str)], body: &str) -> Request<Body> {
    request(Method::POST, "/mcp", headers, body)
}

/// A JSON-RPC request frame.
fn rpc(id: i64, method: &str, params: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string()
}

fn initialize_frame() -> String {
    let params = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": { "name": "status-tests", "version": "1" },
    });
    rpc(0, "initialize", params)
}

/// Opens a session (`initialize`); its `Mcp-Session-Id`.
async fn open_session(app: &Router) -> String {
    let (status, headers, _) = send(app, post(&[], &initialize_frame())).await;
    assert_eq!(status, StatusCode::OK);
    headers["mcp-session-id"].to_str().unwrap().to_string()
}

/// Asserts a transport refusal: `status`, `application/json`, and the JSON-RPC error body
/// with a null id, `code` and `message`.
#[track_caller]
fn assert_refusal(
    got: (StatusCode, HeaderMap, Value),
    status: StatusCode,
    code: i64,
    message: &str,
) {
    let (got_status, headers, body) = got;
    assert_eq!(got_status, status, "{body}");
    assert_eq!(headers[header::CONTENT_TYPE], "application/json");
    let expected =
        json!({ "jsonrpc": "2.0", "id": null, "error": { "code": code, "message": message } });
    assert_eq!(body, expected);
}

#[tokio::test]
async fn bad_request_400() {
    let app = default_app();
    // No session and not an initialize.
    let got = send(&app, post(&[], &rpc(1, "tools/list", json!({})))).await;
    assert_refusal(got, StatusCode::BAD_REQUEST, -32000, MISSING_SESSION);
    let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string();
    let got = send(&app, post(&[], &note)).await;
    assert_refusal(got, StatusCode::BAD_REQUEST, -32000, MISSING_SESSION);
    // An unknown method is -32601 at once, session or not (a 2.x client probes with it),
    // keeping its id as stdio does.
    let (status, _, body) = send(&app, post(&[], &rpc(1, "server/discover", json!({})))).await;
    let message = "Method not found: server/discover";
    let expected =
        json!({ "jsonrpc": "2.0", "id": 1, "error": { "code": -32601, "message": message } });
    assert_eq!((status, body), (StatusCode::BAD_REQUEST, expected));
    // Invalid JSON, before a session and within one.
    let parse_error = "Parse error: key must be a string at line 1 column 2";
    let got = send(&app, post(&[], "{oops")).await;
    assert_refusal(got, StatusCode::BAD_REQUEST, -32700, parse_error);
    let session = open_session(&app).await;
    let in_session = [("mcp-session-id", session.as_str())];
    let got = send(&app, post(&in_session, "{oops")).await;
    assert_refusal(got, StatusCode::BAD_REQUEST, -32700, parse_error);
    // A batch under 2025-11-25.
    let batch = format!("[{}]", rpc(1, "ping", json!({})));
    let got = send(&app, post(&in_session, &batch)).await;
    let message = "Invalid Request: JSON-RPC batches are not supported in protocol revision \
                   2025-11-25 (only 2025-03-26 allows them); send one message per frame";
    assert_refusal(got, StatusCode::BAD_REQUEST, -32600, message);
    // An unsupported MCP-Protocol-Version.
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "1999-01-01"),
    ];
    let got = send(&app, post(&headers, &rpc(1, "ping", json!({})))).await;
    let message = "Bad Request: Unsupported protocol version: 1999-01-01 \
                   (supported versions: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)";
    assert_refusal(got, StatusCode::BAD_REQUEST, -32000, message);
    // A GET without a session, and one resuming from an id this server never minted.
    let stream = [("accept", "text/event-stream")];
    let got = send(&app, request(Method::GET, "/mcp", &stream, "")).await;
    assert_refusal(got, StatusCode::BAD_REQUEST, -32000, MISSING_SESSION);
    let resume = [
        ("accept", "text/event-stream"),
        ("mcp-session-id", session.as_str()),
        ("last-event-id", "x"),
    ];
    let got = send(&app, request(Method::GET, "/mcp", &resume, "")).await;
    let message = "Bad Request: Last-Event-ID \"x\" is not an event id of this server";
    assert_refusal(got, StatusCode::BAD_REQUEST, -32000, message);
}

#[tokio::test]
async fn forbidden_403() {
    let app = default_app();
    let got = send(
        &app,
        post(&[("host", "evil.example.com")], &initialize_frame()),
    )
    .await;
    let message = "Forbidden: Host \"evil.example.com\" is not allowed (DNS-rebinding protection; see --allow-host)";
    assert_refusal(got, StatusCode::FORBIDDEN, -32000, message);
    let origin = [("origin", "http://evil.example.com")];
    let got = send(&app, post(&origin, &initialize_frame())).await;
    let message = "Forbidden: Origin \"http://evil.example.com\" is not allowed (DNS-rebinding protection; see --allow-origin)";
    assert_refusal(got, StatusCode::FORBIDDEN, -32000, message);
    // The guard wraps every route, not only /mcp.
    let got = send(
        &app,
        request(Method::GET, "/health", &[("host", "evil.example.com")], ""),
    )
    .await;
    assert_eq!(got.0, StatusCode::FORBIDDEN);
    // A loopback origin and an allowed host get through.
    let origin = [("origin", "http://localhost:5173")];
    let (status, _, _) = send(&app, post(&origin, &initialize_frame())).await;
    assert_eq!(status, StatusCode::OK);
    let allow = super::guard::Allowlist {
        hosts: vec!["evil.example.com".into()],
        origins: vec![],
    };
    let wide = app_with(
        ServerConfig::default(),
        HttpConfig {
            allow,
            ..HttpConfig::default()
        },
    );
    let host = [("host", "evil.example.com")];
    let (status, _, _) = send(&wide, post(&host, &initialize_frame())).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn not_found_404() {
    let app = default_app();
    let nope = [("mcp-session-id", "nope")];
    let got = send(&app, post(&nope, &rpc(1, "tools/list", json!({})))).await;
    assert_refusal(
        got,
        StatusCode::NOT_FOUND,
        -32001,
        "Session not found: nope",
    );
    // An ended session is unknown from then on, to every method.
    let session = open_session(&app).await;
    let in_session = [("mcp-session-id", session.as_str())];
    let (status, _, _) = send(&app, request(Method::DELETE, "/mcp", &in_session, "")).await;
    assert_eq!(status, StatusCode::OK);
    let gone = format!("Session not found: {session}");
    let got = send(&app, post(&in_session, &rpc(1, "ping", json!({})))).await;
    assert_refusal(got, StatusCode::NOT_FOUND, -32001, &gone);
    let got = send(&app, request(Method::DELETE, "/mcp", &in_session, "")).await;
    assert_refusal(got, StatusCode::NOT_FOUND, -32001, &gone);
    // The legacy transport's unknown session.
    let got = send(
        &app,
        request(Method::POST, "/message?sessionId=x", &[], "{}"),
    )
    .await;
    let message = "Session not found: x (open one with GET /sse)";
    assert_refusal(got, StatusCode::NOT_FOUND, -32000, message);
}

#[tokio::test]
async fn method_not_allowed_405() {
    let app = app_with(
        ServerConfig::default(),
        HttpConfig {
            standalone_stream: false,
            ..HttpConfig::default()
        },
    );
    let session = open_session(&app).await;
    let headers = [
        ("accept", "text/event-stream"),
        ("mcp-session-id", session.as_str()),
    ];
    let got = send(&app, request(Method::GET, "/mcp", &headers, "")).await;
    assert_eq!(got.1[header::ALLOW], "POST, DELETE");
    let message = "Method Not Allowed: this server offers no standalone SSE stream";
    assert_refusal(got, StatusCode::METHOD_NOT_ALLOWED, -32000, message);
    // A method no route has: the router's own 405, with no JSON-RPC body.
    let (status, _, body) = send(&app, request(Method::PUT, "/mcp", &[], "")).await;
    assert_eq!(
        (status, body),
        (StatusCode::METHOD_NOT_ALLOWED, Value::Null)
    );
}

#[tokio::test]
async fn not_acceptable_406() {
    let app = default_app();
    let got = send(
        &app,
        post(&[("accept", "application/json")], &initialize_frame()),
    )
    .await;
    let message = "Not Acceptable: Client must accept both application/json and text/event-stream";
    assert_refusal(got, StatusCode::NOT_ACCEPTABLE, -32000, message);
    let got = send(
        &app,
        post(&[("accept", "text/event-stream")], &initialize_frame()),
    )
    .await;
    assert_refusal(got, StatusCode::NOT_ACCEPTABLE, -32000, message);
    // `*/*` and `type/*` ranges admit both.
    let (status, _, _) = send(&app, post(&[("accept", "*/*")], &initialize_frame())).await;
    assert_eq!(status, StatusCode::OK);
    let session = open_session(&app).await;
    let headers = [
        ("accept", "application/json"),
        ("mcp-session-id", session.as_str()),
    ];
    let got = send(&app, request(Method::GET, "/mcp", &headers, "")).await;
    let message = "Not Acceptable: Client must accept text/event-stream";
    assert_refusal(got, StatusCode::NOT_ACCEPTABLE, -32000, message);
}

#[tokio::test]
async fn payload_too_large_413() {
    let app = app_with(
        ServerConfig {
            max_message_bytes: 1000,
            ..ServerConfig::default()
        },
        HttpConfig::default(),
    );
    let params = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": { "name": "status-tests", "version": "1" },
        "pad": "x".repeat(2000),
    });
    let got = send(&app, post(&[], &rpc(0, "initialize", params))).await;
    let message = "Payload Too Large: request body exceeds the 1000-byte limit";
    assert_refusal(got, StatusCode::PAYLOAD_TOO_LARGE, -32000, message);
    // Under the limit is fine.
    let (status, _, _) = send(&app, post(&[], &initialize_frame())).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn unsupported_media_type_415() {
    let app = default_app();
    let message = "Unsupported Media Type: Content-Type must be application/json";
    let got = send(
        &app,
        post(&[("content-type", "text/plain")], &initialize_frame()),
    )
    .await;
    assert_refusal(got, StatusCode::UNSUPPORTED_MEDIA_TYPE, -32000, message);
    // Parameters are allowed; the type is case-insensitive.
    let json_utf8 = [("content-type", "Application/JSON; charset=utf-8")];
    let (status, _, _) = send(&app, post(&json_utf8, &initialize_frame())).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn service_unavailable_503() {
    let app = app_with(
        ServerConfig::default(),
        HttpConfig {
            max_sessions: 1,
            ..HttpConfig::default()
        },
    );
    let session = open_session(&app).await;
    let (status, _, body) = send(&app, post(&[], &initialize_frame())).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(body["error"]["code"], -32000);
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("Service Unavailable: too many sessions (limit 1)"));
    let in_session = [("mcp-session-id", session.as_str())];
    send(&app, request(Method::DELETE, "/mcp", &in_session, "")).await;
    open_session(&app).await;
}

#[test]
fn the_sdks_accept_value_admits_what_the_ranges_do() {
    let with = |values: &[&str]| {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::ACCEPT, v.parse().unwrap());
        }
        h
    };
    let both = ["application/json", "text/event-stream"];
    // The SDKs' exact value (compared whole) and the same ranges spelled otherwise agree.
    for value in [
        ACCEPT_BOTH,
        "text/event-stream,application/json",
        "APPLICATION/JSON ; q=1, text/event-stream",
    ] {
        let h = with(&[value]);
        assert!(super::negotiation::accepts(&h, &both), "{value}");
        assert!(
            super::negotiation::accepts(&h, &["text/event-stream"]),
            "{value}"
        );
        assert!(!super::negotiation::accepts(&h, &["text/html"]), "{value}");
    }
    // Split over two headers, the ranges still add up.
    assert!(super::negotiation::accepts(
        &with(&["application/json", "text/event-stream"]),
        &both
    ));
    assert!(!super::negotiation::accepts(
        &with(&["application/json"]),
        &both
    ));
}

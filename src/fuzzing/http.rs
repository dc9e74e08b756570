//! `http`: one HTTP request through the whole app (the guard, Streamable HTTP in both eras,
//! legacy SSE's `GET /sse` and `/message`, the control API, the OAuth lab's endpoints, bearer
//! tokens and JWTs) without a socket. The first byte picks the route, the second the headers; the rest is the
//! body (a GET's query). A fresh server per input: the control API changes what it serves.
//! Properties: never a 500, and every JSON-RPC answer is JSON-RPC.

use super::{assert_json_rpc, runtime};
use crate::options::{HttpOptions, ServerOptions};
use crate::transport::http::{serving::app, state::HttpState};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// How long a response body is read: an SSE stream that stays open is not waited for.
const READ_FOR: Duration = Duration::from_millis(30);

/// (method, path) by the first byte. A path ending in `?` takes the body as its query.
const ROUTES: &[(&str, &str)] = &[
    ("POST", "/mcp"),
    ("POST", "/mcp"),
    ("POST", "/mcp"),
    ("GET", "/mcp"),
    ("DELETE", "/mcp"),
    ("POST", "/message?sessionId=1"),
    ("POST", "/_control/faults"),
    ("POST", "/_control/tools"),
    ("POST", "/_control/resources"),
    ("POST", "/_control/prompts"),
    ("POST", "/_control/notify"),
    ("POST", "/_control/clock/advance"),
    ("GET", "/_control/traffic?"),
    ("POST", "/_control/auth/consent"),
    ("POST", "/_control/auth/documents"),
    ("POST", "/_control/auth/clients"),
    ("POST", "/register"),
    ("POST", "/token"),
    ("GET", "/authorize?"),
    ("POST", "/authorize/decide"),
    ("DELETE", "/_control/resources?"),
    ("GET", "/sse"),
];

/// The target.
pub fn http(data: &[u8]) {
    let [route, variant, body @ ..] = data else {
        return;
    };
    let (method, path) = ROUTES[usize::from(*route) % ROUTES.len()];
    let oauth = variant & 1 != 0;
    let server = ServerOptions {
        keep_traffic: Some(100),
        max_message_bytes: 64 * 1024,
        clock: "manual".into(),
        ..Default::default()
    }
    .server()
    .expect("the fuzzed server");
    let options = HttpOptions {
        auth: if oauth { "oauth" } else { "none" }.into(),
        ..Default::default()
    };
    let mut config = options.http_config().expect("the fuzzed listener");
    config.auth.base = "http://127.0.0.1:3001".into();
    let shutdown = CancellationToken::new();
    let state = HttpState::new(server, config, shutdown.clone());
    let uri = match path.strip_suffix('?') {
        Some(path) => format!("{path}?{}", percent(body)),
        None => path.to_string(),
    };
    let mut request = Request::builder()
        .method(method)
        .uri(uri)
        .header("host", "127.0.0.1:3001");
    request = request.header(
        "content-type",
        match (variant >> 1) & 3 {
            0 => "application/json",
            1 => "application/x-www-form-urlencoded",
            2 => "text/plain",
            _ => "application/json; charset=utf-8",
        },
    );
    if variant & 8 == 0 {
        request = request.header("accept", "application/json, text/event-stream");
    }
    match (variant >> 4) & 3 {
        0 => request = request.header("mcp-protocol-version", "2025-11-25"),
        1 => request = request.header("mcp-protocol-version", "2026-07-28"),
        2 => request = request.header("mcp-session-id", "fuzz"),
        _ => {}
    }
    if variant & 64 != 0 {
        let token: String = String::from_utf8_lossy(&body[..body.len().min(64)])
            .chars()
            .filter(|c| c.is_ascii_graphic())
            .collect();
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let request = request.body(Body::from(body.to_vec())).expect("a request");
    runtime().block_on(async {
        let response = app(state.clone())
            .oneshot(request)
            .await
            .expect("infallible");
        let status = response.status();
        assert_ne!(status, StatusCode::INTERNAL_SERVER_ERROR, "{method} {path}");
        let is_json = response
            .headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
        let mut body = response.into_body();
        let mut read = Vec::new();
        let _ = tokio::time::timeout(READ_FOR, async {
            while let Some(Ok(frame)) = body.frame().await {
                if let Ok(bytes) = frame.into_data() {
                    read.extend_from_slice(&bytes);
                }
            }
        })
        .await;
        let text = String::from_utf8_lossy(&read);
        if path.starts_with("/mcp") || path.starts_with("/message") {
            if is_json && !text.is_empty() {
                assert_json_rpc(&text);
            }
            for data in text.lines().filter_map(|l| l.strip_prefix("data: ")) {
                if !data.is_empty() {
                    assert_json_rpc(data);
                }
            }
        }
        shutdown.cancel();
        state.end_all_sessions();
    });
}

/// `bytes` as a query string: kept as they are where a query may hold them, else escaped.
fn percent(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| {
            if b.is_ascii_alphanumeric() || b"=&-_.~+%".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

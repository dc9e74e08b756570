//! `bare-axum --port P`: the machine's HTTP ceiling for the MCP echo benchmark.
//!
//! It answers `POST /mcp` with the same SSE frames the real server sends for an echo
//! `tools/call`, but with no MCP logic at all (no sessions, no dispatch, no validation).
//! The gap between this and the real server is what our own code costs.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

/// mimalloc, as in the server: the ceiling is measured with the allocator the server uses.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use axum::body::Bytes;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};

/// SSE event ids, shared by all connections like the real server's per-stream counter;
/// each request takes two (the priming event and the message).
static EVENT_ID: AtomicU64 = AtomicU64::new(0);

/// Parses `--port P` (default 0, an ephemeral port); the only option this binary has.
fn port_arg() -> Result<u16, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(0),
        [flag, p] if flag == "--port" => p.parse().map_err(|_| format!("bad port {p:?}")),
        _ => Err("usage: bare-axum [--port P]".into()),
    }
}

/// The whole `/mcp` handler: parse the body, echo `params.arguments.message` back as
/// an SSE response; notifications get 202 and `initialize` gets a fixed session id.
async fn mcp(body: Bytes) -> Response {
    let Ok(req) = serde_json::from_slice::<Value>(&body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let Some(id) = req.get("id") else {
        return StatusCode::ACCEPTED.into_response();
    };
    let message = req
        .pointer("/params/arguments/message")
        .and_then(Value::as_str)
        .unwrap_or("");
    let data = json!({
        "jsonrpc": "2.0",
        "id": id,
        "result": {"content": [{"type": "text", "text": format!("Echo: {message}")}]}
    });
    let n = EVENT_ID.fetch_add(2, Ordering::Relaxed);
    let frames = format!(
        "id: 1-{n}\nretry: 1000\ndata: \n\nevent: message\nid: 1-{}\ndata: {data}\n\n",
        n + 1
    );
    let mut resp = (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache, no-transform"),
        ],
        frames,
    )
        .into_response();
    if req.get("method").and_then(Value::as_str) == Some("initialize") {
        resp.headers_mut()
            .insert("mcp-session-id", HeaderValue::from_static("bare"));
    }
    resp
}

/// Resolves on SIGINT or SIGTERM, so benchmark scripts can stop the server cleanly.
async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("install SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

/// Binds 127.0.0.1, announces the URL on stderr (the same JSON line shape the real
/// server prints) and serves until a signal arrives.
#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port = port_arg().map_err(std::io::Error::other)?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let mut stderr = std::io::stderr();
    writeln!(stderr, "{}", json!({"event": "listening", "url": url}))?;
    stderr.flush()?;
    let app = Router::new().route("/mcp", post(mcp));
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await
}

//! The stateless era's HTTP rules (2026-07-28), driven in-process through the whole app
//! (`tower::ServiceExt::oneshot`): the request headers checked against the body (`-32020`,
//! 400, the request id kept), the order of the checks, the Base64 sentinel, `Mcp-Param-*`,
//! refused responses, 405 for GET/DELETE, 202 for notifications. `tests/test_http_stateless.py`
//! asserts the same over real sockets.

use super::config::HttpConfig;
use super::serving::app;
use super::state::HttpState;
use super::test_support::send;
use crate::server::handler::tool_fn;
use crate::server::registry::{Registry, Tool};
use crate::server::{Server, ServerConfig};
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use axum::Router;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

const V2026: &str = "2026-07-28";

/// The app over a server with one tool, `region`, whose `region` argument is mirrored into
/// `Mcp-Param-Region` and whose nested `scope.tenant` into `Mcp-Param-Tenant`.
fn stateless_app() -> Router {
    let mut registry = Registry::default();
    let tool = Tool::new(
        json!({
            "name": "region",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "region": { "type": "string", "x-mcp-header": "Region" },
                    "priority": { "type": "integer", "x-mcp-header": "Priority" },
                    "scope": { "type": "object", "properties": { "tenant": { "type": "string", "x-mcp-header": "Tenant" } } }
                }
            }
        }),
        tool_fn(|_, args| async move {
            Ok(json!({ "content": [{ "type": "text", "text": Value::Object(args).to_string() }] }))
        }),
    )
    .expect("tool");
    registry.tools.insert("region".into(), tool);
    let server = Server::new(ServerConfig::default(), registry).expect("server");
    app(HttpState::new(
        server,
        HttpConfig::default(),
        CancellationToken::new(),
    ))
}

/// The request envelope.
fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A stateless request frame: `params` with the envelope added.
fn rpc(id: i64, method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = envelope();
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string()
}

/// `method` on `/mcp` with exactly `headers` (plus Host, and Accept/Content-Type for a POST).
fn request(method: Method, headers: &[(&str, &str)], body: &str) -> Request<Body> {
    let mut builder = Request::builder()
        .method(method.clone())
        .uri("/mcp")
        .header("host", "127.0.0.1:3001");
    if method == Method::POST {
        builder = builder
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json");
    }
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(Body::from(body.to_string())).expect("request")
}

/// Asserts a JSON-RPC error answer: `status`, `code`, and the request's `id` kept.
fn assert_error(answer: &(StatusCode, HeaderMap, Value), status: StatusCode, code: i64, id: Value) {
    let (got, headers, body) = answer;
    assert_eq!(*got, status, "{body}");
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(body["id"], id, "{body}");
    assert!(headers.get("mcp-session-id").is_none());
}

/// `tools/call region` with `arguments` and the standard headers plus `extra`.
async fn call_region(
    app: &Router,
    arguments: Value,
    extra: &[(&str, &str)],
) -> (StatusCode, HeaderMap, Value) {
    let mut headers = vec![
        ("mcp-protocol-version", V2026),
        ("mcp-method", "tools/call"),
        ("mcp-name", "region"),
    ];
    headers.extend_from_slice(extra);
    let body = rpc(
        7,
        "tools/call",
        json!({ "name": "region", "arguments": arguments }),
    );
    send(app, request(Method::POST, &headers, &body)).await
}

#[tokio::test]
async fn a_request_with_matching_headers_is_served_as_json() {
    let app = stateless_app();
    let headers = [
        ("MCP-Protocol-Version", V2026),
        ("Mcp-Method", "tools/list"),
    ];
    let (status, h, body) = send(
        &app,
        request(Method::POST, &headers, &rpc(1, "tools/list", json!({}))),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(h["content-type"], "application/json");
    assert_eq!(body["result"]["tools"][0]["name"], "region");
    assert!(h.get("mcp-session-id").is_none());
}

#[tokio::test]
async fn each_standard_header_case_is_minus_32020_with_400() {
    let app = stateless_app();
    let list = rpc(3, "tools/list", json!({}));
    let cases: [&[(&str, &str)]; 7] = [
        // The version header is required, and must equal the envelope's version.
        &[("mcp-method", "tools/list")],
        &[
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-method", "tools/list"),
        ],
        // Mcp-Method is required and case-sensitive.
        &[("mcp-protocol-version", V2026)],
        &[
            ("mcp-protocol-version", V2026),
            ("mcp-method", "prompts/list"),
        ],
        &[
            ("mcp-protocol-version", V2026),
            ("mcp-method", "TOOLS/LIST"),
        ],
        // A routing header sent twice.
        &[
            ("mcp-protocol-version", V2026),
            ("mcp-method", "tools/list"),
            ("mcp-method", "tools/list"),
        ],
        // Not visible ASCII (opaque bytes a proxy may read differently).
        &[
            ("mcp-protocol-version", V2026),
            ("mcp-method", "tools/listé"),
        ],
    ];
    for headers in cases {
        let answer = send(&app, request(Method::POST, headers, &list)).await;
        assert_error(&answer, StatusCode::BAD_REQUEST, -32020, json!(3));
    }
}

#[tokio::test]
async fn header_names_are_case_insensitive_and_values_trimmed() {
    let app = stateless_app();
    let headers = [
        ("mCp-PrOtOcOl-VeRsIoN", V2026),
        ("MCP-METHOD", "  tools/list\t"),
    ];
    let (status, _, body) = send(
        &app,
        request(Method::POST, &headers, &rpc(1, "tools/list", json!({}))),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn mcp_name_is_required_and_decoded() {
    let app = stateless_app();
    let body = rpc(
        4,
        "tools/call",
        json!({ "name": "region", "arguments": {} }),
    );
    let base = [
        ("mcp-protocol-version", V2026),
        ("mcp-method", "tools/call"),
    ];
    let missing = send(&app, request(Method::POST, &base, &body)).await;
    assert_error(&missing, StatusCode::BAD_REQUEST, -32020, json!(4));
    for (name, ok) in [
        ("other", false),
        ("=?base64?cmVnaW9u?=", true),
        ("=?base64?cmVnaW9u?=x", false),
        ("=?base64?cmVnaW9u=?=", false),
    ] {
        let headers = [base[0], base[1], ("mcp-name", name)];
        let answer = send(&app, request(Method::POST, &headers, &body)).await;
        if ok {
            assert_eq!(answer.0, StatusCode::OK, "{name}: {}", answer.2);
            assert!(answer.2.get("result").is_some(), "{name}: {}", answer.2);
        } else {
            assert_error(&answer, StatusCode::BAD_REQUEST, -32020, json!(4));
        }
    }
    // resources/read names its uri.
    let read = rpc(5, "resources/read", json!({ "uri": "test://x" }));
    let headers = [
        ("mcp-protocol-version", V2026),
        ("mcp-method", "resources/read"),
        ("mcp-name", "test://y"),
    ];
    assert_error(
        &send(&app, request(Method::POST, &headers, &read)).await,
        StatusCode::BAD_REQUEST,
        -32020,
        json!(5),
    );
}

#[tokio::test]
async fn mcp_param_headers_must_mirror_annotated_arguments() {
    let app = stateless_app();
    // Present and equal (plain, Base64, nested, an integer compared as a number): served.
    for (arguments, extra) in [
        (
            json!({ "region": "us-west1" }),
            vec![("mcp-param-region", "us-west1")],
        ),
        (
            json!({ "region": "Hello" }),
            vec![("Mcp-Param-Region", "=?base64?SGVsbG8=?=")],
        ),
        (
            json!({ "region": "SGVsbG8=" }),
            vec![("mcp-param-region", "SGVsbG8=")],
        ),
        (
            json!({ "scope": { "tenant": "t1" } }),
            vec![("mcp-param-tenant", "t1")],
        ),
        (
            json!({ "priority": 42 }),
            vec![("mcp-param-priority", "42")],
        ),
        (json!({ "region": null }), vec![]),
        (json!({}), vec![]),
    ] {
        let (status, _, body) = call_region(&app, arguments.clone(), &extra).await;
        assert_eq!(status, StatusCode::OK, "{arguments}: {body}");
        assert!(body.get("result").is_some(), "{arguments}: {body}");
    }
    // Missing, different, bad Base64, or sent without a value: -32020.
    for (arguments, extra) in [
        (json!({ "region": "us-west1" }), vec![]),
        (
            json!({ "region": "us-west1" }),
            vec![("mcp-param-region", "US-WEST1")],
        ),
        (
            json!({ "region": "Hello" }),
            vec![("mcp-param-region", "=?base64?SGVsbG8?=")],
        ),
        (
            json!({ "region": "Hello" }),
            vec![("mcp-param-region", "=?base64?SGVs!!!bG8=?=")],
        ),
        (
            json!({ "priority": 42 }),
            vec![("mcp-param-priority", "43")],
        ),
        (json!({}), vec![("mcp-param-region", "us-west1")]),
    ] {
        let answer = call_region(&app, arguments.clone(), &extra).await;
        assert_error(&answer, StatusCode::BAD_REQUEST, -32020, json!(7));
    }
}

#[tokio::test]
async fn the_envelope_is_checked_before_the_headers_and_the_version_after() {
    let app = stateless_app();
    // No envelope: -32602 even though Mcp-Method is missing too.
    let bare =
        json!({ "jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {} }).to_string();
    let answer = send(
        &app,
        request(Method::POST, &[("mcp-protocol-version", V2026)], &bare),
    )
    .await;
    assert_error(&answer, StatusCode::BAD_REQUEST, -32602, json!(8));
    // Header and envelope agree on an unsupported version: -32022 with its data.
    let mut frame: Value = serde_json::from_str(&rpc(9, "tools/list", json!({}))).unwrap();
    frame["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let headers = [
        ("mcp-protocol-version", "2099-01-01"),
        ("mcp-method", "tools/list"),
    ];
    let answer = send(&app, request(Method::POST, &headers, &frame.to_string())).await;
    // The header names no revision this server knows, so the envelope decides the era.
    assert_error(&answer, StatusCode::BAD_REQUEST, -32022, json!(9));
    assert_eq!(answer.2["error"]["data"]["requested"], "2099-01-01");
    assert_eq!(answer.2["error"]["data"]["supported"], json!([V2026]));
}

#[tokio::test]
async fn removed_and_unknown_methods_are_404_keeping_the_id() {
    let app = stateless_app();
    for method in ["ping", "initialize", "logging/setLevel", "foo/bar"] {
        let headers = [("mcp-protocol-version", V2026), ("mcp-method", method)];
        let answer = send(
            &app,
            request(Method::POST, &headers, &rpc(11, method, json!({}))),
        )
        .await;
        assert_error(&answer, StatusCode::NOT_FOUND, -32601, json!(11));
    }
}

#[tokio::test]
async fn responses_and_batches_are_refused_and_notifications_accepted() {
    let app = stateless_app();
    let version = [("mcp-protocol-version", V2026)];
    let response = json!({ "jsonrpc": "2.0", "id": 1, "result": {} }).to_string();
    assert_error(
        &send(&app, request(Method::POST, &version, &response)).await,
        StatusCode::BAD_REQUEST,
        -32600,
        Value::Null,
    );
    let batch = format!("[{}]", rpc(1, "tools/list", json!({})));
    assert_error(
        &send(&app, request(Method::POST, &version, &batch)).await,
        StatusCode::BAD_REQUEST,
        -32600,
        Value::Null,
    );
    // The TS client's cancellation: no Mcp-Method, still 202.
    let cancelled = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 1 } }).to_string();
    let (status, _, body) = send(&app, request(Method::POST, &version, &cancelled)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(body, Value::Null);
}

#[tokio::test]
async fn get_and_delete_with_a_2026_version_are_405_allow_post() {
    let app = stateless_app();
    for method in [Method::GET, Method::DELETE] {
        let headers = [
            ("mcp-protocol-version", V2026),
            ("mcp-session-id", "whatever"),
            ("accept", "text/event-stream"),
        ];
        let (status, h, _) = send(&app, request(method.clone(), &headers, "")).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(h["allow"], "POST");
        assert!(h.get("mcp-session-id").is_none());
    }
}

#[tokio::test]
async fn session_and_last_event_id_headers_are_ignored() {
    let app = stateless_app();
    let headers = [
        ("mcp-protocol-version", V2026),
        ("mcp-method", "tools/list"),
        ("mcp-session-id", "no-such-session"),
        ("last-event-id", "0-1"),
    ];
    let (status, h, body) = send(
        &app,
        request(Method::POST, &headers, &rpc(1, "tools/list", json!({}))),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(h.get("mcp-session-id").is_none());
}

/// The app over a server whose one tool, `pair`, has a JSON Schema 2020-12 input schema with no
/// `$schema`: `prefixItems` (which earlier drafts ignore) and a `$ref` into `$defs`.
fn schema_app() -> Router {
    let mut registry = Registry::default();
    let tool = Tool::new(
        json!({
            "name": "pair",
            "inputSchema": {
                "type": "object",
                "$defs": { "positive": { "type": "integer", "minimum": 1 } },
                "properties": {
                    "pair": { "type": "array", "prefixItems": [{ "type": "string" }, { "$ref": "#/$defs/positive" }] }
                },
                "required": ["pair"]
            }
        }),
        tool_fn(|_, _| async { Ok(json!({ "content": [{ "type": "text", "text": "ok" }] })) }),
    )
    .expect("tool");
    registry.tools.insert("pair".into(), tool);
    let server = Server::new(ServerConfig::default(), registry).expect("server");
    app(HttpState::new(
        server,
        HttpConfig::default(),
        CancellationToken::new(),
    ))
}

#[tokio::test]
async fn tool_input_is_validated_as_json_schema_2020_12_by_default() {
    let app = schema_app();
    let headers = [
        ("mcp-protocol-version", V2026),
        ("mcp-method", "tools/call"),
        ("mcp-name", "pair"),
    ];
    for (pair, valid) in [
        (json!(["a", 1]), true),
        (json!(["a", "b"]), false),
        (json!(["a", 0]), false),
    ] {
        let body = rpc(
            1,
            "tools/call",
            json!({ "name": "pair", "arguments": { "pair": pair } }),
        );
        let (status, _, answer) = send(&app, request(Method::POST, &headers, &body)).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        let is_error = answer["result"]["isError"] == json!(true);
        assert_eq!(is_error, !valid, "{pair}: {answer}");
    }
}

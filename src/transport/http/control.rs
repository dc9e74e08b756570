//! The control API (`/_control/`, `docs/control-api.md`): a small JSON API on the HTTP
//! listener that lets a test suite in any language script the server as a Python test does —
//! fault rules, notifications, the traffic, a reset. It sits behind the same Host/Origin guard
//! as `/mcp`; with a token configured every call must carry `Authorization: Bearer <token>`.
//! A body the API cannot take is answered `400` with `{"error": {"field", "message"}}`, and the
//! server goes on serving.

use super::state::HttpState;
use crate::faults::RuleSpec;
use crate::field_error::FieldError;
use crate::protocol::LogLevel;
use crate::server::registry::ListKind;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{middleware, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// The API's version (`GET /_control/` says it): a change that breaks a caller raises it.
pub const API_VERSION: u32 = 1;

/// The control API's routes, to be merged at the root of the app.
pub fn routes(state: Arc<HttpState>) -> Router {
    Router::new()
        .route("/_control", get(index))
        .route("/_control/", get(index))
        .route(
            "/_control/faults",
            get(list_faults).post(add_fault).delete(clear_faults),
        )
        .route("/_control/faults/{id}", get(one_fault).delete(remove_fault))
        .route("/_control/faults/presets/{name}", post(add_preset))
        .route("/_control/tools", post(add_tool))
        .route("/_control/tools/{name}", delete(remove_tool))
        .route("/_control/traffic", get(traffic))
        .route("/_control/notify", post(notify))
        .route("/_control/reset", post(reset))
        .route(
            "/_control/{*rest}",
            delete(unknown).get(unknown).post(unknown),
        )
        .route_layer(middleware::from_fn_with_state(state.clone(), token_check))
        .with_state(state)
}

/// Every control call passes here first: without the configured token it is refused.
async fn token_check(
    State(state): State<Arc<HttpState>>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> Response {
    match refusal(&state, request.headers()) {
        Some(refused) => refused,
        None => next.run(request).await,
    }
}

/// A JSON answer.
fn answer(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// `400` naming the field at fault (empty: the body as a whole).
fn bad(field: &str, message: impl Into<String>) -> Response {
    let error = json!({ "field": field, "message": message.into() });
    answer(StatusCode::BAD_REQUEST, json!({ "error": error }))
}

/// The refusal of a call without the configured token (`401`, with `WWW-Authenticate:
/// Bearer`); `None` when the call may go on.
fn refusal(state: &HttpState, headers: &HeaderMap) -> Option<Response> {
    let token = state.config.control_token.as_ref()?;
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if given == Some(token.as_str()) {
        return None;
    }
    let mut refused = answer(
        StatusCode::UNAUTHORIZED,
        json!({ "error": { "field": "", "message": "the control API needs Authorization: Bearer <the --control-token>" } }),
    );
    refused.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    Some(refused)
}

/// `GET /_control/`: what is served, and the API's version.
async fn index(State(state): State<Arc<HttpState>>) -> Response {
    let identity = &state.server.config;
    answer(
        StatusCode::OK,
        json!({
            "api": API_VERSION,
            "server": { "name": identity.name, "version": identity.version },
            "endpoints": [
                "GET /_control/",
                "GET /_control/faults", "POST /_control/faults", "DELETE /_control/faults",
                "GET /_control/faults/{id}", "DELETE /_control/faults/{id}",
                "POST /_control/faults/presets/{name}?seed=N",
                "POST /_control/tools", "DELETE /_control/tools/{name}",
                "GET /_control/traffic?since=SEQ",
                "POST /_control/notify",
                "POST /_control/reset",
            ],
        }),
    )
}

/// `GET /_control/faults`: the rules in force, in order, with their hits.
async fn list_faults(State(state): State<Arc<HttpState>>) -> Response {
    let rules: Vec<Value> = state
        .server
        .faults
        .rules()
        .iter()
        .map(|r| r.to_json())
        .collect();
    answer(StatusCode::OK, json!({ "rules": rules }))
}

/// `POST /_control/faults` (a rule in the file format): `201` with its id and the rule.
async fn add_fault(State(state): State<Arc<HttpState>>, body: Bytes) -> Response {
    let Ok(text) = std::str::from_utf8(&body) else {
        return bad("", "the body is not UTF-8");
    };
    let refused = |e: FieldError| bad(&e.field, e.message);
    let spec = match RuleSpec::parse(text) {
        Ok(spec) => spec,
        Err(e) => return refused(e),
    };
    match state.server.faults.add(spec) {
        Ok(rule) => answer(
            StatusCode::CREATED,
            json!({ "id": &*rule.id, "rule": rule.to_json() }),
        ),
        Err(e) => refused(e),
    }
}

/// `DELETE /_control/faults`: every rule out (`{"removed": n}`).
async fn clear_faults(State(state): State<Arc<HttpState>>) -> Response {
    let removed = state.server.faults.clear();
    answer(StatusCode::OK, json!({ "removed": removed }))
}

/// `GET /_control/faults/{id}`: one rule with its hits, or `404`.
async fn one_fault(State(state): State<Arc<HttpState>>, Path(id): Path<String>) -> Response {
    match state.server.faults.get(&id) {
        Some(rule) => answer(StatusCode::OK, rule.to_json()),
        None => no_rule(&id),
    }
}

/// `DELETE /_control/faults/{id}`: `204`, or `404` when no such rule is in force.
async fn remove_fault(State(state): State<Arc<HttpState>>, Path(id): Path<String>) -> Response {
    if state.server.faults.remove(&id) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        no_rule(&id)
    }
}

/// `404` for a rule id not in force.
fn no_rule(id: &str) -> Response {
    let message = format!("no fault rule {id:?} is in force");
    answer(
        StatusCode::NOT_FOUND,
        json!({ "error": { "field": "id", "message": message } }),
    )
}

/// `POST /_control/tools` (`{"name", "description", "inputSchema", "results": [...]}`, see
/// [`crate::catalog::canned`]): registers a canned tool (clients get `list_changed`), `201`
/// with its name. A tool of that name is replaced.
async fn add_tool(State(state): State<Arc<HttpState>>, body: Bytes) -> Response {
    let Ok(text) = std::str::from_utf8(&body) else {
        return bad("", "the body is not UTF-8");
    };
    match crate::catalog::canned::tool(text) {
        Ok(tool) => {
            let name = tool.name().to_string();
            state.server.add_tool(tool);
            answer(StatusCode::CREATED, json!({ "name": name }))
        }
        Err(e) => bad(&e.field, e.message),
    }
}

/// `DELETE /_control/tools/{name}`: `204` (clients get `list_changed`), or `404`.
async fn remove_tool(State(state): State<Arc<HttpState>>, Path(name): Path<String>) -> Response {
    if state.server.remove_tool(&name) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        let message = format!("no tool {name:?} is registered");
        answer(
            StatusCode::NOT_FOUND,
            json!({ "error": { "field": "name", "message": message } }),
        )
    }
}

/// `POST /_control/faults/presets/{name}?seed=N`'s query.
#[derive(Deserialize)]
struct Seed {
    /// The seed of the preset's draws (default 0).
    #[serde(default)]
    seed: u64,
}

/// `POST /_control/faults/presets/{name}?seed=N`: a named preset's rules in force, `201` with
/// their ids; an unknown name is `400` naming the known ones.
async fn add_preset(
    State(state): State<Arc<HttpState>>,
    Path(name): Path<String>,
    query: Result<Query<Seed>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(Seed { seed })) = query else {
        return bad("seed", "must be a whole number");
    };
    match state.server.faults.add_preset(&name, seed) {
        Ok(rules) => {
            let ids: Vec<&str> = rules.iter().map(|r| &*r.id).collect();
            answer(StatusCode::CREATED, json!({ "ids": ids }))
        }
        Err(e) => bad(&e.field, e.message),
    }
}

/// `GET /_control/traffic`'s query.
#[derive(Deserialize)]
struct Since {
    /// Only records with a greater `seq` (default 0: all that are kept).
    #[serde(default)]
    since: u64,
}

/// `GET /_control/traffic?since=SEQ`: the records after `SEQ` as JSON lines
/// (`application/x-ndjson`, `docs/traffic-format.md`).
async fn traffic(
    State(state): State<Arc<HttpState>>,
    query: Result<Query<Since>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(Since { since })) = query else {
        return bad("since", "must be a record's seq (a whole number)");
    };
    let mut lines = String::new();
    for record in state.server.recorder.since(since) {
        lines.push_str(&record.to_json());
        lines.push('\n');
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        lines,
    )
        .into_response()
}

/// `POST /_control/notify`: sends one notification to the connected clients —
/// `{"resource_updated": URI}`, `{"list_changed": "tools" | "resources" | "prompts"}` or
/// `{"log": {"level": L, "data": D, "logger": N}}` — and says to how many (`{"sent": n}`; a
/// `list_changed` reaches every session and listen stream that asked for it).
async fn notify(State(state): State<Arc<HttpState>>, body: Bytes) -> Response {
    let body = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(m)) if m.len() == 1 => m,
        Ok(_) => {
            return bad(
                "",
                "the body is one of {\"resource_updated\": URI}, {\"list_changed\": KIND}, {\"log\": {...}}",
            )
        }
        Err(e) => return bad("", format!("the body is not JSON: {e}")),
    };
    let server = &state.server;
    let (what, value) = body.iter().next().expect("one member");
    match (what.as_str(), value) {
        ("resource_updated", Value::String(uri)) => {
            let sent = server.notify_resource_updated(uri);
            answer(StatusCode::OK, json!({ "sent": sent }))
        }
        ("resource_updated", _) => bad("resource_updated", "must be a URI (a string)"),
        ("list_changed", kind) => {
            let kind = match kind.as_str() {
                Some("tools") => ListKind::Tools,
                Some("resources") => ListKind::Resources,
                Some("prompts") => ListKind::Prompts,
                _ => {
                    return bad(
                        "list_changed",
                        "must be \"tools\", \"resources\" or \"prompts\"",
                    )
                }
            };
            server.notify_list_changed(kind);
            answer(StatusCode::OK, json!({ "sent": server.session_count() }))
        }
        ("log", Value::Object(log)) => {
            let level = match log.get("level").and_then(Value::as_str).map(str::parse::<LogLevel>) {
                Some(Ok(level)) => level,
                _ => return bad("log.level", "must be a log level (debug, info, notice, warning, error, critical, alert, emergency)"),
            };
            let Some(data) = log.get("data") else {
                return bad("log.data", "is required (any JSON)");
            };
            let logger = match log.get("logger") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.as_str()),
                Some(_) => return bad("log.logger", "must be a string"),
            };
            let sent = server.log(level, data.clone(), logger);
            answer(StatusCode::OK, json!({ "sent": sent }))
        }
        ("log", _) => bad("log", "must be an object {\"level\", \"data\", \"logger\"}"),
        (other, _) => bad(
            other,
            "unknown notification (resource_updated, list_changed, log)",
        ),
    }
}

/// `POST /_control/reset`: back to the start — no fault rules, no traffic kept (`204`).
async fn reset(State(state): State<Arc<HttpState>>) -> Response {
    state.server.faults.clear();
    state.server.recorder.clear();
    StatusCode::NO_CONTENT.into_response()
}

/// Anything else under `/_control/`: `404` naming what there is.
async fn unknown() -> Response {
    answer(
        StatusCode::NOT_FOUND,
        json!({ "error": { "field": "", "message": "no such control endpoint: GET /_control/ lists them" } }),
    )
}

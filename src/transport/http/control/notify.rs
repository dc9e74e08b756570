//! The control API's notifications (a resource updated, a list changed, a log message, any
//! notification) and its questions to the clients (`POST /_control/ask`).

use super::reply::{answer, bad, parse_body};
use crate::protocol::LogLevel;
use crate::server::registry::ListKind;
use crate::transport::http::state::HttpState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};
use std::sync::Arc;

/// `POST /_control/notify`: sends one notification to the connected clients —
/// `{"resource_updated": URI}`, `{"list_changed": "tools" | "resources" | "prompts"}` or
/// `{"log": {"level": L, "data": D, "logger": N}}` — and says to how many (`{"sent": n}`; a
/// `list_changed` reaches every session and listen stream that asked for it).
pub async fn notify(State(state): State<Arc<HttpState>>, body: Bytes) -> Response {
    let body = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(m)) if m.len() == 1 => m,
        Ok(_) => {
            return bad(
                "",
                "the body is one of {\"resource_updated\": URI}, {\"list_changed\": KIND}, {\"log\": {...}}, {\"notification\": {...}}",
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
        ("notification", Value::Object(n)) => {
            let Some(Value::String(method)) = n.get("method") else {
                return bad("notification.method", "is required (a string)");
            };
            let session = match n.get("session") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.as_str()),
                Some(_) => return bad("notification.session", "must be a session id (a string)"),
            };
            let sent = server.notify(session, method, n.get("params").cloned());
            answer(StatusCode::OK, json!({ "sent": sent }))
        }
        ("notification", _) => bad(
            "notification",
            "must be an object {\"method\", \"params\", \"session\"}",
        ),
        (other, _) => bad(
            other,
            "unknown notification (resource_updated, list_changed, log, notification)",
        ),
    }
}

/// `POST /_control/ask`'s body.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ask {
    /// The request's method (`roots/list`, `sampling/createMessage`, `elicitation/create`).
    method: String,
    /// Its params, if any.
    #[serde(default)]
    params: Option<Value>,
    /// One session's client only (default: every initialized one).
    #[serde(default)]
    session: Option<String>,
    /// How long to wait for the answers, in seconds (default 30).
    #[serde(default)]
    timeout: Option<f64>,
}

/// `POST /_control/ask` `{"method", "params", "session", "timeout"}`: asks the clients (as
/// Python's `srv.ask`) and answers `{"answers": {session: result or {"error": …}}}`; `504` when
/// they have not all answered in time.
pub async fn ask(State(state): State<Arc<HttpState>>, body: Bytes) -> Response {
    let ask = match parse_body::<Ask>(&body) {
        Ok(ask) => ask,
        Err(refused) => return refused,
    };
    let Ok(limit) = std::time::Duration::try_from_secs_f64(ask.timeout.unwrap_or(30.0)) else {
        return bad("timeout", "must be a finite number of seconds >= 0");
    };
    let asked = state
        .server
        .ask_sessions(ask.session.as_deref(), &ask.method, ask.params);
    match tokio::time::timeout(limit, asked).await {
        Ok(answers) => {
            let answers: serde_json::Map<String, Value> = answers
                .into_iter()
                .map(|(id, a)| (id.to_string(), a.unwrap_or_else(|e| json!({ "error": e }))))
                .collect();
            answer(StatusCode::OK, json!({ "answers": answers }))
        }
        Err(_) => answer(
            StatusCode::GATEWAY_TIMEOUT,
            json!({ "error": { "field": "timeout", "message": "the clients did not all answer in time" } }),
        ),
    }
}

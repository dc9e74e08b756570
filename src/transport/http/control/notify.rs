//! The control API's notifications: a resource updated, a list changed, a log message.

use super::reply::{answer, bad};
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

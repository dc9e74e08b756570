//! How the authorization server answers and records: JSON answers and OAuth errors (RFC 6749
//! §5.2), and each exchange in the traffic next to the MCP frames, with every secret, code and
//! token in it redacted to `redacted-` and a short hash (the same value always reads the same,
//! so a reader can still follow a code from `/authorize` to `/token`).

use crate::traffic::{FrameMeta, FrameSummary, HttpMeta, TransportKind};
use crate::transport::http::recording::http_meta;
use crate::transport::http::state::HttpState;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// The connection auth exchanges are recorded on: they belong to no MCP session.
const CONN: &str = "auth";

/// Members whose values are secrets, in form bodies, queries and JSON answers.
const SECRET_MEMBERS: &[&str] = &[
    "code",
    "code_verifier",
    "client_secret",
    "access_token",
    "refresh_token",
    "client_assertion",
    "assertion",
];

/// `value` as records show a secret: `redacted-` and the first 8 hex digits of its SHA-256
/// (URL-safe, so a redacted query or form reads as it was sent).
pub fn redact(value: &str) -> String {
    let digest = Sha256::digest(value.as_bytes());
    let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("redacted-{hex}")
}

/// A form body or query with the values of secret members redacted.
pub fn redact_form(text: &str) -> String {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(text).unwrap_or_default();
    let redacted: Vec<(String, String)> = pairs
        .into_iter()
        .map(|(k, v)| {
            let v = if SECRET_MEMBERS.contains(&k.as_str()) {
                redact(&v)
            } else {
                v
            };
            (k, v)
        })
        .collect();
    serde_urlencoded::to_string(&redacted).unwrap_or_default()
}

/// A JSON answer with the values of secret members redacted.
fn redact_json(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::String(s) if SECRET_MEMBERS.contains(&k.as_str()) => {
                            Value::String(redact(s))
                        }
                        other => redact_json(other),
                    };
                    (k.clone(), v)
                })
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}

/// One request to the authorization server, as it is recorded.
pub struct Exchange<'a> {
    /// Where the records go.
    pub state: &'a HttpState,
    /// The request's method, path and headers.
    pub method: &'a Method,
    /// Its path.
    pub path: &'a str,
    /// Its headers (only the MCP-relevant ones are recorded, never `Authorization`).
    pub headers: &'a HeaderMap,
    /// What it carried, secrets redacted already (the query of a GET, the body of a POST).
    pub sent: String,
}

impl Exchange<'_> {
    /// Records the request and `answer` (its body redacted), then builds the response.
    pub fn answer(self, status: StatusCode, answer: Value) -> Response {
        self.record(status, redact_json(&answer).to_string());
        let mut response = (
            status,
            [(header::CONTENT_TYPE, "application/json")],
            answer.to_string(),
        )
            .into_response();
        let headers = response.headers_mut();
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
        response
    }

    /// Records the request and an OAuth error answer (`{"error", "error_description"}`).
    pub fn error(self, status: StatusCode, error: &str, description: &str) -> Response {
        self.answer(
            status,
            json!({ "error": error, "error_description": description }),
        )
    }

    /// Records the request and a redirect to `location` (`redacted` is how the record shows
    /// it), then builds the `302`.
    pub fn redirect(self, location: &str, redacted: String) -> Response {
        self.record(StatusCode::FOUND, redacted);
        let mut response = StatusCode::FOUND.into_response();
        if let Ok(value) = HeaderValue::from_str(location) {
            response.headers_mut().insert(header::LOCATION, value);
        }
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }

    /// The request (`in`, with what it sent) and the answer (`out`, with its status) as two
    /// `http` records.
    fn record(&self, status: StatusCode, answered: String) {
        let recorder = &self.state.server.recorder;
        if !recorder.capturing() {
            return;
        }
        let meta = FrameMeta::inbound(TransportKind::Http, CONN.into()).with_http(Some(http_meta(
            self.method,
            self.path,
            status,
            self.headers,
        )));
        recorder.record(&meta, self.sent.as_str(), FrameSummary::http_exchange(None));
        let meta = FrameMeta::outbound(TransportKind::Http, CONN.into())
            .with_http(Some(Arc::new(HttpMeta::status(status.as_u16()))));
        recorder.record(&meta, answered, FrameSummary::http_exchange(None));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_the_same_way_every_time() {
        let form = "grant_type=authorization_code&code=abc&code_verifier=xyz&client_id=c1";
        let redacted = redact_form(form);
        assert_eq!(
            redacted,
            format!(
                "grant_type=authorization_code&code={}&code_verifier={}&client_id=c1",
                redact("abc"),
                redact("xyz")
            )
        );
        let answer = json!({ "access_token": "t", "token_type": "Bearer", "nested": { "refresh_token": "r" } });
        let shown = redact_json(&answer).to_string();
        assert!(
            !shown.contains("\"t\"") && !shown.contains("\"r\""),
            "{shown}"
        );
        assert!(shown.contains(&redact("t")));
    }
}

//! How the authorization server answers and records: JSON answers and OAuth errors (RFC 6749
//! §5.2), and each exchange in the traffic next to the MCP frames, with every secret, code and
//! token in it redacted to `redacted-` and a short hash (the same value always reads the same,
//! so a reader can still follow a code from `/authorize` to `/token`).

use crate::server::seams::{AuthRequest, AuthStep, AuthVerdict};
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
    /// What a fault rule decided for it at the auth seam, if one did.
    pub fault: Option<AuthVerdict>,
}

impl<'a> Exchange<'a> {
    /// The exchange of a request to `path` that sent `sent` (redacted already), through the
    /// auth seam at `step` (`grant`: the token request's): a rule's delay is waited out here,
    /// and the answer a rule gives instead of serving the request, if it gives one, is the
    /// `Err` ([`Exchange::instead`]).
    pub async fn at(
        state: &'a HttpState,
        (method, path, headers): (&'a Method, &'a str, &'a HeaderMap),
        sent: String,
        step: AuthStep,
        grant: Option<&str>,
    ) -> Result<Exchange<'a>, Box<Response>> {
        let fault = state.server.seams.auth(&AuthRequest { step, path, grant });
        if let (Some(delay), Some(lab)) = (fault.as_ref().and_then(|f| f.delay), &state.auth) {
            lab.clock.sleep(delay).await;
        }
        Self {
            fault,
            ..Self::new(state, (method, path, headers), sent)
        }
        .instead()
    }

    /// The exchange of a request that does not pass the auth seam.
    pub fn new(
        state: &'a HttpState,
        (method, path, headers): (&'a Method, &'a str, &'a HeaderMap),
        sent: String,
    ) -> Exchange<'a> {
        Self {
            state,
            method,
            path,
            headers,
            sent,
            fault: None,
        }
    }

    /// The answer a fault rule gives instead of serving the request, if it gives one: its
    /// HTTP status (with headers and body), or its OAuth error (except at `/authorize`, which
    /// redirects with it: [`Exchange::scripted_error`]).
    fn instead(self) -> Result<Self, Box<Response>> {
        let Some(fault) = &self.fault else {
            return Ok(self);
        };
        if let Some(answer) = fault.http.clone() {
            self.record(
                StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                answer.body.clone(),
            );
            return Err(Box::new(crate::transport::http::scripted::response(
                self.state, &answer,
            )));
        }
        if let Some((status, error, description)) = self.scripted_error() {
            if self.path.ends_with("/authorize") {
                return Ok(self);
            }
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
            return Err(Box::new(self.error(status, &error, &description)));
        }
        Ok(self)
    }

    /// The OAuth error a fault rule answers instead, if it does.
    pub fn scripted_error(&self) -> Option<(u16, String, String)> {
        self.fault.as_ref().and_then(|f| f.oauth_error.clone())
    }

    /// Records the request and `answer` (its body redacted), then builds the response; a
    /// fault rule's change to the document applies to both.
    pub fn answer(self, status: StatusCode, answer: Value) -> Response {
        let edit = self.fault.as_ref().and_then(|f| f.edit.clone());
        let (body, shown) = match &edit {
            Some(edit) => {
                let body = edit.apply(&answer.to_string());
                // Redacted after the change, so a secret a rule put in is redacted too; text
                // that is not JSON any more is the change applied to the redacted answer.
                let shown = match serde_json::from_str::<Value>(&body) {
                    Ok(changed) => redact_json(&changed).to_string(),
                    Err(_) => edit.apply(&redact_json(&answer).to_string()),
                };
                (body, shown)
            }
            None => (answer.to_string(), redact_json(&answer).to_string()),
        };
        self.record(status, shown);
        let mut response =
            (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
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

    /// Records the request and a page (`text/html`), then builds the `200`.
    pub fn page(self, html: String, policy: &'static str) -> Response {
        self.record(StatusCode::OK, String::new());
        let mut response = (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            html,
        )
            .into_response();
        let headers = response.headers_mut();
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(policy),
        );
        response
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
        let mark = self.fault.as_ref().and_then(|f| f.mark.clone());
        let mut meta = FrameMeta::inbound(TransportKind::Http, CONN.into()).with_http(Some(
            http_meta(self.method, self.path, status, self.headers),
        ));
        meta.fault = mark.clone();
        recorder.record(&meta, self.sent.as_str(), FrameSummary::http_exchange(None));
        let mut meta = FrameMeta::outbound(TransportKind::Http, CONN.into())
            .with_http(Some(Arc::new(HttpMeta::status(status.as_u16()))));
        meta.fault = mark;
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

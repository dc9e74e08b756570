//! The control API's auth lab (`docs/auth.md`): the clients registered and the tokens issued,
//! a client registered by the test (pre-registration), tokens revoked or expired on cue — the
//! twins of Python's `srv.auth`.

use super::reply::{answer, bad, missing};
use crate::transport::http::auth::Refused;
use crate::transport::http::state::HttpState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};
use std::sync::Arc;

/// The `404` of a listener without the auth lab.
fn off() -> Response {
    missing(
        "",
        "the auth lab is off: start the listener with --auth oauth (or bearer)",
    )
}

/// `GET /_control/auth/clients`: `{"clients": [metadata without secrets]}`.
pub async fn clients(State(state): State<Arc<HttpState>>) -> Response {
    match state.auth.as_deref() {
        Some(lab) => answer(StatusCode::OK, json!({ "clients": lab.clients() })),
        None => off(),
    }
}

/// `POST /_control/auth/clients`: registers a client as `/register` would (pre-registration);
/// `201` with its id and secret.
pub async fn register(State(state): State<Arc<HttpState>>, body: Bytes) -> Response {
    let Some(lab) = state.auth.as_deref() else {
        return off();
    };
    let Ok(Value::Object(metadata)) = serde_json::from_slice::<Value>(&body) else {
        return bad(
            "",
            "the body is a JSON object of client metadata (RFC 7591)",
        );
    };
    match lab.register(metadata) {
        Ok(client) => answer(StatusCode::CREATED, Value::Object(client)),
        Err(message) => bad("", message),
    }
}

/// `GET /_control/auth/tokens`: `{"tokens": [{"jti", "client_id", "scope", "expires_at",
/// "status"}]}`, every access token issued (never the token itself).
pub async fn tokens(State(state): State<Arc<HttpState>>) -> Response {
    match state.auth.as_deref() {
        Some(lab) => answer(StatusCode::OK, json!({ "tokens": lab.tokens() })),
        None => off(),
    }
}

/// `POST /_control/auth/tokens/revoke` `{"jti": ID}` (or `{}`: every token).
pub async fn revoke(state: State<Arc<HttpState>>, body: Bytes) -> Response {
    end(state, body, Refused::Revoked)
}

/// `POST /_control/auth/tokens/expire` `{"jti": ID}` (or `{}`: every token): expired now,
/// whatever their `exp` says.
pub async fn expire(state: State<Arc<HttpState>>, body: Bytes) -> Response {
    end(state, body, Refused::Expired)
}

/// Ends tokens as `why`; `{"ended": n}`.
fn end(State(state): State<Arc<HttpState>>, body: Bytes, why: Refused) -> Response {
    let Some(lab) = state.auth.as_deref() else {
        return off();
    };
    let body = if body.is_empty() {
        Value::Object(Default::default())
    } else {
        match serde_json::from_slice::<Value>(&body) {
            Ok(v) => v,
            Err(e) => return bad("", format!("the body is not JSON: {e}")),
        }
    };
    let jti = match body.get("jti") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id.as_str()),
        Some(_) => return bad("jti", "must be a token's id (a string)"),
    };
    answer(StatusCode::OK, json!({ "ended": lab.end(jti, why) }))
}

/// `POST /_control/auth/documents` `{"url": URL, "document": {...}}`: seeds the Client ID
/// Metadata Document of `url` (what a client whose `client_id` is that URL is checked against).
pub async fn add_document(State(state): State<Arc<HttpState>>, body: Bytes) -> Response {
    let Some(lab) = state.auth.as_deref() else {
        return off();
    };
    let Ok(Value::Object(mut body)) = serde_json::from_slice::<Value>(&body) else {
        return bad("", "the body is {\"url\": URL, \"document\": {...}}");
    };
    let Some(Value::String(url)) = body.remove("url") else {
        return bad("url", "is required: the document's URL (its client_id)");
    };
    let Some(document) = body.remove("document") else {
        return bad("document", "is required: the Client ID Metadata Document");
    };
    lab.add_client_document(url, document);
    answer(StatusCode::CREATED, json!({}))
}

/// `POST /_control/auth/consent` `{"answers": ["deny", "approve", {"scope": "mcp:basic"}]}`:
/// the consent step's next answers, one per authorization request from now on, as fault rules;
/// `201` with their ids.
pub async fn consent(State(state): State<Arc<HttpState>>, body: Bytes) -> Response {
    if state.auth.is_none() {
        return off();
    }
    let answers = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(mut body)) => match body.remove("answers") {
            Some(Value::Array(answers)) => answers,
            _ => return bad("answers", "is required: a list of consent answers"),
        },
        _ => return bad("", "the body is {\"answers\": [...]}"),
    };
    match state.server.faults.add_consent(&answers) {
        Ok(rules) => {
            let ids: Vec<&str> = rules.iter().map(|r| &*r.id).collect();
            answer(StatusCode::CREATED, json!({ "ids": ids }))
        }
        Err(e) => bad(&e.field, e.message),
    }
}

/// `POST /_control/auth/migrate`: the resource moves to the lab's second authorization server
/// (its metadata names it, tokens of the first are refused); `{"issuer": ...}`, the new one.
pub async fn migrate(State(state): State<Arc<HttpState>>) -> Response {
    match state.auth.as_deref() {
        Some(lab) => answer(StatusCode::OK, json!({ "issuer": lab.migrate() })),
        None => off(),
    }
}

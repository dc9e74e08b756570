//! The MCP endpoints as a protected resource: every request to `/mcp`, `/sse` and `/message`
//! carries `Authorization: Bearer <token>`, or is answered `401` with the challenge that starts
//! a client's authorization (RFC 6750 §3, RFC 9728 §5.1).

use super::jwt::Refused;
use super::lab::{AuthLab, AuthMode};
use crate::server::seams::{AuthRequest, AuthStep, Challenge, ChallengeError, Edit, TokenEnd};
use crate::traffic::FaultMark;
use crate::transport::http::recording::{transport_of, Refusal};
use crate::transport::http::state::HttpState;
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::IntoResponse;
use axum::response::Response;
use serde_json::{json, Value};
use std::sync::Arc;

/// The paths a token is needed for: the MCP transports'.
const PROTECTED: [&str; 3] = ["/mcp", "/sse", "/message"];

/// Whether `request` may go on to the MCP endpoints: `Ok` with the scopes its token was
/// granted (OAuth; `None` for a request that needs no token, or a bearer token), else the `401`
/// to answer, recorded. The token is checked here once: scope step-up reads the scopes from this.
pub fn admission(
    state: &HttpState,
    lab: &AuthLab,
    request: &Request,
) -> Result<Option<String>, Box<Response>> {
    let path = request.uri().path();
    // A CORS preflight carries no credentials (the browser sends the real request after it).
    if !PROTECTED.contains(&path) || request.method() == Method::OPTIONS {
        return Ok(None);
    }
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim);
    let refused = match token {
        None => None,
        Some(token) => match check(lab, token) {
            Ok(granted) => return Ok(granted),
            Err(why) => Some(why),
        },
    };
    let transport = transport_of(path);
    let message = refused.map_or(
        "authorization required: send Authorization: Bearer <token>",
        Refused::description,
    );
    let (challenge, mark) = challenge(state, lab, refused);
    Err(Box::new(
        Refusal::new(StatusCode::UNAUTHORIZED, message)
            .challenging(challenge, mark)
            .respond(
                state,
                transport,
                None,
                (request.method(), path, request.headers()),
                b"",
            ),
    ))
}

/// Whether `token` opens the MCP endpoints; the scopes it was granted (OAuth).
fn check(lab: &AuthLab, token: &str) -> Result<Option<String>, Refused> {
    match lab.config.mode {
        AuthMode::None => Ok(None),
        AuthMode::Bearer => lab
            .config
            .tokens
            .iter()
            .any(|t| t == token)
            .then_some(None)
            .ok_or(Refused::Invalid),
        AuthMode::Oauth => {
            let claims = lab
                .keys
                .check(token, &lab.urls.resource, lab.clock.wall())?;
            if claims.iss != lab.issuer(lab.current()) {
                return Err(Refused::Issuer);
            }
            match lab.ended(&claims.jti) {
                Some(why) => Err(why),
                None => Ok(Some(claims.scope)),
            }
        }
    }
}

/// The `WWW-Authenticate` value: where the resource's metadata is and which scopes to ask for
/// (OAuth), and `error="invalid_token"` when a token was presented and refused; a fault rule
/// at the `challenge` step may change its parameters (as a JSON object).
fn challenge(
    state: &HttpState,
    lab: &AuthLab,
    refused: Option<Refused>,
) -> (String, Option<Arc<FaultMark>>) {
    let mut params: Vec<(String, String)> = Vec::new();
    match lab.config.mode {
        AuthMode::Oauth => {
            params.push((
                "resource_metadata".into(),
                lab.urls.resource_metadata.clone(),
            ));
            // No scope at all rather than an empty one (RFC 6749 §3.3: one or more).
            if !lab.config.scopes.is_empty() {
                params.push(("scope".into(), lab.scope_text()));
            }
        }
        AuthMode::Bearer | AuthMode::None => {
            params.push(("realm".into(), "everything-mcp".into()));
        }
    }
    if let Some(why) = refused {
        params.push(("error".into(), "invalid_token".into()));
        params.push(("error_description".into(), why.description().into()));
    }
    let request = AuthRequest {
        step: AuthStep::Challenge,
        path: "/mcp",
        grant: None,
    };
    let fault = state.server.seams.auth(&request);
    if let Some(edit) = fault.as_ref().and_then(|f| f.edit.clone()) {
        params = edited(&params, edit.as_ref());
    }
    (bearer(&params), fault.and_then(|f| f.mark))
}

/// `params` as a fault rule's change makes them, through their JSON object form.
pub(super) fn edited(params: &[(String, String)], edit: &dyn Edit) -> Vec<(String, String)> {
    let object: serde_json::Map<String, Value> = params
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    match serde_json::from_str::<Value>(&edit.apply(&Value::Object(object).to_string())) {
        Ok(Value::Object(changed)) => changed
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => (k, s),
                other => (k, other.to_string()),
            })
            .collect(),
        _ => params.to_vec(),
    }
}

/// A `Bearer` challenge of `params`, in their order (no parameter at all: the bare scheme).
fn bearer(params: &[(String, String)]) -> String {
    if params.is_empty() {
        return "Bearer".into();
    }
    // Each value a quoted-string (RFC 9110 §5.6.4): a quote or backslash in it escaped.
    let quoted = |v: &str| v.replace('\\', "\\\\").replace('"', "\\\"");
    let parts: Vec<String> = params
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", quoted(v)))
        .collect();
    format!("Bearer {}", parts.join(", "))
}

/// The answer to an MCP request a fault rule's `challenge` hit: `401 invalid_token` (every
/// token issued so far ended first, when the rule says so) or `403 insufficient_scope`, with
/// the lab's challenge naming the rule's scope.
pub fn scripted(lab: Option<&AuthLab>, challenge: &Challenge) -> Response {
    let invalid = challenge.error == ChallengeError::InvalidToken;
    let status = if invalid {
        StatusCode::UNAUTHORIZED
    } else {
        StatusCode::FORBIDDEN
    };
    let mut params: Vec<(String, String)> = vec![("error".into(), challenge.error.as_str().into())];
    let oauth = lab.filter(|lab| lab.config.mode == AuthMode::Oauth);
    // The scope named: the rule's, else the lab's (what the description says too).
    let named = challenge
        .scope
        .clone()
        .or_else(|| oauth.map(AuthLab::scope_text).filter(|s| !s.is_empty()));
    let description = Challenge {
        scope: named.clone(),
        ..challenge.clone()
    }
    .description();
    if let (Some(lab), Some(end)) = (lab, &challenge.end) {
        let why = match end {
            TokenEnd::Revoked => Refused::Revoked,
            TokenEnd::Expired => Refused::Expired,
        };
        lab.end(None, why);
    }
    if let Some(lab) = oauth {
        if let Some(scope) = named {
            params.push(("scope".into(), scope));
        }
        params.push((
            "resource_metadata".into(),
            lab.urls.resource_metadata.clone(),
        ));
    }
    params.push(("error_description".into(), description.clone()));
    // The body the lab's own refusals have: a JSON-RPC error.
    let body = json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32000, "message": description } });
    let mut response = (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(&bearer(&params)) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// Whether `request` must have its body read for scope step-up: a POST to the MCP endpoints
/// while some tool needs a scope of its own (only then: every other request goes on unread).
pub fn steps_up(lab: &AuthLab, request: &Request) -> bool {
    lab.config.mode == AuthMode::Oauth
        && !lab.config.tool_scopes.is_empty()
        && request.method() == Method::POST
        && matches!(request.uri().path(), "/mcp" | "/message")
}

/// Scope step-up (MCP's authorization, "Scope challenge handling"): a `tools/call` of a tool
/// that needs a scope the request's token was not granted is answered `403` with
/// `WWW-Authenticate: Bearer error="insufficient_scope", scope=…` naming it; anything else
/// goes on, its body read once and handed back.
pub async fn step_up(
    state: &HttpState,
    lab: &AuthLab,
    request: Request,
    granted: &str,
) -> Result<Request, Response> {
    let (parts, body) = request.into_parts();
    let limit = state.server.config.max_message_bytes;
    let bytes = match crate::transport::http::body::read_body(body, limit).await {
        Ok(bytes) => bytes,
        // Too large or cut short: answered as the MCP endpoint answers any such body.
        Err(refused) => {
            let transport = transport_of(parts.uri.path());
            let request = (&parts.method, parts.uri.path(), &parts.headers);
            return Err(refused
                .into_refusal(limit, &state.server.limit_hits)
                .respond(state, transport, None, request, &refused.prefix));
        }
    };
    let missing = needed_scopes(lab, &bytes)
        .into_iter()
        .filter(|(_, scope)| !granted.split(' ').any(|g| g == scope))
        .collect::<Vec<_>>();
    let Some((tool, _)) = missing.first() else {
        return Ok(Request::from_parts(parts, axum::body::Body::from(bytes)));
    };
    let scopes: Vec<&str> = missing.iter().map(|(_, s)| s.as_str()).collect();
    // No quotes: the description is a quoted-string of the challenge.
    let description = format!("insufficient_scope: tool {tool} needs {}", scopes.join(" "));
    let conn = parts
        .headers
        .get(&crate::transport::http::negotiation::SESSION_HEADER)
        .and_then(|v| v.to_str().ok());
    let transport = transport_of(parts.uri.path());
    let challenge = bearer(&[
        ("error".into(), "insufficient_scope".into()),
        ("scope".into(), scopes.join(" ")),
        (
            "resource_metadata".into(),
            lab.urls.resource_metadata.clone(),
        ),
        ("error_description".into(), description.clone()),
    ]);
    Err(Refusal::new(StatusCode::FORBIDDEN, description)
        .challenging(challenge, None)
        .respond(
            state,
            transport,
            conn,
            (&parts.method, parts.uri.path(), &parts.headers),
            &bytes,
        ))
}

/// The tools a body calls that need a scope of their own, with that scope (a batch's calls
/// too).
fn needed_scopes(lab: &AuthLab, body: &[u8]) -> Vec<(String, String)> {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Vec::new();
    };
    let messages = match value {
        serde_json::Value::Array(items) => items,
        one => vec![one],
    };
    messages
        .iter()
        .filter(|m| m.get("method").and_then(|v| v.as_str()) == Some("tools/call"))
        .filter_map(|m| m.pointer("/params/name").and_then(|v| v.as_str()))
        .filter_map(|tool| {
            let scope = lab.config.tool_scopes.get(tool)?;
            Some((tool.to_string(), scope.clone()))
        })
        .collect()
}

//! The MCP endpoints as a protected resource: every request to `/mcp`, `/sse` and `/message`
//! carries `Authorization: Bearer <token>`, or is answered `401` with the challenge that starts
//! a client's authorization (RFC 6750 §3, RFC 9728 §5.1).

use super::jwt::Refused;
use super::lab::{AuthLab, AuthMode};
use crate::transport::http::recording::{transport_of, Refusal};
use crate::transport::http::state::HttpState;
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::Response;

/// The paths a token is needed for: the MCP transports'.
const PROTECTED: [&str; 3] = ["/mcp", "/sse", "/message"];

/// Whether `request` may go on to the MCP endpoints; else the `401` to answer, recorded.
pub fn refusal(state: &HttpState, lab: &AuthLab, request: &Request) -> Option<Response> {
    let path = request.uri().path();
    // A CORS preflight carries no credentials (the browser sends the real request after it).
    if !PROTECTED.contains(&path) || request.method() == Method::OPTIONS {
        return None;
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
            Ok(()) => return None,
            Err(why) => Some(why),
        },
    };
    let transport = transport_of(path);
    let message = refused.map_or(
        "authorization required: send Authorization: Bearer <token>",
        Refused::description,
    );
    let mut response = Refusal::new(StatusCode::UNAUTHORIZED, message).respond(
        state,
        transport,
        None,
        (request.method(), path, request.headers()),
        b"",
    );
    if let Ok(value) = HeaderValue::from_str(&challenge(lab, refused)) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    Some(response)
}

/// Whether `token` opens the MCP endpoints.
fn check(lab: &AuthLab, token: &str) -> Result<(), Refused> {
    match lab.config.mode {
        AuthMode::None => Ok(()),
        AuthMode::Bearer => lab
            .config
            .tokens
            .iter()
            .any(|t| t == token)
            .then_some(())
            .ok_or(Refused::Invalid),
        AuthMode::Oauth => {
            let claims = lab
                .keys
                .check(token, &lab.config.resource(), lab.clock.wall())?;
            match lab.ended(&claims.jti) {
                Some(why) => Err(why),
                None => Ok(()),
            }
        }
    }
}

/// The `WWW-Authenticate` value: where the resource's metadata is and which scopes to ask for
/// (OAuth), and `error="invalid_token"` when a token was presented and refused.
fn challenge(lab: &AuthLab, refused: Option<Refused>) -> String {
    let mut parts = Vec::new();
    match lab.config.mode {
        AuthMode::Oauth => {
            parts.push(format!(
                "resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
                lab.config.base
            ));
            parts.push(format!("scope=\"{}\"", lab.scope_text()));
        }
        AuthMode::Bearer | AuthMode::None => parts.push("realm=\"everything-mcp\"".to_string()),
    }
    if let Some(why) = refused {
        parts.push("error=\"invalid_token\"".to_string());
        parts.push(format!("error_description=\"{}\"", why.description()));
    }
    format!("Bearer {}", parts.join(", "))
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
) -> Result<Request, Response> {
    let (parts, body) = request.into_parts();
    let limit = state.server.config.max_message_bytes;
    let bytes = match crate::transport::http::body::read_body(body, limit).await {
        Ok(bytes) => bytes,
        // Too large or cut short: answered as the MCP endpoint answers any such body.
        Err(refused) => {
            let transport = transport_of(parts.uri.path());
            let request = (&parts.method, parts.uri.path(), &parts.headers);
            return Err(refused.into_refusal(limit).respond(
                state,
                transport,
                None,
                request,
                &refused.prefix,
            ));
        }
    };
    let granted = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .and_then(|token| {
            lab.keys
                .check(token.trim(), &lab.config.resource(), lab.clock.wall())
                .ok()
        })
        .map(|claims| claims.scope)
        .unwrap_or_default();
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
    let mut response = Refusal::new(StatusCode::FORBIDDEN, description.clone()).respond(
        state,
        transport,
        conn,
        (&parts.method, parts.uri.path(), &parts.headers),
        &bytes,
    );
    let challenge = format!(
        "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\", error_description=\"{description}\"",
        scopes.join(" "),
        lab.config.base
    );
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    Err(response)
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

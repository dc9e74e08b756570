//! The MCP endpoints as a protected resource: every request to `/mcp`, `/sse` and `/message`
//! carries `Authorization: Bearer <token>`, or is answered `401` with the challenge that starts
//! a client's authorization (RFC 6750 §3, RFC 9728 §5.1).

use super::jwt::Refused;
use super::{AuthLab, AuthMode};
use crate::traffic::TransportKind;
use crate::transport::http::recording::Refusal;
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
    let transport = if path == "/mcp" {
        TransportKind::Http
    } else {
        TransportKind::Sse
    };
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

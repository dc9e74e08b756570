//! The discovery documents: the protected resource's (RFC 9728), at the path-aware and the root
//! well-known URLs, and the authorization server's (RFC 8414, and the same as OpenID discovery).

use super::exchange::Exchange;
use crate::transport::http::state::HttpState;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;
use std::sync::Arc;

/// `GET /.well-known/oauth-protected-resource[/mcp]`: the MCP endpoint as a protected
/// resource, naming this listener as its authorization server.
pub async fn protected_resource(State(state): State<Arc<HttpState>>, request: Request) -> Response {
    let lab = state.auth.as_ref().expect("served only with the auth lab");
    let config = &lab.config;
    let document = json!({
        "resource": config.resource(),
        "authorization_servers": [config.issuer()],
        "scopes_supported": config.scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": state.server.config.name,
    });
    exchange(&state, &request).answer(StatusCode::OK, document)
}

/// `GET /.well-known/oauth-authorization-server` and `/.well-known/openid-configuration`.
pub async fn authorization_server(
    State(state): State<Arc<HttpState>>,
    request: Request,
) -> Response {
    let lab = state.auth.as_ref().expect("served only with the auth lab");
    let issuer = lab.config.issuer();
    let document = json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "scopes_supported": lab.known_scopes(),
        "authorization_response_iss_parameter_supported": true,
    });
    exchange(&state, &request).answer(StatusCode::OK, document)
}

/// The record of a GET that sent nothing.
fn exchange<'a>(state: &'a HttpState, request: &'a Request) -> Exchange<'a> {
    Exchange {
        state,
        method: request.method(),
        path: request.uri().path(),
        headers: request.headers(),
        sent: String::new(),
    }
}

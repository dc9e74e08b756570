//! The discovery documents: the protected resource's (RFC 9728), at the path-aware and the root
//! well-known URLs (and a custom one, when set), and the authorization server's (RFC 8414, and
//! the same as OpenID discovery), at the URLs its issuer's path gives.

use super::clients::AUTH_METHODS;
use super::exchange::Exchange;
use crate::server::seams::AuthStep;
use crate::transport::http::state::HttpState;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use serde_json::{json, Value};
use std::sync::Arc;

/// `GET /.well-known/oauth-protected-resource[/mcp]` (and the custom URL): the MCP endpoint
/// as a protected resource, naming this listener's issuer as its authorization server.
pub async fn protected_resource(
    State(state): State<Arc<HttpState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let lab = state.auth.as_ref().expect("served only with the auth lab");
    let mut document = json!({
        "resource": lab.urls.resource,
        "authorization_servers": [lab.issuer(lab.current())],
        "scopes_supported": lab.config.scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": state.server.config.name,
    });
    if lab.config.scopes.is_empty() {
        // No scopes to publish: the member left out rather than empty.
        document
            .as_object_mut()
            .map(|d| d.remove("scopes_supported"));
    }
    served(
        &state,
        (&method, uri.path(), &headers),
        AuthStep::ProtectedResource,
        document,
    )
    .await
}

/// The authorization server's metadata (RFC 8414 and OpenID discovery alike).
pub async fn authorization_server(
    State(state): State<Arc<HttpState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let lab = state.auth.as_ref().expect("served only with the auth lab");
    let issuer = lab.issuer(lab.at(uri.path()));
    let document = json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": AUTH_METHODS,
        "token_endpoint_auth_signing_alg_values_supported": ["ES256", "RS256", "EdDSA"],
        "scopes_supported": lab.known_scopes(),
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": true,
    });
    served(
        &state,
        (&method, uri.path(), &headers),
        AuthStep::AuthorizationServer,
        document,
    )
    .await
}

/// A discovery document answered `200`, through the auth seam at `step` (a rule may answer
/// instead, or change the document).
async fn served(
    state: &HttpState,
    request: (&Method, &str, &HeaderMap),
    step: AuthStep,
    document: Value,
) -> Response {
    match Exchange::at(state, request, String::new(), step, None).await {
        Ok(exchange) => exchange.answer(StatusCode::OK, document),
        Err(answer) => *answer,
    }
}

//! The auth lab (`docs/auth.md`): the HTTP listener as an OAuth-protected MCP server with its
//! own authorization server, so a client's whole authorization flow runs offline.
//!
//! - [`AuthMode::Bearer`]: the MCP endpoints take only the static tokens given (`--token`).
//! - [`AuthMode::Oauth`]: the MCP endpoints are a protected resource ([`resource`]: the `401`
//!   challenge and the RFC 9728 metadata), and the same listener is the authorization server
//!   ([`metadata`], [`register`], [`authorize`], [`token`]): RFC 8414 / OpenID discovery,
//!   dynamic client registration, Client ID Metadata Documents ([`cimd`]), pre-registered
//!   clients, the authorization code grant with PKCE S256 (approved at once, scripted by fault
//!   rules, or answered on a page: [`consent`]), refresh tokens that rotate, client credentials
//!   (with a secret or a signed assertion: [`assertion`]). Access tokens are signed JWTs bound
//!   to the MCP endpoint's URL ([`jwt`]) and expire on the server's clock.
//!
//! Every request to the authorization server is recorded next to the MCP frames, with secrets,
//! codes and tokens redacted ([`exchange`]), and passes the auth seam, where fault rules with
//! `match.auth` act on it.

mod assertion;
mod authorize;
mod cimd;
mod clients;
mod consent;
mod exchange;
pub mod jwt;
pub mod lab;
mod metadata;
mod oversized;
mod params;
mod random;
mod redirect;
mod register;
pub mod resource;
mod token;

pub use clients::Client;
pub use jwt::Refused;
pub use lab::{AuthConfig, AuthLab, AuthMode, Issued};

use super::state::HttpState;
use axum::routing::{get, post};
use axum::Router;
use std::sync::Arc;

/// The authorization server's and the protected resource's routes (public: no token needed).
/// The authorization server's endpoints and metadata URLs follow its issuer's path: with
/// `issuer_path` `/t1`, `/t1/authorize`, and the metadata at
/// `/.well-known/oauth-authorization-server/t1`, `/.well-known/openid-configuration/t1` and
/// `/t1/.well-known/openid-configuration` (RFC 8414 §3.1, OpenID discovery's path appended).
/// The second authorization server, the one the resource migrates to, is the same under
/// `{issuer_path}/as2`.
pub fn routes(state: Arc<HttpState>) -> Router {
    let lab = state.auth.as_ref().expect("routed only with the auth lab");
    let mut router = Router::new()
        .route(
            "/.well-known/oauth-protected-resource",
            get(metadata::protected_resource),
        )
        .route(
            "/.well-known/oauth-protected-resource/{*path}",
            get(metadata::protected_resource),
        );
    // The authorization server, and the one the resource can migrate to, under its own path.
    let first = lab.config.issuer_path.clone();
    for tenant in [first.clone(), format!("{first}{}", lab::MIGRATED)] {
        router = router
            .route(
                &format!("/.well-known/oauth-authorization-server{tenant}"),
                get(metadata::authorization_server),
            )
            .route(
                &format!("/.well-known/openid-configuration{tenant}"),
                get(metadata::authorization_server),
            )
            .route(&format!("{tenant}/authorize"), get(authorize::authorize))
            .route(&format!("{tenant}/authorize/decide"), post(consent::decide))
            .route(&format!("{tenant}/token"), post(token::token))
            .route(&format!("{tenant}/register"), post(register::register));
        if !tenant.is_empty() {
            router = router.route(
                &format!("{tenant}/.well-known/openid-configuration"),
                get(metadata::authorization_server),
            );
        }
    }
    let custom = &lab.config.resource_metadata_path;
    if !custom.is_empty() && !custom.starts_with("/.well-known/oauth-protected-resource") {
        router = router.route(custom, get(metadata::protected_resource));
    }
    router
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            oversized::bounded_body,
        ))
        .with_state(state)
}

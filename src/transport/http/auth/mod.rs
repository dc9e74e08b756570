//! The auth lab (`docs/auth.md`): the HTTP listener as an OAuth-protected MCP server with its
//! own authorization server, so a client's whole authorization flow runs offline.
//!
//! - [`AuthMode::Bearer`]: the MCP endpoints take only the static tokens given (`--token`).
//! - [`AuthMode::Oauth`]: the MCP endpoints are a protected resource ([`resource`]: the `401`
//!   challenge and the RFC 9728 metadata), and the same listener is the authorization server
//!   ([`metadata`], [`register`], [`authorize`], [`token`]): RFC 8414 / OpenID discovery,
//!   dynamic client registration, the authorization code grant with PKCE S256 (approved at
//!   once), refresh tokens that rotate, client credentials. Access tokens are signed JWTs bound
//!   to the MCP endpoint's URL ([`jwt`]) and expire on the server's clock.
//!
//! Every request to the authorization server is recorded next to the MCP frames, with secrets,
//! codes and tokens redacted ([`exchange`]).

mod authorize;
mod exchange;
pub mod jwt;
pub mod lab;
mod metadata;
mod register;
pub mod resource;
mod token;

pub use jwt::Refused;
pub use lab::{AuthConfig, AuthLab, AuthMode, Client, Issued};

use super::state::HttpState;
use axum::routing::{get, post};
use axum::Router;
use std::sync::Arc;

/// The authorization server's and the protected resource's routes (public: no token needed).
pub fn routes(state: Arc<HttpState>) -> Router {
    Router::new()
        .route(
            "/.well-known/oauth-protected-resource",
            get(metadata::protected_resource),
        )
        .route(
            "/.well-known/oauth-protected-resource/{*path}",
            get(metadata::protected_resource),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(metadata::authorization_server),
        )
        .route(
            "/.well-known/openid-configuration",
            get(metadata::authorization_server),
        )
        .route("/authorize", get(authorize::authorize))
        .route("/token", post(token::token))
        .route("/register", post(register::register))
        .with_state(state)
}

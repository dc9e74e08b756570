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
mod metadata;
mod register;
pub mod resource;
pub use jwt::Refused;
mod token;

use crate::clock::Clock;
use crate::lock::lock;
use axum::routing::{get, post};
use axum::Router;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::state::HttpState;

/// How the MCP endpoints are protected (`--auth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthMode {
    /// Not at all (the default).
    #[default]
    None,
    /// Static bearer tokens ([`AuthConfig::tokens`]).
    Bearer,
    /// OAuth 2.1 with the built-in authorization server.
    Oauth,
}

impl AuthMode {
    /// Every mode's name, for help texts and errors.
    pub const NAMES: [&'static str; 3] = ["none", "bearer", "oauth"];

    /// The name on the command line.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Bearer => "bearer",
            Self::Oauth => "oauth",
        }
    }
}

impl std::str::FromStr for AuthMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Self::None),
            "bearer" => Ok(Self::Bearer),
            "oauth" => Ok(Self::Oauth),
            other => Err(format!(
                "unknown auth mode {other:?} (choose from {})",
                Self::NAMES.join(", ")
            )),
        }
    }
}

/// The auth lab's settings.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// How the MCP endpoints are protected.
    pub mode: AuthMode,
    /// The tokens [`AuthMode::Bearer`] accepts.
    pub tokens: Vec<String>,
    /// The scopes the server knows and asks for in its challenge (`scopes_supported`).
    pub scopes: Vec<String>,
    /// How long an access token lives (on the server's clock).
    pub token_ttl: Duration,
    /// `http://host:port` of the listener: the issuer, and the base of the MCP endpoint's URL
    /// (set when the listener is bound).
    pub base: String,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            mode: AuthMode::None,
            tokens: Vec::new(),
            scopes: vec!["mcp:basic".into()],
            token_ttl: Duration::from_secs(3600),
            base: String::new(),
        }
    }
}

impl AuthConfig {
    /// The issuer: the listener's base URL, without a trailing slash (clients compare it as a
    /// string).
    pub fn issuer(&self) -> &str {
        &self.base
    }

    /// The MCP endpoint's canonical URL: the protected resource, and every token's audience.
    pub fn resource(&self) -> String {
        format!("{}/mcp", self.base)
    }
}

/// A registered client (RFC 7591).
#[derive(Debug, Clone)]
pub struct Client {
    /// Its `client_id`.
    pub id: String,
    /// Its secret (`None` for a public client: `token_endpoint_auth_method` `none`).
    pub secret: Option<String>,
    /// How it authenticates at the token endpoint.
    pub auth_method: String,
    /// The redirect URIs an authorization request may name (matched exactly).
    pub redirect_uris: Vec<String>,
    /// The grants it may use.
    pub grant_types: Vec<String>,
    /// The metadata as registered (what `/register` answered).
    pub metadata: Map<String, Value>,
}

/// An authorization code not redeemed yet.
#[derive(Debug, Clone)]
struct Code {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    resource: Option<String>,
    scope: String,
    /// When it stops being redeemable (lab time).
    expires: std::time::SystemTime,
}

/// What a refresh token stands for.
#[derive(Debug, Clone)]
struct Grant {
    client_id: String,
    scope: String,
}

/// The auth lab of one listener: its configuration, signing key and what it has issued.
pub struct AuthLab {
    /// Its settings.
    pub config: AuthConfig,
    /// The clock tokens and codes expire on (the server's).
    clock: Clock,
    /// Signs and checks access tokens.
    keys: jwt::Keys,
    /// Registered clients, by id.
    clients: Mutex<HashMap<String, Client>>,
    /// Codes issued and not redeemed, by code.
    codes: Mutex<HashMap<String, Code>>,
    /// Refresh tokens in force, by token (a used one is removed: rotation).
    refresh: Mutex<HashMap<String, Grant>>,
    /// Every access token issued, in order (what `srv.auth.tokens` lists).
    issued: Mutex<Vec<Issued>>,
    /// Access tokens ended before their time, by `jti`, and why (revoked, or expired by a test).
    ended: Mutex<HashMap<String, jwt::Refused>>,
}

/// An access token as the lab lists it (never the token itself).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Issued {
    /// Its id (`jti`).
    pub jti: String,
    /// The client it was issued to.
    pub client_id: String,
    /// The scopes granted.
    pub scope: String,
    /// When it expires (seconds since the epoch, server's clock).
    pub expires_at: u64,
    /// `active`, `expired` or `revoked`, now.
    pub status: &'static str,
}

impl AuthLab {
    /// The lab for `config` on `clock`; `None` when the endpoints are not protected.
    pub fn new(config: AuthConfig, clock: Clock) -> Option<Arc<Self>> {
        (config.mode != AuthMode::None).then(|| {
            Arc::new(Self {
                config,
                clock,
                keys: jwt::Keys::random(),
                clients: Mutex::default(),
                codes: Mutex::default(),
                refresh: Mutex::default(),
                issued: Mutex::default(),
                ended: Mutex::default(),
            })
        })
    }

    /// The client `id`, if registered.
    pub fn client(&self, id: &str) -> Option<Client> {
        lock(&self.clients).get(id).cloned()
    }

    /// Every registered client's metadata, as `/register` answered it but without its secret.
    pub fn clients(&self) -> Vec<Map<String, Value>> {
        let mut clients: Vec<Map<String, Value>> = lock(&self.clients)
            .values()
            .map(|c| c.metadata.clone())
            .collect();
        for client in &mut clients {
            client.remove("client_secret");
        }
        clients.sort_by_key(|c| c.get("client_id_issued_at").and_then(Value::as_u64));
        clients
    }

    /// Every access token issued, with its status now.
    pub fn tokens(&self) -> Vec<Issued> {
        let now = jwt::seconds(self.clock.wall());
        let ended = lock(&self.ended).clone();
        let mut tokens = lock(&self.issued).clone();
        for token in &mut tokens {
            token.status = match ended.get(&token.jti) {
                Some(jwt::Refused::Revoked) => "revoked",
                Some(_) => "expired",
                None if token.expires_at <= now => "expired",
                None => "active",
            };
        }
        tokens
    }

    /// Ends the access token `jti` (every one issued so far when `None`) before its time, as
    /// `why` (revoked, or expired): the resource refuses it from now on, saying so. How many it
    /// ended (a token ended already counts again).
    pub fn end(&self, jti: Option<&str>, why: jwt::Refused) -> usize {
        let ids: Vec<String> = match jti {
            Some(id) => lock(&self.issued)
                .iter()
                .filter(|t| t.jti == id)
                .map(|t| t.jti.clone())
                .collect(),
            None => lock(&self.issued).iter().map(|t| t.jti.clone()).collect(),
        };
        let mut ended = lock(&self.ended);
        for id in &ids {
            ended.insert(id.clone(), why);
        }
        ids.len()
    }

    /// Why the token `jti` was ended early, if it was.
    fn ended(&self, jti: &str) -> Option<jwt::Refused> {
        lock(&self.ended).get(jti).copied()
    }

    /// Registers a client from the test (pre-registration): `metadata` as `/register` takes it;
    /// what it answers (with the secret), or why it refused.
    pub fn register(&self, metadata: Map<String, Value>) -> Result<Map<String, Value>, String> {
        register::registered(self, metadata)
            .map_err(|(error, description)| format!("{error}: {description}"))
    }

    /// The scopes as the challenge and the metadata name them, space-separated.
    fn scope_text(&self) -> String {
        self.config.scopes.join(" ")
    }

    /// The scope a request that asked for `asked` is granted: all the server's when it asked
    /// for none, else what it asked for; `None` when it named a scope the server does not know
    /// (`invalid_scope`, at `/authorize` and `/token` alike).
    fn grant_scope(&self, asked: Option<&str>) -> Option<String> {
        match asked.map(str::trim) {
            None | Some("") => Some(self.scope_text()),
            Some(asked) => asked
                .split(' ')
                .all(|s| self.config.scopes.iter().any(|k| k == s))
                .then(|| asked.to_string()),
        }
    }
}

/// A random token of 32 bytes as URL-safe text (codes, secrets, refresh tokens, ids).
fn random_token() -> String {
    use base64::Engine;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

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

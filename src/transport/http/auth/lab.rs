//! What the auth lab keeps and decides, apart from HTTP: its settings, the clients registered
//! (and what registration accepts), the codes, refresh tokens and access tokens issued, and
//! the scopes it grants. The endpoints (siblings of this module) serve it.

use super::jwt;
use crate::clock::Clock;
use crate::lock::lock;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
    /// The scopes the `401` challenge and the resource's metadata ask for.
    pub scopes: Vec<String>,
    /// The scope a tool needs beyond those, by tool name: calling it with a token without that
    /// scope is answered `403 insufficient_scope` naming it, so the client steps up (authorizes
    /// again for it). These scopes are known to the authorization server too.
    pub tool_scopes: std::collections::BTreeMap<String, String>,
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
            tool_scopes: Default::default(),
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
pub(super) struct Code {
    pub(super) client_id: String,
    pub(super) redirect_uri: String,
    pub(super) challenge: String,
    pub(super) resource: Option<String>,
    pub(super) scope: String,
    /// When it stops being redeemable (lab time).
    pub(super) expires: std::time::SystemTime,
}

/// What a refresh token stands for.
#[derive(Debug, Clone)]
pub(super) struct Grant {
    pub(super) client_id: String,
    pub(super) scope: String,
}

/// The auth lab of one listener: its configuration, signing key and what it has issued.
pub struct AuthLab {
    /// Its settings.
    pub config: AuthConfig,
    /// The clock tokens and codes expire on (the server's).
    pub(super) clock: Clock,
    /// Signs and checks access tokens.
    pub(super) keys: jwt::Keys,
    /// Registered clients, by id.
    pub(super) clients: Mutex<HashMap<String, Client>>,
    /// Codes issued and not redeemed, by code.
    pub(super) codes: Mutex<HashMap<String, Code>>,
    /// Refresh tokens in force, by token (a used one is removed: rotation).
    pub(super) refresh: Mutex<HashMap<String, Grant>>,
    /// Every access token issued, in order (what `srv.auth.tokens` lists).
    pub(super) issued: Mutex<Vec<Issued>>,
    /// Access tokens ended before their time, by `jti`, and why (revoked, or expired by a test).
    pub(super) ended: Mutex<HashMap<String, jwt::Refused>>,
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
    pub(super) fn ended(&self, jti: &str) -> Option<jwt::Refused> {
        lock(&self.ended).get(jti).copied()
    }

    /// Registers a client from the test (pre-registration): `metadata` as `/register` takes it;
    /// what it answers (with the secret), or why it refused.
    pub fn register(&self, metadata: Map<String, Value>) -> Result<Map<String, Value>, String> {
        registered(self, metadata).map_err(|(error, description)| format!("{error}: {description}"))
    }

    /// The scopes as the challenge and the metadata name them, space-separated.
    pub(super) fn scope_text(&self) -> String {
        self.config.scopes.join(" ")
    }

    /// Every scope the authorization server knows: the challenge's, then the tools' (in order,
    /// once each).
    pub(super) fn known_scopes(&self) -> Vec<String> {
        let mut known = self.config.scopes.clone();
        for scope in self.config.tool_scopes.values() {
            if !known.contains(scope) {
                known.push(scope.clone());
            }
        }
        known
    }

    /// The scope a request that asked for `asked` is granted: all the server's when it asked
    /// for none, else what it asked for; `None` when it named a scope the server does not know
    /// (`invalid_scope`, at `/authorize` and `/token` alike).
    pub(super) fn grant_scope(&self, asked: Option<&str>) -> Option<String> {
        match asked.map(str::trim) {
            None | Some("") => Some(self.scope_text()),
            Some(asked) => {
                let known = self.known_scopes();
                asked
                    .split(' ')
                    .all(|s| known.iter().any(|k| k == s))
                    .then(|| asked.to_string())
            }
        }
    }
}

/// A random token of 32 bytes as URL-safe text (codes, secrets, refresh tokens, ids).
pub(super) fn random_token() -> String {
    use base64::Engine;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The token endpoint authentication methods a client may register.
const AUTH_METHODS: [&str; 3] = ["none", "client_secret_basic", "client_secret_post"];

/// The client `metadata` describes, registered; what `/register` answers.
pub(super) fn registered(
    lab: &AuthLab,
    mut metadata: Map<String, Value>,
) -> Result<Map<String, Value>, (&'static str, String)> {
    let strings = |name: &str, default: &[&str]| -> Result<Vec<String>, (&'static str, String)> {
        match metadata.get(name) {
            None => Ok(default.iter().map(|s| s.to_string()).collect()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or((
                    "invalid_client_metadata",
                    format!("{name} must be an array of strings"),
                )),
            Some(_) => Err((
                "invalid_client_metadata",
                format!("{name} must be an array of strings"),
            )),
        }
    };
    let grant_types = strings("grant_types", &["authorization_code"])?;
    let redirect_uris = strings("redirect_uris", &[])?;
    if let Some(unknown) = grant_types.iter().find(|g| {
        !["authorization_code", "refresh_token", "client_credentials"].contains(&g.as_str())
    }) {
        return Err((
            "invalid_client_metadata",
            format!("unsupported grant type {unknown:?}"),
        ));
    }
    if grant_types.iter().any(|g| g == "authorization_code") && redirect_uris.is_empty() {
        return Err((
            "invalid_redirect_uri",
            "the authorization code grant needs redirect_uris".into(),
        ));
    }
    if let Some(bad) = redirect_uris.iter().find(|u| !acceptable_redirect(u)) {
        return Err((
            "invalid_redirect_uri",
            format!("{bad:?} is neither https nor http on a loopback host"),
        ));
    }
    let auth_method = match metadata.get("token_endpoint_auth_method") {
        None => "client_secret_basic".to_string(),
        Some(Value::String(m)) if AUTH_METHODS.contains(&m.as_str()) => m.clone(),
        Some(other) => {
            return Err((
                "invalid_client_metadata",
                format!("token_endpoint_auth_method {other} is not one of {AUTH_METHODS:?}"),
            ))
        }
    };
    if auth_method == "none" && grant_types.iter().any(|g| g == "client_credentials") {
        return Err((
            "invalid_client_metadata",
            "client_credentials needs a confidential client (a token_endpoint_auth_method other than none)".into(),
        ));
    }
    let id = format!("client-{}", &random_token()[..16]);
    let secret = (auth_method != "none").then(random_token);
    metadata.insert("client_id".into(), Value::String(id.clone()));
    metadata.insert(
        "client_id_issued_at".into(),
        jwt::seconds(lab.clock.wall()).into(),
    );
    if let Some(secret) = &secret {
        metadata.insert("client_secret".into(), Value::String(secret.clone()));
        metadata.insert("client_secret_expires_at".into(), 0.into());
    }
    metadata.insert(
        "token_endpoint_auth_method".into(),
        Value::String(auth_method.clone()),
    );
    metadata.insert("grant_types".into(), grant_types.clone().into());
    metadata.insert("redirect_uris".into(), redirect_uris.clone().into());
    if grant_types.iter().any(|g| g == "authorization_code") {
        metadata
            .entry("response_types")
            .or_insert_with(|| vec!["code"].into());
    }
    let client = Client {
        id: id.clone(),
        secret,
        auth_method,
        redirect_uris,
        grant_types,
        metadata: metadata.clone(),
    };
    lock(&lab.clients).insert(id, client);
    Ok(metadata)
}

/// Whether `uri` may be a redirect URI: `https`, or `http` on a loopback host (RFC 8252), with
/// no fragment.
fn acceptable_redirect(uri: &str) -> bool {
    if uri.contains('#') {
        return false;
    }
    if uri.starts_with("https://") {
        return true;
    }
    let Some(rest) = uri.strip_prefix("http://") else {
        return false;
    };
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let host = if authority.starts_with('[') {
        authority
            .split(']')
            .next()
            .map(|h| format!("{h}]"))
            .unwrap_or_default()
    } else {
        authority.split(':').next().unwrap_or("").to_string()
    };
    matches!(host.as_str(), "127.0.0.1" | "localhost" | "[::1]")
}

#[cfg(test)]
mod tests {
    use super::acceptable_redirect;

    #[test]
    fn redirects_are_https_or_loopback_http() {
        assert!(acceptable_redirect("http://127.0.0.1:4000/callback"));
        assert!(acceptable_redirect("http://localhost/cb?x=1"));
        assert!(acceptable_redirect("http://[::1]:5/cb"));
        assert!(acceptable_redirect("https://app.example/cb"));
        assert!(!acceptable_redirect("http://app.example/cb"));
        assert!(!acceptable_redirect("http://127.0.0.1.evil/cb"));
        assert!(!acceptable_redirect("https://app.example/cb#frag"));
        assert!(!acceptable_redirect("myapp:/cb"));
    }
}

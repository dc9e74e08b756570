//! What the auth lab keeps and decides, apart from HTTP: its settings, the clients registered
//! (and what registration accepts), the codes, refresh tokens and access tokens issued, and
//! the scopes it grants. The endpoints (siblings of this module) serve it.

use super::clients::{client_of, Client, Refusal};
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
    /// A path the issuer has after the listener's base (`/tenant1`: a tenant's authorization
    /// server, whose metadata a client finds by path insertion); empty: none.
    pub issuer_path: String,
    /// Where the protected resource's metadata is served besides the well-known URLs, and the
    /// URL the challenge names (`/custom/metadata.json`); empty: the path-aware well-known URL.
    pub resource_metadata_path: String,
    /// Clients registered before any request (pre-registration), as `/register` would take
    /// them, with their own `client_id` (and `client_secret`).
    pub clients: Vec<Map<String, Value>>,
    /// Client ID Metadata Documents by URL: what the lab reads for a `client_id` that is a URL
    /// instead of fetching it (only loopback URLs are fetched).
    pub client_documents: std::collections::BTreeMap<String, Value>,
    /// Whether the consent step shows a page for a person to answer (else it approves at once,
    /// as the conformance suite's mock does, unless a fault rule scripts it).
    pub consent_page: bool,
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
            issuer_path: String::new(),
            resource_metadata_path: String::new(),
            clients: Vec::new(),
            client_documents: Default::default(),
            consent_page: false,
        }
    }
}

impl AuthConfig {
    /// What is wrong with the settings, if anything (a path that is not one, a client that
    /// registration would refuse).
    pub fn check(&self) -> Result<(), String> {
        for (name, path) in [
            ("issuer_path", &self.issuer_path),
            ("resource_metadata_path", &self.resource_metadata_path),
        ] {
            if !path.is_empty()
                && (!path.starts_with('/') || path.ends_with('/') || path.contains(['?', '#', ' ']))
            {
                return Err(format!(
                    "{name} {path:?} is not a path (it starts with \"/\", does not end with one, and has no query)"
                ));
            }
        }
        for (i, client) in self.clients.iter().enumerate() {
            client_of(client.clone(), 0, true)
                .map_err(|(error, description)| format!("clients[{i}]: {error}: {description}"))?;
        }
        Ok(())
    }
}

/// The path, after the issuer's, of the second authorization server: the one the resource
/// names once it migrates (MCP 2026-07-28, SEP-2352; the conformance suite's
/// `auth/authorization-server-migration`).
pub const MIGRATED: &str = "/as2";

/// The URLs the lab is known by, made once when the listener is bound.
#[derive(Debug, Clone)]
pub struct Urls {
    /// The issuers: the listener's base URL and the issuer path, without a trailing slash
    /// (clients compare it as a string); then the authorization server the resource migrates
    /// to ([`AuthLab::migrate`]), the same and [`MIGRATED`].
    pub issuers: [String; 2],
    /// The MCP endpoint's canonical URL: the protected resource, and every token's audience.
    pub resource: String,
    /// The protected resource metadata's URL that the challenge names.
    pub resource_metadata: String,
    /// The path of the second authorization server's issuer after the base (`/as2`, or
    /// `/tenant1/as2`): how a request is known to be for it.
    pub migrated_path: String,
}

impl Urls {
    /// The URLs of `config`.
    fn of(config: &AuthConfig) -> Self {
        let metadata_path = if config.resource_metadata_path.is_empty() {
            "/.well-known/oauth-protected-resource/mcp"
        } else {
            &config.resource_metadata_path
        };
        Self {
            issuers: [
                format!("{}{}", config.base, config.issuer_path),
                format!("{}{}{MIGRATED}", config.base, config.issuer_path),
            ],
            resource: format!("{}/mcp", config.base),
            resource_metadata: format!("{}{metadata_path}", config.base),
            migrated_path: format!("{}{MIGRATED}", config.issuer_path),
        }
    }
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

/// An authorization request waiting for its answer on the consent page.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The client.
    pub client_id: String,
    /// Its name, as the page shows it.
    pub client_name: String,
    /// Where the answer goes (checked against the client's already).
    pub redirect_uri: String,
    /// The request's `state`.
    pub state: Option<String>,
    /// Its PKCE challenge.
    pub challenge: String,
    /// Its `resource`, if it named one.
    pub resource: Option<String>,
    /// The scopes it asked for (granted unless the person unticks some).
    pub scope: String,
    /// The authorization server asked (an index of the lab's issuers).
    pub issuer: usize,
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
    /// Its URLs (made once: a request does not format them).
    pub urls: Urls,
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
    /// Client ID Metadata Documents by URL (pre-seeded, or fetched from loopback once).
    pub(super) documents: Mutex<HashMap<String, Value>>,
    /// Authorization requests waiting for a person's answer on the consent page, by id.
    pub(super) pending: Mutex<HashMap<String, Pending>>,
    /// The last redirect `/authorize` answered with a code (what a replayed callback repeats):
    /// its location, and how the record shows it.
    pub(super) last_redirect: Mutex<Option<(String, String)>>,
    /// The `jti`s of client assertions already used (an assertion is good once).
    pub(super) assertions: Mutex<std::collections::HashSet<String>>,
    /// Which of [`Urls::issuers`] the resource names and trusts: 0 until it migrates, then 1.
    current: std::sync::atomic::AtomicUsize,
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
            let documents = config
                .client_documents
                .iter()
                .map(|(url, doc)| (url.clone(), doc.clone()))
                .collect();
            let lab = Arc::new(Self {
                urls: Urls::of(&config),
                config,
                clock,
                keys: jwt::Keys::random(),
                clients: Mutex::default(),
                codes: Mutex::default(),
                refresh: Mutex::default(),
                issued: Mutex::default(),
                ended: Mutex::default(),
                documents: Mutex::new(documents),
                pending: Mutex::default(),
                last_redirect: Mutex::default(),
                assertions: Mutex::default(),
                current: Default::default(),
            });
            lab.preregister();
            lab
        })
    }

    /// Back to the start (a server shared by several tests): only the configured clients and
    /// documents, no codes or refresh tokens, the first authorization server again, and every
    /// access token issued so far refused from now on (`revoked`), as a fresh lab would.
    pub fn reset(&self) {
        self.end(None, jwt::Refused::Revoked);
        lock(&self.issued).clear();
        lock(&self.clients).clear();
        lock(&self.codes).clear();
        lock(&self.refresh).clear();
        lock(&self.pending).clear();
        *lock(&self.last_redirect) = None;
        lock(&self.assertions).clear();
        *lock(&self.documents) = self
            .config
            .client_documents
            .iter()
            .map(|(url, doc)| (url.clone(), doc.clone()))
            .collect();
        self.current.store(0, std::sync::atomic::Ordering::Release);
        self.preregister();
    }

    /// Registers the clients the settings name (pre-registration).
    fn preregister(&self) {
        for client in self.config.clients.clone() {
            // Checked when the options were read (`AuthConfig::check`).
            if let Err(e) = self.register(client) {
                tracing::warn!(%e, "a pre-registered client was refused");
            }
        }
    }

    /// Seeds the Client ID Metadata Document of `url` (what a client whose `client_id` is
    /// that URL is checked against, instead of fetching it).
    pub fn add_client_document(&self, url: String, document: Value) {
        lock(&self.documents).insert(url, document);
    }

    /// The client `id`, if registered (at any of the authorization servers).
    pub fn client(&self, id: &str) -> Option<Client> {
        lock(&self.clients).get(id).cloned()
    }

    /// The client `id` as the authorization server `at` knows it: registered there (a Client ID
    /// Metadata Document's client is known everywhere). Credentials of one authorization server
    /// are not good at another.
    pub(super) fn client_at(&self, id: &str, at: usize) -> Option<Client> {
        self.client(id)
            .filter(|c| c.issuer.is_none_or(|issuer| issuer == at))
    }

    /// Which authorization server a request to `path` is for: the migrated one's paths are under
    /// its issuer's (`/as2/token`), or end with it (`/.well-known/oauth-authorization-server/as2`).
    pub(super) fn at(&self, path: &str) -> usize {
        let second = &self.urls.migrated_path;
        let under = path
            .strip_prefix(second.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
        usize::from(under || path.ends_with(second.as_str()))
    }

    /// The issuer of authorization server `at`.
    pub fn issuer(&self, at: usize) -> &str {
        &self.urls.issuers[at]
    }

    /// Which authorization server the resource names now (and whose tokens it takes).
    pub fn current(&self) -> usize {
        self.current.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The resource moves to the second authorization server: its metadata names that one from
    /// now on, and tokens of the first are refused (`401 invalid_token`); a client registers
    /// there anew. Its issuer.
    pub fn migrate(&self) -> String {
        self.current.store(1, std::sync::atomic::Ordering::Release);
        self.urls.issuers[1].clone()
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
        self.registered(metadata, true, self.current())
            .map_err(|(error, description)| format!("{error}: {description}"))
    }

    /// Registers the client `metadata` describes (`pre`: by the test, keeping the id and secret
    /// it names); what `/register` answers, or why not.
    pub(super) fn registered(
        &self,
        metadata: Map<String, Value>,
        pre: bool,
        at: usize,
    ) -> Result<Map<String, Value>, Refusal> {
        let (mut client, answer) = client_of(metadata, jwt::seconds(self.clock.wall()), pre)?;
        client.issuer = Some(at);
        lock(&self.clients).insert(client.id.clone(), client);
        Ok(answer)
    }

    /// The scopes as the challenge and the resource's metadata name them, space-separated.
    pub(super) fn scope_text(&self) -> String {
        self.config.scopes.join(" ")
    }

    /// Every scope the authorization server knows: the challenge's, then the tools' (in order,
    /// once each).
    pub(super) fn known_scopes(&self) -> Vec<String> {
        let mut known = self.config.scopes.clone();
        // Asked for by a client that wants a refresh token (MCP 2026-07-28, SEP-2207): the
        // authorization server lists it, the resource never asks for it.
        let offline = "offline_access".to_string();
        for scope in self.config.tool_scopes.values().chain([&offline]) {
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

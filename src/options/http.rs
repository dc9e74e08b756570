//! [`HttpOptions`]: what an HTTP listener is started with, and the listener they make.

use super::group::{Group, Seconds};
use crate::error::Error;
use crate::server::Server;
use crate::transport::http::auth::{AuthConfig, AuthMode};
use crate::transport::http::{self, guard::Allowlist, HttpConfig, HttpState};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The shortest keepalive interval: a shorter one would only busy the streams.
const MIN_KEEPALIVE: Duration = Duration::from_millis(10);

/// Every option of an HTTP listener besides its address (`start_http(host, port, **options)`,
/// the CLI's `http` and `sse` commands). Defaults are [`HttpConfig::default`]'s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpOptions {
    /// Fail when the port is busy instead of trying the next 20.
    pub strict_port: bool,
    /// Answer POSTed requests with `application/json` instead of an SSE stream.
    pub json_response: bool,
    /// Hosts accepted besides loopback by the DNS-rebinding guard (`*`: any).
    pub allow_hosts: Vec<String>,
    /// Origins accepted besides loopback, e.g. `https://app.example` (`*`: any).
    pub allow_origins: Vec<String>,
    /// Most concurrent sessions (both transports); an `initialize` or `GET /sse` beyond it
    /// gets 503.
    pub max_sessions: usize,
    /// Sessions idle this long are ended; 0: never.
    pub session_idle_timeout: Seconds,
    /// SSE events kept per session for `Last-Event-ID` resumption (oldest dropped first).
    pub event_store_capacity: usize,
    /// Bytes of SSE events kept per session for resumption (oldest dropped first, counted).
    pub event_store_bytes: usize,
    /// Bytes an SSE stream's reader may fall behind before the stream is dropped (counted; a
    /// Streamable HTTP client resumes it with `Last-Event-ID`).
    pub stream_buffer_bytes: usize,
    /// Live SSE streams per session; one more gets 503 naming this option.
    pub max_streams_per_session: usize,
    /// Live SSE streams of the listener in all; one more gets 503 naming this option.
    pub max_streams: usize,
    /// Most bytes of records one control API traffic read answers; the rest is read with the
    /// next `since`.
    pub control_read_bytes: usize,
    /// The `retry` (reconnection delay) sent with each POST stream's priming event.
    pub sse_retry: Seconds,
    /// Interval of `: keepalive` comments on open SSE streams (at least 10 ms).
    pub keepalive: Seconds,
    /// Whether `GET /mcp` opens a standalone SSE stream (otherwise 405).
    pub standalone_stream: bool,
    /// Whether the control API is served at `/_control/` (docs/control-api.md).
    pub control: bool,
    /// A bearer token every control API call must carry (empty: none).
    pub control_token: Option<String>,
    /// Whether the live lab page is served at `/_lab/` (docs/report.md); `None`: when the
    /// listener is on loopback (a page that drives the server is not offered to a network
    /// unless asked).
    pub lab: Option<bool>,
    /// How the MCP endpoints are protected: `none`, `bearer` (the static `tokens`) or `oauth`
    /// (the built-in authorization server; docs/auth.md).
    pub auth: String,
    /// The tokens `auth="bearer"` accepts.
    pub tokens: Vec<String>,
    /// The scopes the auth lab knows and asks for (`scopes_supported`, the challenge's `scope`).
    pub scopes: Vec<String>,
    /// How long the auth lab's access tokens live, on the server's clock.
    pub token_ttl: Seconds,
    /// The scope a tool needs beyond `scopes`, by tool name (scope step-up: `403
    /// insufficient_scope`).
    pub tool_scopes: std::collections::BTreeMap<String, String>,
    /// The auth lab's issuer's path after the listener's base (`/tenant1`): its metadata is
    /// then found by path insertion, its endpoints under it.
    pub issuer_path: String,
    /// A custom URL path for the protected resource's metadata, which the `401` challenge
    /// then names (`/custom/metadata.json`).
    pub resource_metadata_path: String,
    /// Clients registered before any request (pre-registration): client metadata as
    /// `/register` takes it, with its own `client_id` (and `client_secret`, `jwks`).
    pub clients: Vec<serde_json::Map<String, serde_json::Value>>,
    /// Client ID Metadata Documents by URL, read instead of fetching them.
    pub client_documents: std::collections::BTreeMap<String, serde_json::Value>,
    /// How the consent step is answered when no fault rule scripts it: `auto` (approved at
    /// once) or `page` (a person answers on a page).
    pub consent: String,
}

impl Group for HttpOptions {}

impl Default for HttpOptions {
    fn default() -> Self {
        let http = HttpConfig::default();
        Self {
            strict_port: false,
            json_response: http.json_response,
            allow_hosts: http.allow.hosts,
            allow_origins: http.allow.origins,
            max_sessions: http.max_sessions,
            // 0 means never, as the option takes it.
            session_idle_timeout: http.session_idle_timeout.map_or(Seconds(0.0), Seconds::of),
            event_store_capacity: http.event_store_capacity,
            event_store_bytes: http.event_store_bytes,
            stream_buffer_bytes: http.stream_buffer_bytes,
            max_streams_per_session: http.max_streams_per_session,
            max_streams: http.max_streams,
            control_read_bytes: http.control_read_bytes,
            sse_retry: Seconds::of(http.sse_retry),
            keepalive: Seconds::of(http.keepalive),
            standalone_stream: http.standalone_stream,
            control: http.control,
            control_token: http.control_token,
            lab: None,
            auth: http.auth.mode.as_str().into(),
            tokens: http.auth.tokens,
            scopes: http.auth.scopes,
            token_ttl: Seconds::of(http.auth.token_ttl),
            tool_scopes: http.auth.tool_scopes,
            issuer_path: http.auth.issuer_path,
            resource_metadata_path: http.auth.resource_metadata_path,
            clients: http.auth.clients,
            client_documents: http.auth.client_documents,
            consent: if http.auth.consent_page {
                "page"
            } else {
                "auto"
            }
            .into(),
        }
    }
}

impl HttpOptions {
    /// What the transport reads. Fails on a bad duration.
    pub fn http_config(&self) -> Result<HttpConfig, Error> {
        let idle = self.session_idle_timeout.duration("session_idle_timeout")?;
        Ok(HttpConfig {
            json_response: self.json_response,
            allow: Allowlist {
                hosts: self.allow_hosts.clone(),
                origins: self.allow_origins.clone(),
            },
            max_sessions: self.max_sessions,
            session_idle_timeout: (!idle.is_zero()).then_some(idle),
            event_store_capacity: self.event_store_capacity,
            event_store_bytes: self.event_store_bytes,
            stream_buffer_bytes: self.stream_buffer_bytes,
            max_streams_per_session: self.max_streams_per_session,
            max_streams: self.max_streams,
            control_read_bytes: self.control_read_bytes,
            sse_retry: self.sse_retry.duration("sse_retry")?,
            keepalive: self.keepalive.duration("keepalive")?.max(MIN_KEEPALIVE),
            standalone_stream: self.standalone_stream,
            control: self.control,
            control_token: self.control_token.clone().filter(|t| !t.is_empty()),
            lab: self.lab.unwrap_or(true),
            auth: self.auth_config()?,
        })
    }

    /// The auth lab's settings; fails on an unknown mode, `bearer` without tokens, or a bad
    /// lifetime.
    fn auth_config(&self) -> Result<AuthConfig, Error> {
        let mode = self.auth.parse::<AuthMode>().map_err(Error::Config)?;
        if mode == AuthMode::Bearer && self.tokens.is_empty() {
            return Err(Error::Config(
                "auth \"bearer\" needs at least one token (--token)".into(),
            ));
        }
        Ok(AuthConfig {
            mode,
            tokens: self.tokens.clone(),
            scopes: self.scopes.clone(),
            token_ttl: self.token_ttl.duration("token_ttl")?,
            tool_scopes: self.tool_scopes.clone(),
            base: String::new(),
            issuer_path: self.issuer_path.clone(),
            resource_metadata_path: self.resource_metadata_path.clone(),
            clients: self.clients.clone(),
            client_documents: self.client_documents.clone(),
            consent_page: match self.consent.as_str() {
                "auto" => false,
                "page" => true,
                other => {
                    return Err(Error::Config(format!(
                        "consent {other:?} is not auto or page"
                    )))
                }
            },
        })
        .and_then(|config: AuthConfig| {
            config.check().map_err(Error::Config)?;
            Ok(config)
        })
    }

    /// Binds `host:port` (`None`: [`http::DEFAULT_HOST`]; port 0: any free one; a busy port
    /// moves to the next of 20 unless `strict_port`), after checking the options. The
    /// listener's Host guard accepts the address it announces ([`http::listen`]).
    pub async fn listen(&self, host: Option<&str>, port: u16) -> Result<Listener, Error> {
        let mut config = self.http_config()?;
        let host = host.unwrap_or(http::DEFAULT_HOST);
        let (listener, addr) =
            http::listen(host, port, self.strict_port, &mut config.allow).await?;
        config.lab = self.lab.unwrap_or_else(|| is_loopback_bind(host));
        // The issuer and the protected resource are named by the address clients are told.
        config.auth.base = http::base_url(addr);
        Ok(Listener {
            listener,
            addr,
            config,
        })
    }
}

/// Whether `host` binds loopback only (a wildcard such as `0.0.0.0` is announced as loopback
/// but reachable from the network).
fn is_loopback_bind(host: &str) -> bool {
    match host.trim_matches(['[', ']']).parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// A bound HTTP listener, not serving yet.
pub struct Listener {
    listener: TcpListener,
    /// Where clients reach it (loopback for a wildcard bind).
    pub addr: SocketAddr,
    config: HttpConfig,
}

impl Listener {
    /// Serves `server` until `shutdown` is cancelled (see [`http::serve`]).
    pub async fn serve(
        self,
        server: Arc<Server>,
        shutdown: CancellationToken,
    ) -> std::io::Result<()> {
        let (_, serving) = self.start(server, shutdown);
        serving.await
    }

    /// The listener's state (its sessions, its auth lab) and the future that serves `server`
    /// until `shutdown` is cancelled: for a caller that reaches into the state while it serves.
    pub fn start(
        self,
        server: Arc<Server>,
        shutdown: CancellationToken,
    ) -> (
        Arc<HttpState>,
        impl std::future::Future<Output = std::io::Result<()>> + Send + 'static,
    ) {
        // The first listener names the server's web origin (a second one serves it too).
        let _ = server.web_base.set(http::base_url(self.addr));
        let state = HttpState::new(server, self.config, shutdown);
        (state.clone(), http::serve(self.listener, state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_idle_timeout_is_never() {
        let options = HttpOptions {
            session_idle_timeout: Seconds(0.0),
            ..Default::default()
        };
        assert_eq!(options.http_config().unwrap().session_idle_timeout, None);
        let defaults = HttpOptions::default().http_config().unwrap();
        assert_eq!(
            defaults.session_idle_timeout,
            HttpConfig::default().session_idle_timeout
        );
    }
}

//! How the HTTP transports behave ([`HttpConfig`]) and where they listen by default.

use std::time::Duration;

/// How the HTTP transports behave. `Default` is what the CLI uses without flags.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Answer POSTed requests with `application/json` instead of an SSE stream.
    pub json_response: bool,
    /// Hosts and origins accepted besides loopback.
    pub allow: super::guard::Allowlist,
    /// Most concurrent sessions (both transports); an `initialize` or `GET /sse` beyond it
    /// gets 503.
    pub max_sessions: usize,
    /// Sessions idle this long are ended (`None`: never).
    pub session_idle_timeout: Option<Duration>,
    /// Events kept per session for `Last-Event-ID` resumption (oldest dropped first).
    pub event_store_capacity: usize,
    /// The `retry` (reconnection delay) sent with each POST stream's priming event.
    pub sse_retry: Duration,
    /// Interval of `: keepalive` comments on open SSE streams.
    pub keepalive: Duration,
    /// Whether `GET /mcp` opens a standalone stream (otherwise 405).
    pub standalone_stream: bool,
    /// Whether the control API is served at `/_control/` (otherwise 404 there).
    pub control: bool,
    /// The bearer token every control API call must carry (`None`: none needed; the API is
    /// behind the loopback Host/Origin guard either way).
    pub control_token: Option<String>,
    /// Whether the live lab page is served at `/_lab/` (it needs the control API, so it is
    /// off with it).
    pub lab: bool,
    /// How the MCP endpoints are protected, and the built-in authorization server's settings
    /// (`docs/auth.md`).
    pub auth: super::auth::lab::AuthConfig,
}
impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            json_response: false,
            allow: super::guard::Allowlist::default(),
            max_sessions: 1000,
            session_idle_timeout: Some(Duration::from_secs(30 * 60)),
            event_store_capacity: 1024,
            sse_retry: Duration::from_millis(1000),
            keepalive: Duration::from_secs(15),
            standalone_stream: true,
            control: true,
            control_token: None,
            lab: true,
            auth: super::auth::lab::AuthConfig::default(),
        }
    }
}
/// The address a listener binds by default: loopback only, so a test server is not reachable
/// from the network unless asked.
pub const DEFAULT_HOST: &str = "127.0.0.1";

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
    /// Bytes of events kept per session for resumption (oldest dropped first).
    pub event_store_bytes: usize,
    /// Bytes an SSE stream's reader may fall behind before the stream is dropped.
    pub stream_buffer_bytes: usize,
    /// Live SSE streams per session (POST streams whose request runs, and GETs); one more
    /// gets 503.
    pub max_streams_per_session: usize,
    /// Live SSE streams of the listener, all sessions together; one more gets 503.
    pub max_streams: usize,
    /// Most bytes of records one `GET /_control/traffic` answers (or one event of its stream
    /// carries); the rest is read with the next `since`.
    pub control_read_bytes: usize,
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
            event_store_bytes: super::sessions::STORE_MAX_BYTES,
            stream_buffer_bytes: DEFAULT_STREAM_BUFFER_BYTES,
            max_streams_per_session: 256,
            max_streams: 10_000,
            control_read_bytes: DEFAULT_CONTROL_READ_BYTES,
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
/// Bytes an SSE stream's reader may fall behind unless configured: a few large answers, far
/// more than a reader that keeps up ever has queued.
pub const DEFAULT_STREAM_BUFFER_BYTES: usize = 16 * 1024 * 1024;

/// Bytes of records one control API traffic read answers unless configured.
pub const DEFAULT_CONTROL_READ_BYTES: usize = 16 * 1024 * 1024;

/// The address a listener binds by default: loopback only, so a test server is not reachable
/// from the network unless asked.
pub const DEFAULT_HOST: &str = "127.0.0.1";

//! What every HTTP handler shares ([`HttpState`]): the server, the settings, the sessions of
//! both HTTP transports, the shutdown token.

use super::config::HttpConfig;
use super::sessions::{HttpSession, SessionTable};
use crate::server::Server;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// Everything the HTTP handlers share.
pub struct HttpState {
    /// The MCP server.
    pub server: Arc<Server>,
    /// Transport settings.
    pub config: HttpConfig,
    /// Live sessions of both HTTP transports.
    pub sessions: SessionTable,
    /// Fired on shutdown: open SSE streams end, so graceful shutdown completes.
    pub shutdown: CancellationToken,
    /// What this listener's control API registered, so its reset takes out exactly those.
    canned: Mutex<CannedItems>,
    /// The auth lab, when the MCP endpoints are protected (`None`: they are open).
    pub auth: Option<Arc<super::auth::lab::AuthLab>>,
    /// Live SSE streams of every session, against `max_streams`.
    pub streams: Arc<super::sessions::StreamCount>,
}

/// The canned items a control API registered, by kind, in order.
#[derive(Default)]
pub struct CannedItems {
    /// Tool names.
    pub tools: indexmap::IndexSet<String>,
    /// Resource URIs.
    pub resources: indexmap::IndexSet<String>,
    /// Prompt names.
    pub prompts: indexmap::IndexSet<String>,
}
impl HttpState {
    /// State for serving `server` with `config`; `shutdown` stops everything.
    pub fn new(server: Arc<Server>, config: HttpConfig, shutdown: CancellationToken) -> Arc<Self> {
        let auth = super::auth::lab::AuthLab::new(config.auth.clone(), server.clock.clone());
        Arc::new(Self {
            server,
            sessions: SessionTable::default(),
            shutdown,
            canned: Mutex::default(),
            auth,
            streams: Arc::new(super::sessions::StreamCount::new(config.max_streams)),
            config,
        })
    }

    /// What the streams of a new session may hold: `events` kept for resumption (none for
    /// legacy SSE), the rest as configured.
    pub fn stream_bounds(&self, events: usize) -> super::sessions::StreamBounds {
        super::sessions::StreamBounds {
            events,
            event_bytes: self.config.event_store_bytes,
            buffer_bytes: self.config.stream_buffer_bytes,
            per_session: self.config.max_streams_per_session,
            total: self.streams.clone(),
            hits: self.server.limit_hits.clone(),
        }
    }

    /// The canned items this listener's control API registered.
    pub fn canned(&self) -> std::sync::MutexGuard<'_, CannedItems> {
        crate::lock::lock(&self.canned)
    }

    /// Ends a session: its streams close, its handlers stop, its memory is released.
    pub fn end_session(&self, id: &str) -> bool {
        self.sessions.remove(id).map(|s| self.close(&s)).is_some()
    }

    /// Ends every session (shutdown).
    pub fn end_all_sessions(&self) {
        for s in self.sessions.drain() {
            self.close(&s);
        }
    }

    /// Closes a session already removed from the table.
    pub(super) fn close(&self, session: &HttpSession) {
        session.end_streams();
        self.server.close_session(&session.core);
    }
}

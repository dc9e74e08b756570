//! How a [`crate::server::sink::Sink`] reaches one SSE stream of a streamable HTTP session.

use super::session::HttpSession;
use crate::server::sink::{Held, Outlet, Undeliverable};
use std::sync::{Arc, Weak};

/// The outlet of one SSE stream of a streamable HTTP session.
pub struct StreamOutlet {
    /// The session (weak: a deleted session's stragglers are simply undeliverable).
    pub session: Weak<HttpSession>,
    /// Which stream.
    pub stream: u64,
    /// Whether its frames may wait for a GET that has not come yet, and are then recorded when
    /// it takes them (the standalone stream of a server that offers one).
    pub holds: bool,
}

impl Outlet for StreamOutlet {
    fn deliver(&self, frame: Arc<str>) -> Result<Option<Arc<str>>, Undeliverable> {
        let session = self.session.upgrade().ok_or(Undeliverable)?;
        Ok(Some(session.push(self.stream, frame)))
    }

    fn disconnect(&self) {
        if let Some(session) = self.session.upgrade() {
            session.disconnect(self.stream);
        }
    }

    fn stream(&self) -> Option<Arc<str>> {
        Some(self.stream.to_string().into())
    }

    fn holds(&self) -> bool {
        self.holds
    }

    fn hold(&self, frame: Held) -> Result<(), Held> {
        match self.session.upgrade() {
            Some(session) => session.hold(frame),
            None => Err(frame),
        }
    }
}

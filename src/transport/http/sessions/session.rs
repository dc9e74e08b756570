//! One HTTP session: a core [`Session`] with its transport, its SSE streams (each call takes
//! the streams' lock for one step of [`Streams`]) and how long it has been idle.

use super::super::outbox::Inbox;
use super::bounds::StreamBounds;
use super::events::SseEvent;
use super::streams::{Attach, Streams};
use crate::clock::Clock;
use crate::lock::lock;
use crate::server::session::Session;
use crate::server::sink::Held;
use crate::traffic::HttpMeta;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Which transport a session belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionKind {
    /// Streamable HTTP (`/mcp`).
    Streamable,
    /// Legacy HTTP+SSE (`/sse` + `/message`).
    LegacySse,
}

/// One HTTP session.
pub struct HttpSession {
    /// The protocol session.
    pub core: Arc<Session>,
    /// Streamable or legacy SSE.
    pub kind: SessionKind,
    /// Streams and their event store.
    pub(super) streams: Mutex<Streams>,
    /// When the client last did anything (for idle expiry).
    last_active: Mutex<Instant>,
    /// The server's clock, which idleness is measured on (a test's manual clock expires an
    /// idle session only when advanced past the timeout).
    clock: Clock,
    /// The traffic metadata of the last POST, shared by the next one's record when its
    /// headers are the same ([`crate::transport::http::recording::http_meta_reusing`]).
    pub last_post_meta: Mutex<Option<Arc<HttpMeta>>>,
}

impl HttpSession {
    /// A session whose streams stay within `bounds`, idle on `clock`.
    pub fn new(
        core: Arc<Session>,
        kind: SessionKind,
        bounds: StreamBounds,
        clock: Clock,
    ) -> Arc<Self> {
        Arc::new(Self::new_inner(core, kind, bounds, clock))
    }

    /// The same, unwrapped (for `Arc::new_cyclic`, when the session's own outlet needs it).
    pub fn new_inner(
        core: Arc<Session>,
        kind: SessionKind,
        bounds: StreamBounds,
        clock: Clock,
    ) -> Self {
        Self {
            core,
            kind,
            streams: Mutex::new(Streams::new(bounds)),
            last_active: Mutex::new(clock.now()),
            clock,
            last_post_meta: Mutex::default(),
        }
    }

    /// Marks the session as used now.
    pub fn touch(&self) {
        *lock(&self.last_active) = self.clock.now();
    }

    /// How long the session has been idle. A connected stream (a GET, a POST whose request
    /// runs) counts as activity, and a legacy SSE session lives exactly as long as its stream.
    pub fn idle_for(&self) -> std::time::Duration {
        if self.kind == SessionKind::LegacySse || lock(&self.streams).connected() {
            return std::time::Duration::ZERO;
        }
        self.clock
            .now()
            .saturating_duration_since(*lock(&self.last_active))
    }

    /// Opens a new POST stream with a live connection; returns its id, the receiver, and the
    /// id of a priming event (reserved, never replayed). [`Attach::Unknown`] once the session
    /// ended, [`Attach::Refused`] at a bound on live streams.
    pub fn open_post_stream(&self) -> Result<(u64, Inbox<SseEvent>, Arc<str>), Attach> {
        lock(&self.streams).open_post_stream()
    }

    /// The request of POST stream `stream` was answered (or cancelled): its connection ends
    /// once the events already sent are read, and a later resume ends after replay.
    pub fn finish_stream(&self, stream: u64) {
        lock(&self.streams).finish_stream(stream);
    }

    /// Connects a GET: to the standalone stream (`resume` `None`), or resuming the stream of
    /// the event `resume` names, after that event.
    pub fn attach(&self, resume: Option<(u64, u64)>) -> Attach {
        lock(&self.streams).attach(resume)
    }

    /// Records what the GET that just attached took unrecorded (its replay, and events sent
    /// to it since), after the GET's own record; from then on its events are recorded as they
    /// are sent. Record order is then wire order.
    pub fn record_held(&self) {
        loop {
            // Events sent while these are recorded wait in the emptied list for the next turn.
            let held = lock(&self.streams).take_unrecorded();
            let Some(held) = held else {
                return;
            };
            for (frame, id) in held {
                frame.record(id);
            }
        }
    }

    /// Closes the live connection of `stream` (the server chose to, SEP-1699); the stream
    /// stays open for a resume.
    pub fn disconnect(&self, stream: u64) {
        lock(&self.streams).disconnect(stream);
    }

    /// A connection went away: its stream has no live receiver until the next attach.
    pub fn detach(&self, stream: u64, conn: u64) {
        lock(&self.streams).detach(stream, conn);
    }

    /// Ends every live connection and frees the event store (DELETE, expiry, shutdown); no
    /// stream can be opened or attached afterwards.
    pub fn end_streams(&self) {
        lock(&self.streams).end();
    }

    /// Takes a standalone event whose record must wait
    /// ([`crate::server::sink::Outlet::hold`]): stored with its record while no GET is
    /// connected, or sent to a GET that is attaching, whose record is not written yet.
    /// Anything else is given back, to be sent and recorded at once.
    pub(super) fn hold(&self, frame: Held) -> Result<(), Held> {
        lock(&self.streams).hold(frame)
    }

    /// Stores an event of `stream` and hands it to the live connection, if any.
    pub(super) fn push(&self, stream: u64, data: Arc<str>) -> Arc<str> {
        lock(&self.streams).push(stream, data, None).0
    }
}

//! One session's SSE streams: opening a POST stream, connecting a GET to the standalone stream
//! or resuming a stream after an event, detaching a connection, and handing each event to its
//! stream's live connection and to the event store.

use super::super::outbox::{outbox, Inbox, Outbox, Refused};
use super::bounds::{Permit, StreamBounds};
use super::events::{event_id, SseEvent, STANDALONE};
use super::store::EventStore;
use crate::server::limits::Limit;
use crate::server::sink::Held;
use std::sync::Arc;

/// The result of asking for a stream's live connection.
pub enum Attach {
    /// Connected: replayed events first, then live ones on the receiver.
    Attached {
        /// Events to send first.
        replay: Vec<SseEvent>,
        /// Live events; ends when the stream finishes or the session ends.
        rx: Inbox<SseEvent>,
        /// Identifies this connection for [`super::HttpSession::detach`].
        conn: u64,
    },
    /// The stream already has a live connection (409).
    Busy,
    /// No such stream in this session, or the session has ended.
    Unknown,
    /// A bound on live streams (per session or in all) refused it (503).
    Refused(Limit, usize),
}

/// One live connection of a stream: who it is, where its events go, and its place among the
/// listener's live streams.
struct Live {
    /// Tells connections of one stream apart.
    conn: u64,
    /// Its send buffer.
    tx: Outbox<SseEvent>,
    /// Given back when the connection ends.
    _permit: Permit,
}

/// The streams of one session.
pub(super) struct Streams {
    /// The next POST stream id.
    next_stream: u64,
    /// The next event number (shared by all streams of the session).
    next_event: u64,
    /// The most recent events, for replay.
    pub(super) store: EventStore,
    /// The connected receiver of each stream, with a number that tells connections apart.
    live: crate::fast_map::FastMap<u64, Live>,
    /// POST streams whose request is still being served (bounded by the requests in flight);
    /// a resumed GET on any other POST stream ends after its replay.
    open: crate::fast_map::FastSet<u64>,
    /// Set when the session ends: no stream can be opened or attached any more.
    closed: bool,
    /// Numbers live connections.
    next_conn: u64,
    /// While a GET attaches (until [`super::HttpSession::record_held`]): the records of the
    /// standalone events it replays and of those sent to it since, written after the GET's own.
    unrecorded: Option<Vec<(Held, Arc<str>)>>,
    /// What the streams may hold.
    bounds: StreamBounds,
}

impl Streams {
    /// No stream yet, within `bounds`.
    pub(super) fn new(bounds: StreamBounds) -> Self {
        Self {
            next_stream: 1,
            next_event: 1,
            store: EventStore::new(bounds.events, bounds.event_bytes, bounds.hits.clone()),
            live: Default::default(),
            open: Default::default(),
            closed: false,
            next_conn: 0,
            unrecorded: None,
            bounds,
        }
    }

    /// A new live connection within the bounds on live streams, or which bound refused it.
    fn connect(&mut self, replacing: Option<u64>) -> Result<(Live, Inbox<SseEvent>), Attach> {
        let others =
            self.live.len() - usize::from(replacing.is_some_and(|s| self.live.contains_key(&s)));
        if others >= self.bounds.per_session {
            self.bounds.hits.hit(Limit::StreamsPerSession);
            return Err(Attach::Refused(
                Limit::StreamsPerSession,
                self.bounds.per_session,
            ));
        }
        let Some(permit) = self.bounds.total.take() else {
            self.bounds.hits.hit(Limit::Streams);
            return Err(Attach::Refused(Limit::Streams, self.bounds.total.max()));
        };
        let (tx, rx) = outbox(self.bounds.buffer_bytes);
        let conn = self.next_conn;
        self.next_conn += 1;
        Ok((
            Live {
                conn,
                tx,
                _permit: permit,
            },
            rx,
        ))
    }

    /// Whether any stream has a live connection (which keeps the session from idling).
    pub(super) fn connected(&self) -> bool {
        !self.live.is_empty()
    }

    /// Opens a new POST stream with a live connection; returns its id, the receiver, and the
    /// id of a priming event (reserved, never replayed). [`Attach::Unknown`] once the session
    /// ended, [`Attach::Refused`] at a bound on live streams.
    pub(super) fn open_post_stream(&mut self) -> Result<(u64, Inbox<SseEvent>, Arc<str>), Attach> {
        if self.closed {
            return Err(Attach::Unknown);
        }
        let (live, rx) = self.connect(None)?;
        let stream = self.next_stream;
        self.next_stream += 1;
        self.live.insert(stream, live);
        self.open.insert(stream);
        let n = self.next_event;
        self.next_event += 1;
        Ok((stream, rx, event_id(stream, n)))
    }

    /// The request of POST stream `stream` was answered (or cancelled): its connection ends
    /// once the events already sent are read, and a later resume ends after replay.
    pub(super) fn finish_stream(&mut self, stream: u64) {
        self.live.remove(&stream);
        self.open.remove(&stream);
    }

    /// Connects a GET: to the standalone stream (`resume` `None`), or resuming the stream of
    /// the event `resume` names, after that event.
    pub(super) fn attach(&mut self, resume: Option<(u64, u64)>) -> Attach {
        if self.closed {
            return Attach::Unknown;
        }
        let (stream, after) = resume.unwrap_or((STANDALONE, 0));
        // A fresh GET may not displace a working standalone stream (409). A resume says the
        // client lost its connection, which the server may not have noticed yet: it takes over.
        if resume.is_none()
            && self
                .live
                .get(&stream)
                .is_some_and(|live| !live.tx.is_closed())
        {
            return Attach::Busy;
        }
        let known = stream == STANDALONE || stream < self.next_stream;
        if !known {
            return Attach::Unknown;
        }
        let (live, rx) = match self.connect(Some(stream)) {
            Ok(connected) => connected,
            Err(refused) => return refused,
        };
        let conn = live.conn;
        let fresh_standalone = resume.is_none();
        let (replay, held) = self.store.replay(stream, after, fresh_standalone);
        if stream == STANDALONE {
            self.unrecorded.get_or_insert_with(Vec::new).extend(held);
        }
        if stream == STANDALONE || self.open.contains(&stream) {
            self.live.insert(stream, live);
        } else {
            // An answered POST stream: `live` is dropped here, so the connection ends after the
            // replay.
            self.live.remove(&stream);
        }
        Attach::Attached { replay, rx, conn }
    }

    /// The records an attaching GET took so far, leaving an empty list for those sent to it
    /// meanwhile; `None` once none are left, and from then on its events are recorded as they
    /// are sent.
    pub(super) fn take_unrecorded(&mut self) -> Option<Vec<(Held, Arc<str>)>> {
        match self.unrecorded.as_mut() {
            Some(held) if !held.is_empty() => Some(std::mem::take(held)),
            _ => {
                self.unrecorded = None;
                None
            }
        }
    }

    /// Closes the live connection of `stream`; the stream stays open for a resume.
    pub(super) fn disconnect(&mut self, stream: u64) {
        self.live.remove(&stream);
    }

    /// A connection went away: its stream has no live receiver until the next attach.
    pub(super) fn detach(&mut self, stream: u64, conn: u64) {
        if self.live.get(&stream).is_some_and(|live| live.conn == conn) {
            self.live.remove(&stream);
        }
    }

    /// Ends every live connection and frees the event store; no stream can be opened or
    /// attached afterwards.
    pub(super) fn end(&mut self) {
        self.closed = true;
        self.live.clear();
        self.open.clear();
        self.store.clear();
    }

    /// Takes a standalone event whose record must wait: stored with its record while no GET is
    /// connected, or sent to a GET that is attaching, whose record is not written yet. Anything
    /// else is given back, to be sent and recorded at once.
    pub(super) fn hold(&mut self, frame: Held) -> Result<(), Held> {
        let live = self
            .live
            .get(&STANDALONE)
            .is_some_and(|live| !live.tx.is_closed());
        let storable = self.store.keeps(frame.text().len());
        if self.closed || (live && self.unrecorded.is_none()) || (!live && !storable) {
            return Err(frame);
        }
        let data = frame.text().clone();
        let (id, sent) = self.push(STANDALONE, data, Some(frame));
        if let Some(frame) = sent {
            if let Some(unrecorded) = self.unrecorded.as_mut() {
                unrecorded.push((frame, id));
            }
        }
        Ok(())
    }

    /// Numbers an event of `stream`, hands it to the live connection, if any, and stores it;
    /// an event whose record is `held` keeps it while it waits for a GET, else it is given back
    /// with the event's id.
    pub(super) fn push(
        &mut self,
        stream: u64,
        data: Arc<str>,
        held: Option<Held>,
    ) -> (Arc<str>, Option<Held>) {
        let n = self.next_event;
        self.next_event += 1;
        let id = event_id(stream, n);
        let mut delivered = false;
        if let Some(live) = self.live.get(&stream) {
            let sent = live.tx.send(SseEvent {
                id: Some(id.clone()),
                data: data.clone(),
            });
            delivered = sent.is_ok();
            if let Err(refused) = sent {
                if refused == Refused::Overflow {
                    // The reader fell `stream_buffer_bytes` behind: its stream is dropped (the
                    // event stays in the store, for a resume), not the server's memory.
                    self.bounds.hits.hit(Limit::StreamBufferBytes);
                }
                self.live.remove(&stream);
            }
        }
        let held = self.store.keep(stream, n, data, delivered, held);
        (id, held)
    }
}

//! One session's SSE streams: opening a POST stream, connecting a GET to the standalone stream
//! or resuming a stream after an event, detaching a connection, and handing each event to its
//! stream's live connection and to the event store.

use super::events::{event_id, SseEvent, STANDALONE};
use super::store::EventStore;
use crate::server::sink::Held;
use std::sync::Arc;
use tokio::sync::mpsc;

/// The result of asking for a stream's live connection.
pub enum Attach {
    /// Connected: replayed events first, then live ones on the receiver.
    Attached {
        /// Events to send first.
        replay: Vec<SseEvent>,
        /// Live events; ends when the stream finishes or the session ends.
        rx: mpsc::UnboundedReceiver<SseEvent>,
        /// Identifies this connection for [`super::HttpSession::detach`].
        conn: u64,
    },
    /// The stream already has a live connection (409).
    Busy,
    /// No such stream in this session, or the session has ended.
    Unknown,
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
    live: crate::fast_map::FastMap<u64, (u64, mpsc::UnboundedSender<SseEvent>)>,
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
}

impl Streams {
    /// No stream yet, and an event store that keeps at most `capacity` events.
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            next_stream: 1,
            next_event: 1,
            store: EventStore::new(capacity),
            live: Default::default(),
            open: Default::default(),
            closed: false,
            next_conn: 0,
            unrecorded: None,
        }
    }

    /// Whether any stream has a live connection (which keeps the session from idling).
    pub(super) fn connected(&self) -> bool {
        !self.live.is_empty()
    }

    /// Opens a new POST stream with a live connection; returns its id, the receiver, and the
    /// id of a priming event (reserved, never replayed). `None` once the session ended.
    pub(super) fn open_post_stream(
        &mut self,
    ) -> Option<(u64, mpsc::UnboundedReceiver<SseEvent>, Arc<str>)> {
        if self.closed {
            return None;
        }
        let stream = self.next_stream;
        self.next_stream += 1;
        let (tx, rx) = mpsc::unbounded_channel();
        let conn = self.next_conn;
        self.next_conn += 1;
        self.live.insert(stream, (conn, tx));
        self.open.insert(stream);
        let n = self.next_event;
        self.next_event += 1;
        Some((stream, rx, event_id(stream, n)))
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
                .is_some_and(|(_, tx)| !tx.is_closed())
        {
            return Attach::Busy;
        }
        let known = stream == STANDALONE || stream < self.next_stream;
        if !known {
            return Attach::Unknown;
        }
        let fresh_standalone = resume.is_none();
        let (replay, held) = self.store.replay(stream, after, fresh_standalone);
        if stream == STANDALONE {
            self.unrecorded.get_or_insert_with(Vec::new).extend(held);
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let conn = self.next_conn;
        self.next_conn += 1;
        if stream == STANDALONE || self.open.contains(&stream) {
            self.live.insert(stream, (conn, tx));
        } else {
            // An answered POST stream: `tx` is dropped here, so the connection ends after the
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
        if self.live.get(&stream).is_some_and(|(c, _)| *c == conn) {
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
            .is_some_and(|(_, tx)| !tx.is_closed());
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
        if let Some((_, tx)) = self.live.get(&stream) {
            delivered = tx
                .send(SseEvent {
                    id: Some(id.clone()),
                    data: data.clone(),
                })
                .is_ok();
            if !delivered {
                self.live.remove(&stream);
            }
        }
        let held = self.store.keep(stream, n, data, delivered, held);
        (id, held)
    }
}

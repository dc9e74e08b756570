//! HTTP sessions: the table of live `Mcp-Session-Id`s (and legacy SSE session ids), and per
//! session its SSE streams with a bounded event store for resumption.
//!
//! Stream `0` is the session's standalone (GET) stream; every POST that carries requests gets a
//! new stream `1, 2, …`. An event id is `"<stream>-<n>"` with `n` counting all events of the
//! session, so ids are unique per session and name their stream: a GET with `Last-Event-ID`
//! replays only that stream's later events.

use crate::clock::Clock;
use crate::lock::lock;
use crate::server::session::Session;
use crate::server::sink::{Held, Outlet, Undeliverable};
use crate::traffic::HttpMeta;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;
use tokio::sync::mpsc;

/// The standalone stream's id.
pub const STANDALONE: u64 = 0;

/// Most bytes of event data one session keeps for replay, whatever the event count: the
/// oldest events go first, and a single event larger than this is not kept at all.
pub const STORE_MAX_BYTES: usize = 16 * 1024 * 1024;

/// What a live SSE response receives.
#[derive(Debug, Clone)]
pub struct SseEvent {
    /// The event id (`None` on legacy SSE, which has none).
    pub id: Option<Arc<str>>,
    /// The JSON-RPC frame.
    pub data: Arc<str>,
}

/// Which transport a session belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionKind {
    /// Streamable HTTP (`/mcp`).
    Streamable,
    /// Legacy HTTP+SSE (`/sse` + `/message`).
    LegacySse,
}

/// One event kept for replay.
struct Stored {
    stream: u64,
    n: u64,
    data: Arc<str>,
    /// Whether a live connection received it (undelivered standalone events go to the next GET).
    delivered: bool,
    /// Its record, while it waits for a GET: written when the GET takes it.
    held: Option<Held>,
}

/// The streams of one session.
struct Streams {
    /// The next POST stream id.
    next_stream: u64,
    /// The next event number (shared by all streams of the session).
    next_event: u64,
    /// The most recent events, oldest first; at most `capacity`.
    store: VecDeque<Stored>,
    /// Bound of `store`.
    capacity: usize,
    /// The connected receiver of each stream, with a number that tells connections apart.
    live: crate::fast_map::FastMap<u64, (u64, mpsc::UnboundedSender<SseEvent>)>,
    /// POST streams whose request is still being served (bounded by the requests in flight);
    /// a resumed GET on any other POST stream ends after its replay.
    open: crate::fast_map::FastSet<u64>,
    /// Bytes of event data in `store` (bounded by [`STORE_MAX_BYTES`]).
    stored_bytes: usize,
    /// Set when the session ends: no stream can be opened or attached any more.
    closed: bool,
    /// Numbers live connections.
    next_conn: u64,
    /// While a GET attaches (until [`HttpSession::record_held`]): the records of the standalone
    /// events it replays and of those sent to it since, written after the GET's own.
    unrecorded: Option<Vec<(Held, Arc<str>)>>,
}

/// One HTTP session.
pub struct HttpSession {
    /// The protocol session.
    pub core: Arc<Session>,
    /// Streamable or legacy SSE.
    pub kind: SessionKind,
    /// Streams and their event store.
    streams: Mutex<Streams>,
    /// When the client last did anything (for idle expiry).
    last_active: Mutex<Instant>,
    /// The server's clock, which idleness is measured on (a test's manual clock expires an
    /// idle session only when advanced past the timeout).
    clock: Clock,
    /// The traffic metadata of the last POST, shared by the next one's record when its
    /// headers are the same ([`super::recording::http_meta_reusing`]).
    pub last_post_meta: Mutex<Option<Arc<HttpMeta>>>,
}

/// The SSE event id of event `n` of stream `stream`: `<stream>-<n>`. Written digit by digit
/// rather than with `format!`: a POST names two events (the priming one and the answer), and
/// the formatting machinery cost about 500 instructions each (callgrind).
fn event_id(stream: u64, n: u64) -> Arc<str> {
    let mut id = String::with_capacity(24);
    super::sse::push_decimal(&mut id, stream);
    id.push('-');
    super::sse::push_decimal(&mut id, n);
    id.into()
}

/// The result of asking for a stream's live connection.
pub enum Attach {
    /// Connected: replayed events first, then live ones on the receiver.
    Attached {
        /// Events to send first.
        replay: Vec<SseEvent>,
        /// Live events; ends when the stream finishes or the session ends.
        rx: mpsc::UnboundedReceiver<SseEvent>,
        /// Identifies this connection for [`HttpSession::detach`].
        conn: u64,
    },
    /// The stream already has a live connection (409).
    Busy,
    /// No such stream in this session, or the session has ended.
    Unknown,
}

impl HttpSession {
    /// A session whose event store keeps at most `capacity` events, idle on `clock`.
    pub fn new(core: Arc<Session>, kind: SessionKind, capacity: usize, clock: Clock) -> Arc<Self> {
        Arc::new(Self::new_inner(core, kind, capacity, clock))
    }

    /// The same, unwrapped (for `Arc::new_cyclic`, when the session's own outlet needs it).
    pub fn new_inner(core: Arc<Session>, kind: SessionKind, capacity: usize, clock: Clock) -> Self {
        Self {
            core,
            kind,
            streams: Mutex::new(Streams {
                next_stream: 1,
                next_event: 1,
                store: VecDeque::new(),
                capacity,
                live: Default::default(),
                open: Default::default(),
                stored_bytes: 0,
                closed: false,
                next_conn: 0,
                unrecorded: None,
            }),
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
        if self.kind == SessionKind::LegacySse || !lock(&self.streams).live.is_empty() {
            return std::time::Duration::ZERO;
        }
        self.clock
            .now()
            .saturating_duration_since(*lock(&self.last_active))
    }

    /// Opens a new POST stream with a live connection; returns its id, the receiver, and the
    /// id of a priming event (reserved, never replayed). `None` once the session ended.
    pub fn open_post_stream(&self) -> Option<(u64, mpsc::UnboundedReceiver<SseEvent>, Arc<str>)> {
        let mut s = lock(&self.streams);
        if s.closed {
            return None;
        }
        let stream = s.next_stream;
        s.next_stream += 1;
        let (tx, rx) = mpsc::unbounded_channel();
        let conn = s.next_conn;
        s.next_conn += 1;
        s.live.insert(stream, (conn, tx));
        s.open.insert(stream);
        let n = s.next_event;
        s.next_event += 1;
        Some((stream, rx, event_id(stream, n)))
    }

    /// The request of POST stream `stream` was answered (or cancelled): its connection ends
    /// once the events already sent are read, and a later resume ends after replay.
    pub fn finish_stream(&self, stream: u64) {
        let mut s = lock(&self.streams);
        s.live.remove(&stream);
        s.open.remove(&stream);
    }

    /// Connects a GET: to the standalone stream (`resume` `None`), or resuming the stream of
    /// the event `resume` names, after that event.
    pub fn attach(&self, resume: Option<(u64, u64)>) -> Attach {
        let mut s = lock(&self.streams);
        if s.closed {
            return Attach::Unknown;
        }
        let (stream, after) = resume.unwrap_or((STANDALONE, 0));
        // A fresh GET may not displace a working standalone stream (409). A resume says the
        // client lost its connection, which the server may not have noticed yet: it takes over.
        if resume.is_none() && s.live.get(&stream).is_some_and(|(_, tx)| !tx.is_closed()) {
            return Attach::Busy;
        }
        let known = stream == STANDALONE || stream < s.next_stream;
        if !known {
            return Attach::Unknown;
        }
        let fresh_standalone = resume.is_none();
        let mut held = Vec::new();
        let replay: Vec<SseEvent> = s
            .store
            .iter_mut()
            .filter(|e| e.stream == stream && e.n > after && (!fresh_standalone || !e.delivered))
            .map(|e| {
                e.delivered = true;
                let id = event_id(e.stream, e.n);
                held.extend(e.held.take().map(|h| (h, id.clone())));
                SseEvent {
                    id: Some(id),
                    data: e.data.clone(),
                }
            })
            .collect();
        if stream == STANDALONE {
            s.unrecorded.get_or_insert_with(Vec::new).extend(held);
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let conn = s.next_conn;
        s.next_conn += 1;
        if stream == STANDALONE || s.open.contains(&stream) {
            s.live.insert(stream, (conn, tx));
        } else {
            // An answered POST stream: `tx` is dropped here, so the connection ends after the
            // replay.
            s.live.remove(&stream);
        }
        Attach::Attached { replay, rx, conn }
    }

    /// Records what the GET that just attached took unrecorded (its replay, and events sent
    /// to it since), after the GET's own record; from then on its events are recorded as they
    /// are sent. Record order is then wire order.
    pub fn record_held(&self) {
        loop {
            // Events sent while these are recorded wait in the emptied list for the next turn.
            let held = {
                let mut s = lock(&self.streams);
                match s.unrecorded.as_mut() {
                    Some(held) if !held.is_empty() => std::mem::take(held),
                    _ => {
                        s.unrecorded = None;
                        return;
                    }
                }
            };
            for (frame, id) in held {
                frame.record(id);
            }
        }
    }

    /// Closes the live connection of `stream` (the server chose to, SEP-1699); the stream
    /// stays open for a resume.
    pub fn disconnect(&self, stream: u64) {
        lock(&self.streams).live.remove(&stream);
    }

    /// A connection went away: its stream has no live receiver until the next attach.
    pub fn detach(&self, stream: u64, conn: u64) {
        let mut s = lock(&self.streams);
        if s.live.get(&stream).is_some_and(|(c, _)| *c == conn) {
            s.live.remove(&stream);
        }
    }

    /// Ends every live connection and frees the event store (DELETE, expiry, shutdown); no
    /// stream can be opened or attached afterwards.
    pub fn end_streams(&self) {
        let mut s = lock(&self.streams);
        s.closed = true;
        s.live.clear();
        s.open.clear();
        s.store.clear();
        s.stored_bytes = 0;
    }

    /// Takes a standalone event whose record must wait ([`Outlet::hold`]): stored with its
    /// record while no GET is connected, or sent to a GET that is attaching, whose record is
    /// not written yet. Anything else is given back, to be sent and recorded at once.
    fn hold(&self, frame: Held) -> Result<(), Held> {
        let mut s = lock(&self.streams);
        let live = s
            .live
            .get(&STANDALONE)
            .is_some_and(|(_, tx)| !tx.is_closed());
        let storable = s.capacity > 0 && frame.text().len() <= STORE_MAX_BYTES;
        if s.closed || (live && s.unrecorded.is_none()) || (!live && !storable) {
            return Err(frame);
        }
        let data = frame.text().clone();
        let (id, sent) = Self::push_locked(&mut s, STANDALONE, data, Some(frame));
        if let Some(frame) = sent {
            if let Some(unrecorded) = s.unrecorded.as_mut() {
                unrecorded.push((frame, id));
            }
        }
        Ok(())
    }

    /// Stores an event of `stream` and hands it to the live connection, if any.
    fn push(&self, stream: u64, data: Arc<str>) -> Arc<str> {
        Self::push_locked(&mut lock(&self.streams), stream, data, None).0
    }

    /// [`HttpSession::push`] under the streams' lock, for an event whose record is `held`:
    /// stored with the event while it waits for a GET, else given back with the event's id.
    fn push_locked(
        s: &mut Streams,
        stream: u64,
        data: Arc<str>,
        mut held: Option<Held>,
    ) -> (Arc<str>, Option<Held>) {
        let n = s.next_event;
        s.next_event += 1;
        let id = event_id(stream, n);
        let mut delivered = false;
        if let Some((_, tx)) = s.live.get(&stream) {
            delivered = tx
                .send(SseEvent {
                    id: Some(id.clone()),
                    data: data.clone(),
                })
                .is_ok();
            if !delivered {
                s.live.remove(&stream);
            }
        }
        if s.capacity > 0 && data.len() <= STORE_MAX_BYTES {
            while s.store.len() >= s.capacity || s.stored_bytes + data.len() > STORE_MAX_BYTES {
                let Some(old) = s.store.pop_front() else {
                    break;
                };
                s.stored_bytes -= old.data.len();
            }
            s.stored_bytes += data.len();
            let waiting = if delivered { None } else { held.take() };
            s.store.push_back(Stored {
                stream,
                n,
                data,
                delivered,
                held: waiting,
            });
        }
        (id, held)
    }
}

/// Parses a `Last-Event-ID` of this server (`"<stream>-<n>"`).
pub fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, n) = id.trim().split_once('-')?;
    Some((stream.parse().ok()?, n.parse().ok()?))
}

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

/// The live sessions, by id.
#[derive(Default)]
pub struct SessionTable {
    map: Mutex<crate::fast_map::FastMap<Arc<str>, Arc<HttpSession>>>,
}

impl SessionTable {
    /// The session with this id.
    pub fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        lock(&self.map).get(id).cloned()
    }

    /// Adds a session unless the table already holds `limit`; `false` when full.
    pub fn insert(&self, session: Arc<HttpSession>, limit: usize) -> bool {
        let mut map = lock(&self.map);
        if map.len() >= limit {
            return false;
        }
        map.insert(session.core.id.clone(), session);
        true
    }

    /// Removes and returns a session.
    pub fn remove(&self, id: &str) -> Option<Arc<HttpSession>> {
        lock(&self.map).remove(id)
    }

    /// Removes and returns every session idle for longer than `idle`.
    pub fn take_idle(&self, idle: std::time::Duration) -> Vec<Arc<HttpSession>> {
        let mut map = lock(&self.map);
        let expired: Vec<Arc<str>> = map
            .iter()
            .filter(|(_, s)| s.idle_for() > idle)
            .map(|(k, _)| k.clone())
            .collect();
        expired.iter().filter_map(|k| map.remove(k)).collect()
    }

    /// Removes and returns every session.
    pub fn drain(&self) -> Vec<Arc<HttpSession>> {
        lock(&self.map).drain().map(|(_, s)| s).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::sink::Sink;
    use crate::traffic::{Recorder, TransportKind};

    fn session(capacity: usize) -> Arc<HttpSession> {
        let (tx, _rx) = mpsc::unbounded_channel::<Arc<str>>();
        let recorder = Arc::new(Recorder::new(None, None).unwrap());
        let sink = Sink::new(
            Arc::new(tx),
            crate::server::seams::Wire::bare(recorder),
            TransportKind::Http,
            "s".into(),
        );
        HttpSession::new(
            Arc::new(Session::new("s".into(), TransportKind::Http, sink)),
            SessionKind::Streamable,
            capacity,
            Clock::Real,
        )
    }

    #[test]
    fn resumes_only_the_named_stream() {
        let s = session(100);
        let (a, mut rx_a, _) = s.open_post_stream().unwrap();
        let (b, _rx_b, _) = s.open_post_stream().unwrap();
        let first = s.push(a, "a1".into());
        s.push(b, "b1".into());
        s.push(a, "a2".into());
        assert_eq!(rx_a.try_recv().unwrap().data.as_ref(), "a1");
        drop(rx_a); // the POST connection drops
        s.push(a, "a3".into()); // undeliverable live, kept for replay
        let Attach::Attached { replay, .. } = s.attach(parse_event_id(&first)) else {
            panic!()
        };
        let data: Vec<_> = replay.iter().map(|e| e.data.to_string()).collect();
        assert_eq!(data, ["a2", "a3"]);
        assert!(replay
            .iter()
            .all(|e| e.id.as_deref().unwrap().starts_with(&format!("{a}-"))));
    }

    #[test]
    fn standalone_is_exclusive_and_gets_undelivered_events() {
        let s = session(100);
        s.push(STANDALONE, "early".into());
        let Attach::Attached {
            replay,
            conn,
            rx: _live,
        } = s.attach(None)
        else {
            panic!()
        };
        assert_eq!(replay.len(), 1);
        assert!(matches!(s.attach(None), Attach::Busy));
        s.detach(STANDALONE, conn);
        let Attach::Attached { replay, .. } = s.attach(None) else {
            panic!()
        };
        assert!(replay.is_empty(), "already delivered");
        assert!(matches!(s.attach(Some((99, 0))), Attach::Unknown));
    }

    #[test]
    fn the_store_is_bounded() {
        let s = session(3);
        for i in 0..10 {
            s.push(STANDALONE, format!("{i}").into());
        }
        let Attach::Attached { replay, .. } = s.attach(Some((STANDALONE, 0))) else {
            panic!()
        };
        let data: Vec<_> = replay.iter().map(|e| e.data.to_string()).collect();
        assert_eq!(data, ["7", "8", "9"]);
    }

    #[test]
    fn answered_streams_end_after_replay_and_ended_sessions_refuse() {
        let s = session(2);
        let (a, _rx, priming) = s.open_post_stream().unwrap();
        s.push(a, "result".into());
        s.finish_stream(a);
        for _ in 0..20 {
            let (b, _rx, _) = s.open_post_stream().unwrap();
            s.finish_stream(b);
        }
        let Attach::Attached { mut rx, .. } = s.attach(parse_event_id(&priming)) else {
            panic!()
        };
        assert!(
            rx.try_recv().is_err() && rx.is_closed(),
            "ends after the (evicted) replay"
        );
        s.end_streams();
        assert!(matches!(s.attach(None), Attach::Unknown));
        assert!(s.open_post_stream().is_none());
    }

    #[test]
    fn the_store_is_bounded_in_bytes_too() {
        let s = session(1000);
        let big: Arc<str> = "x".repeat(STORE_MAX_BYTES / 2 + 1).into();
        s.push(STANDALONE, big.clone());
        s.push(STANDALONE, big);
        assert_eq!(lock(&s.streams).store.len(), 1);
        s.push(STANDALONE, "y".repeat(STORE_MAX_BYTES + 1).into());
        assert!(lock(&s.streams).stored_bytes <= STORE_MAX_BYTES);
    }

    #[test]
    fn a_standalone_event_is_recorded_when_a_get_takes_it() {
        use crate::jsonrpc::Message;
        use crate::traffic::{FrameMeta, FrameSummary, Kind};
        let recorder = Arc::new(Recorder::new(None, None).unwrap());
        let s = Arc::new_cyclic(|weak| {
            let outlet = StreamOutlet {
                session: weak.clone(),
                stream: STANDALONE,
                holds: true,
            };
            let sink = Sink::new(
                Arc::new(outlet),
                crate::server::seams::Wire::bare(recorder.clone()),
                TransportKind::Http,
                "s".into(),
            );
            HttpSession::new_inner(
                Arc::new(Session::new("s".into(), TransportKind::Http, sink)),
                SessionKind::Streamable,
                100,
                Clock::Real,
            )
        });
        let note = |m: &str| Message::notification(m, None);
        assert!(s.core.sink.send(&note("early")));
        assert_eq!(recorder.len(), 0, "nothing reached the wire yet");
        let Attach::Attached { replay, mut rx, .. } = s.attach(None) else {
            panic!()
        };
        // Sent while the GET attaches: on the wire after the replay, recorded after the GET.
        assert!(s.core.sink.send(&note("meanwhile")));
        assert_eq!(recorder.len(), 0);
        let get = FrameMeta::inbound(TransportKind::Http, "s".into());
        let parsed = FrameSummary::http_exchange(None);
        recorder.record(&get, "", parsed);
        s.record_held();
        assert!(s.core.sink.send(&note("live")));
        let mut wire: Vec<Arc<str>> = replay.iter().map(|e| e.data.clone()).collect();
        while let Ok(e) = rx.try_recv() {
            wire.push(e.data);
        }
        let tape = recorder.since(0);
        assert_eq!(tape[0].kind, Kind::Http);
        let sent: Vec<Arc<str>> = tape[1..].iter().map(|r| r.raw.text.clone()).collect();
        assert_eq!(sent, wire);
        let ids: Vec<_> = tape[1..]
            .iter()
            .map(|r| r.event_id.as_deref().unwrap().to_string())
            .collect();
        assert_eq!(ids, ["0-1", "0-2", "0-3"]);
        assert!(tape[1..]
            .iter()
            .all(|r| r.stream.as_deref() == Some("0") && r.error.is_none()));
    }
}

//! HTTP sessions: the table of live `Mcp-Session-Id`s (and legacy SSE session ids), and per
//! session its SSE streams with a bounded event store for resumption.
//!
//! Stream `0` is the session's standalone (GET) stream; every POST that carries requests gets a
//! new stream `1, 2, …`. An event id is `"<stream>-<n>"` with `n` counting all events of the
//! session, so ids are unique per session and name their stream: a GET with `Last-Event-ID`
//! replays only that stream's later events.

use crate::server::session::Session;
use crate::server::sink::{Outlet, Undeliverable};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Instant;
use tokio::sync::mpsc;

/// The standalone stream's id.
pub const STANDALONE: u64 = 0;

/// What a live SSE response receives.
#[derive(Debug, Clone)]
pub struct Event {
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
    live: HashMap<u64, (u64, mpsc::UnboundedSender<Event>)>,
    /// POST streams whose request was answered (a resumed GET on them ends after replay).
    finished: Vec<u64>,
    /// Numbers live connections.
    next_conn: u64,
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
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The result of asking for a stream's live connection.
pub enum Attach {
    /// Connected: replayed events first, then live ones on the receiver.
    Attached {
        /// Events to send first.
        replay: Vec<Event>,
        /// Live events; ends when the stream finishes or the session ends.
        rx: mpsc::UnboundedReceiver<Event>,
        /// Identifies this connection for [`HttpSession::detach`].
        conn: u64,
    },
    /// The stream already has a live connection (409).
    Busy,
    /// No such stream in this session (or its events are gone).
    Unknown,
}

impl HttpSession {
    /// A session whose event store keeps at most `capacity` events.
    pub fn new(core: Arc<Session>, kind: SessionKind, capacity: usize) -> Arc<Self> {
        Arc::new(Self::new_inner(core, kind, capacity))
    }

    /// The same, unwrapped (for `Arc::new_cyclic`, when the session's own outlet needs it).
    pub fn new_inner(core: Arc<Session>, kind: SessionKind, capacity: usize) -> Self {
        Self {
            core,
            kind,
            streams: Mutex::new(Streams {
                next_stream: 1,
                next_event: 1,
                store: VecDeque::new(),
                capacity,
                live: HashMap::new(),
                finished: Vec::new(),
                next_conn: 0,
            }),
            last_active: Mutex::new(Instant::now()),
        }
    }

    /// Marks the session as used now.
    pub fn touch(&self) {
        *lock(&self.last_active) = Instant::now();
    }

    /// How long the session has been idle; a live standalone stream counts as activity.
    pub fn idle_for(&self) -> std::time::Duration {
        if lock(&self.streams).live.contains_key(&STANDALONE) {
            return std::time::Duration::ZERO;
        }
        lock(&self.last_active).elapsed()
    }

    /// Opens a new POST stream with a live connection; returns its id, the receiver, and the
    /// id of a priming event (reserved, never replayed).
    pub fn open_post_stream(&self) -> (u64, mpsc::UnboundedReceiver<Event>, Arc<str>) {
        let mut s = lock(&self.streams);
        let stream = s.next_stream;
        s.next_stream += 1;
        let (tx, rx) = mpsc::unbounded_channel();
        let conn = s.next_conn;
        s.next_conn += 1;
        s.live.insert(stream, (conn, tx));
        let n = s.next_event;
        s.next_event += 1;
        (stream, rx, format!("{stream}-{n}").into())
    }

    /// The request of POST stream `stream` was answered (or cancelled): its connection ends
    /// once the events already sent are read, and a later resume ends after replay.
    pub fn finish_stream(&self, stream: u64) {
        let mut s = lock(&self.streams);
        s.live.remove(&stream);
        s.finished.push(stream);
        // Keep the list bounded like the store: only streams with stored events matter.
        if s.finished.len() > s.capacity.max(16) {
            let oldest_kept = s.store.front().map_or(u64::MAX, |e| e.stream);
            s.finished.retain(|&f| f >= oldest_kept);
        }
    }

    /// Connects a GET: to the standalone stream (`resume` `None`), or resuming the stream of
    /// the event `resume` names, after that event.
    pub fn attach(&self, resume: Option<(u64, u64)>) -> Attach {
        let mut s = lock(&self.streams);
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
        let replay: Vec<Event> = s
            .store
            .iter_mut()
            .filter(|e| e.stream == stream && e.n > after && (!fresh_standalone || !e.delivered))
            .map(|e| {
                e.delivered = true;
                Event {
                    id: Some(format!("{}-{}", e.stream, e.n).into()),
                    data: e.data.clone(),
                }
            })
            .collect();
        let (tx, rx) = mpsc::unbounded_channel();
        let conn = s.next_conn;
        s.next_conn += 1;
        if stream == STANDALONE || !s.finished.contains(&stream) {
            s.live.insert(stream, (conn, tx));
        } else {
            s.live.remove(&stream);
        }
        // A finished stream: `tx` is dropped here, so the connection ends after the replay.
        Attach::Attached { replay, rx, conn }
    }

    /// A connection went away: its stream has no live receiver until the next attach.
    pub fn detach(&self, stream: u64, conn: u64) {
        let mut s = lock(&self.streams);
        if s.live.get(&stream).is_some_and(|(c, _)| *c == conn) {
            s.live.remove(&stream);
        }
    }

    /// Ends every live connection (DELETE, expiry, shutdown).
    pub fn end_streams(&self) {
        let mut s = lock(&self.streams);
        s.live.clear();
        s.store.clear();
    }

    /// Whether the standalone stream has a live connection.
    pub fn standalone_connected(&self) -> bool {
        lock(&self.streams).live.contains_key(&STANDALONE)
    }

    /// Stores an event of `stream` and hands it to the live connection, if any.
    fn push(&self, stream: u64, data: Arc<str>) -> Arc<str> {
        let mut s = lock(&self.streams);
        let n = s.next_event;
        s.next_event += 1;
        let id: Arc<str> = format!("{stream}-{n}").into();
        let mut delivered = false;
        if let Some((_, tx)) = s.live.get(&stream) {
            delivered = tx
                .send(Event {
                    id: Some(id.clone()),
                    data: data.clone(),
                })
                .is_ok();
            if !delivered {
                s.live.remove(&stream);
            }
        }
        if s.capacity > 0 {
            if s.store.len() >= s.capacity {
                s.store.pop_front();
            }
            s.store.push_back(Stored {
                stream,
                n,
                data,
                delivered,
            });
        }
        id
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
}

impl Outlet for StreamOutlet {
    fn deliver(&self, frame: Arc<str>) -> Result<Option<Arc<str>>, Undeliverable> {
        let session = self.session.upgrade().ok_or(Undeliverable)?;
        Ok(Some(session.push(self.stream, frame)))
    }
}

/// The live sessions, by id.
#[derive(Default)]
pub struct SessionTable {
    map: Mutex<HashMap<Arc<str>, Arc<HttpSession>>>,
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

    /// How many sessions are live.
    pub fn len(&self) -> usize {
        lock(&self.map).len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
            recorder,
            TransportKind::Http,
            "s".into(),
            None,
        );
        HttpSession::new(
            Arc::new(Session::new("s".into(), TransportKind::Http, sink)),
            SessionKind::Streamable,
            capacity,
        )
    }

    #[test]
    fn resumes_only_the_named_stream() {
        let s = session(100);
        let (a, mut rx_a, _) = s.open_post_stream();
        let (b, _rx_b, _) = s.open_post_stream();
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
}

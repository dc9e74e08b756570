//! The traffic recorder: every frame in and out, in order, with its exact text, what it parsed
//! to, and timing. Records live in memory (for Python's `server.traffic`) and, with
//! `--record FILE`, are appended to a JSON-lines file one complete line per `write`, so a
//! SIGTERM or a crashing handler cannot lose a frame that was already seen.
//!
//! The format is documented (and versioned) in `docs/traffic-format.md`.

use crate::jsonrpc::{Message, RequestId};
use crate::protocol::methods::{ClientRequest, NotificationMethod};
use crate::protocol::{Era, Revision};
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The version of the record format written in every record's `v` field.
pub const FORMAT_VERSION: u32 = 2;

/// Bytes of a frame over the size limit that are kept for its record (the rest is dropped,
/// and the record says so). Transports keep this many bytes of such frames.
pub const OVERSIZED_PREFIX: usize = 1024;

/// Which way a frame travelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Client → server.
    In,
    /// Server → client.
    Out,
}

/// The transport a frame used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    /// Newline-delimited JSON on stdin/stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
    /// Legacy HTTP+SSE.
    Sse,
    /// An in-process connection (tests, relays).
    Memory,
}

/// What a frame was, once parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A request (has `method` and `id`).
    Request,
    /// A notification (has `method`, no `id`).
    Notification,
    /// A success response.
    Response,
    /// An error response.
    Error,
    /// A JSON array of messages (2025-03-26 only).
    Batch,
    /// Not a JSON-RPC message: not JSON, or JSON of the wrong shape.
    Invalid,
    /// An HTTP exchange without a JSON-RPC frame of its own (a GET stream opened, a DELETE,
    /// a request refused before its body was read as JSON-RPC).
    Http,
}

/// Where a frame came from or went to; the parts of a record the transport knows.
#[derive(Debug, Clone)]
pub struct FrameMeta {
    /// Which way it went.
    pub dir: Direction,
    /// Which transport carried it.
    pub transport: TransportKind,
    /// The connection (stdio, memory) or session (HTTP) it belongs to.
    pub conn: Arc<str>,
    /// The SSE stream it travelled on, where there is one.
    pub stream: Option<Arc<str>>,
    /// HTTP method, path, status and the MCP-relevant headers, for HTTP frames. Shared: a
    /// stream's sink stamps the same metadata on every frame it records.
    pub http: Option<Arc<HttpMeta>>,
    /// The era the frame belongs to, where the sender knows it (a stateless request's sink;
    /// an incoming frame read by the dispatcher); otherwise the recorder works it out.
    pub era: Option<Era>,
    /// The revision the frame belongs to, likewise.
    pub revision: Option<Revision>,
}

impl FrameMeta {
    /// The same frame description, tagged with `revision` (and its era).
    pub fn with_revision(mut self, revision: Option<Revision>) -> Self {
        self.revision = revision;
        self.era = revision.map(Era::of).or(self.era);
        self
    }
}

/// The `http` field of a record: what the HTTP exchange looked like. A plain struct rather than
/// a JSON value, and all of it in two allocations, because one is built for every HTTP request
/// while the tape is on.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HttpMeta {
    /// The request's method (absent on outgoing frames).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<Cow<'static, str>>,
    /// The request's path (absent on outgoing frames).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<Cow<'static, str>>,
    /// The status answered.
    pub status: u16,
    /// The MCP-relevant request headers (absent on outgoing frames).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headers: Option<RecordedHeaders>,
}

impl HttpMeta {
    /// The metadata of an answer: only its status.
    pub fn status(status: u16) -> Self {
        Self {
            status,
            ..Self::default()
        }
    }
}

/// Request headers as a record keeps them: the values end to end in one string, each name
/// with where its value ends. Written as a JSON object, in the order they were added.
#[derive(Debug, Clone, Default)]
pub struct RecordedHeaders {
    /// The values, concatenated.
    text: String,
    /// (name, end of its value in `text`); the first `len` are used.
    spans: [(&'static str, u32); RecordedHeaders::MAX],
    /// How many headers are kept.
    len: u8,
}

impl RecordedHeaders {
    /// Most headers kept (the transports record six).
    pub const MAX: usize = 8;

    /// Empty, with room for `bytes` of values.
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            text: String::with_capacity(bytes),
            ..Self::default()
        }
    }

    /// Adds a header (ignored beyond [`Self::MAX`]).
    pub fn push(&mut self, name: &'static str, value: &str) {
        let n = usize::from(self.len);
        if n < Self::MAX {
            self.text.push_str(value);
            self.spans[n] = (name, u32::try_from(self.text.len()).unwrap_or(u32::MAX));
            self.len += 1;
        }
    }

    /// The headers, in the order added.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &str)> + '_ {
        let mut start = 0;
        self.spans[..usize::from(self.len)]
            .iter()
            .map(move |&(name, end)| {
                let end = end as usize;
                let value = self.text.get(start..end).unwrap_or("");
                start = end;
                (name, value)
            })
    }
}

impl Serialize for RecordedHeaders {
    fn serialize<S: serde::Serializer>(&self, out: S) -> Result<S::Ok, S::Error> {
        out.collect_map(self.iter())
    }
}

/// What the engine made of a frame; given by the caller, who parsed it anyway. (The parsed
/// JSON itself is not kept: a record's `msg` is parsed from `raw` when the record is read.)
#[derive(Debug, Clone)]
pub struct Parsed {
    /// Whether the recorded text is the frame exactly, so a reader may parse `msg` from it:
    /// false when invalid UTF-8 was replaced or the frame was cut (then `msg` is null).
    pub exact: bool,
    /// Why the frame is invalid, if it is.
    pub error: Option<String>,
    /// The kind of message.
    pub kind: Kind,
    /// The method (for responses: of the request they answer, filled in by the recorder).
    /// Shared, because the recorder keeps it until the response comes.
    pub method: Option<Arc<str>>,
    /// The request id, for requests and responses.
    pub id: Option<RequestId>,
}

impl Parsed {
    /// The view of a valid message.
    pub fn of_message(message: &Message) -> Self {
        let kind = match message {
            Message::Request(_) => Kind::Request,
            Message::Notification(_) => Kind::Notification,
            Message::Response { .. } => Kind::Response,
            Message::Error { .. } => Kind::Error,
        };
        Self {
            exact: true,
            error: None,
            kind,
            method: message.method().map(method_name),
            id: message.id().cloned(),
        }
    }
}

/// A method name as a record holds it: one shared allocation per MCP method
/// ([`crate::protocol::methods`]) for the whole process, a fresh one for any other name.
pub fn method_name(name: &str) -> Arc<str> {
    static SHARED: std::sync::LazyLock<crate::fast_map::FastMap<&'static str, Arc<str>>> =
        std::sync::LazyLock::new(|| {
            crate::protocol::methods::all()
                .map(|m| (m, Arc::from(m)))
                .collect()
        });
    SHARED.get(name).cloned().unwrap_or_else(|| Arc::from(name))
}

/// One recorded frame. Field meanings are in `docs/traffic-format.md`. Written by a
/// hand-made [`Serialize`]: `msg` and `task` are worked out from `raw` as the record is written
/// or read, never on the request path.
#[derive(Debug, Clone)]
pub struct Record {
    /// Format version ([`FORMAT_VERSION`]).
    pub v: u32,
    /// Position in the recording, from 1, without gaps.
    pub seq: u64,
    /// Wall-clock time; written as RFC 3339 with microseconds, UTC (formatted only when a
    /// record is read or written to a file, not on the hot path). It is the wall clock at the
    /// recorder's start plus `t_ns`: one clock read per frame, and never backwards along `seq`.
    pub ts: chrono::DateTime<chrono::Utc>,
    /// Monotonic nanoseconds since the recorder started (for durations).
    pub t_ns: u64,
    /// `in` (client → server) or `out`.
    pub dir: Direction,
    /// The transport.
    pub transport: TransportKind,
    /// Connection or session id.
    pub conn: Arc<str>,
    /// SSE stream id, or null.
    pub stream: Option<Arc<str>>,
    /// The SSE event id an outgoing frame was sent under (resumable streams), or null.
    pub event_id: Option<Arc<str>>,
    /// HTTP metadata, or null.
    pub http: Option<Arc<HttpMeta>>,
    /// The exact frame text (invalid UTF-8 replaced with U+FFFD), written as `raw` and, parsed,
    /// as `msg` (null when it is not JSON).
    pub raw: RawFrame,
    /// Why the frame was invalid, or null.
    pub error: Option<String>,
    /// What the frame was.
    pub kind: Kind,
    /// The method; for responses, the method of the request answered.
    pub method: Option<Arc<str>>,
    /// The id, for requests and responses.
    pub id: Option<RequestId>,
    /// For responses: milliseconds since the request they answer was recorded.
    pub latency_ms: Option<f64>,
    /// `handshake` or `stateless`: the era of the exchange this frame is part of, or null when
    /// it is not known (a frame before `initialize`, an unparseable frame).
    pub era: Option<Era>,
    /// The protocol revision of that exchange (a stateless request's envelope, a session's
    /// negotiated revision; a response's is its request's), or null.
    pub revision: Option<Revision>,
    /// The task a `tasks/*` request names (`params.taskId`), kept so its answer, which may not
    /// name it (`tasks/update`'s empty result, an error), is marked too. Other frames' `task` is
    /// read from the frame when the record is written ([`task_of`]).
    pub task: Option<Arc<str>>,
}

/// A request awaiting its response: (connection, direction of the request, id).
type OpenKey = (Arc<str>, Direction, RequestId);

/// The shared recorder. Cheap to call from any thread; one lock per frame.
pub struct Recorder {
    /// Zero point of `t_ns`.
    start: Instant,
    /// The wall clock at `start`: a record's `ts` is this plus its `t_ns`.
    wall_start: chrono::DateTime<chrono::Utc>,
    /// Most records kept in memory (oldest dropped first); `None` keeps all. The file, if any,
    /// always gets every record.
    keep: Option<usize>,
    /// Whether records are kept anywhere (memory or file). When not (the CLI without
    /// `--record`), frames only get a `seq`: the per-frame cost of a record is not paid for
    /// nothing, and transports skip gathering HTTP metadata ([`Recorder::capturing`]).
    capturing: bool,
    /// Everything behind one lock so `seq` order, memory order, file order and (for outgoing
    /// frames) the order frames are handed to the transport all agree.
    inner: Mutex<Inner>,
    /// Wakes waiters (`wait_beyond`) when a frame is recorded. Only sent to while someone
    /// subscribes: with nobody waiting, a frame does not pay for the notification.
    latest: tokio::sync::watch::Sender<u64>,
}

struct Inner {
    /// The last `seq` given out.
    seq: u64,
    /// The records in memory; `records[i].seq == dropped + i + 1`. Pointers, so that the
    /// work under the lock stays in memory that is hot: a record is allocated before the lock
    /// is taken and freed after it is released. (Held by value instead, the ring's cold slots
    /// were written and read under the lock, and contention grew.)
    records: VecDeque<Arc<Record>>,
    /// How many records were dropped from the front (by `clear` or the `keep` limit).
    dropped: u64,
    /// The `--record` file.
    file: Option<File>,
    /// Requests awaiting a response, keyed by (connection, direction of the request, id):
    /// gives responses their `method`, `latency_ms`, era and revision. Entries of cancelled
    /// requests and of closed connections are removed so this cannot grow without bound.
    open: crate::fast_map::FastMap<OpenKey, Opened>,
    /// The revision each handshake-era connection negotiated (from its `initialize` answer):
    /// gives the frames its sink sends (notifications, server requests) their era and
    /// revision. Removed with the connection ([`Recorder::forget_conn`]).
    negotiated: crate::fast_map::FastMap<Arc<str>, Revision>,
}

/// What the recorder keeps of a request until it is answered.
struct Opened {
    /// When it was recorded (`t_ns`).
    t_ns: u64,
    /// Its method.
    method: Arc<str>,
    /// Its era, if known.
    era: Option<Era>,
    /// Its revision, if known.
    revision: Option<Revision>,
    /// The task it names (`tasks/*` requests), if any.
    task: Option<Arc<str>>,
}

/// A record built outside the recorder's lock; [`Recorder::commit`] fills in its place.
struct Draft {
    /// The record, `seq`/`ts`/`t_ns` still unset; already in the `Arc` it is kept in (not
    /// shared until committed).
    record: Arc<Record>,
    /// What it does to the requests awaiting a response.
    open: OpenStep,
}

/// A frame's effect on the requests awaiting a response.
enum OpenStep {
    /// A request: awaits its response from now.
    Start(OpenKey),
    /// A response or error: answers this request (gets its method and latency).
    Finish(OpenKey),
    /// `notifications/cancelled`: this request will never be answered.
    Forget(OpenKey),
    /// Anything else.
    Nothing,
}

impl Draft {
    fn new(meta: &FrameMeta, raw: Arc<str>, parsed: Parsed) -> Self {
        let open = match (&parsed.id, parsed.kind) {
            (Some(id), Kind::Request) => OpenStep::Start((meta.conn.clone(), meta.dir, id.clone())),
            (Some(id), Kind::Response | Kind::Error) => {
                OpenStep::Finish((meta.conn.clone(), meta.dir.reverse(), id.clone()))
            }
            (None, Kind::Notification)
                if parsed.method.as_deref() == Some(NotificationMethod::Cancelled.as_str()) =>
            {
                serde_json::from_str::<Value>(&raw)
                    .ok()
                    .and_then(|m| {
                        m.pointer("/params/requestId")
                            .and_then(RequestId::from_value)
                    })
                    .map_or(OpenStep::Nothing, |id| {
                        OpenStep::Forget((meta.conn.clone(), meta.dir, id))
                    })
            }
            _ => OpenStep::Nothing,
        };
        // Only `tasks/*` requests and server → client requests are parsed here (both rare;
        // every other frame pays a prefix check): their answers, which need not name the task
        // (`tasks/update`'s empty result, an error, the client's elicitation answer), are
        // marked with the task they belong to.
        let task = match (parsed.kind, parsed.method.as_deref()) {
            (Kind::Request, Some(m)) if m.starts_with("tasks/") || meta.dir == Direction::Out => {
                serde_json::from_str::<Value>(&raw)
                    .ok()
                    .and_then(|v| task_of(Kind::Request, Some(m), &v).map(Arc::from))
            }
            _ => None,
        };
        let record = Arc::new(Record {
            v: FORMAT_VERSION,
            seq: 0,
            ts: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
            t_ns: 0,
            dir: meta.dir,
            transport: meta.transport,
            conn: meta.conn.clone(),
            stream: meta.stream.clone(),
            event_id: None,
            http: meta.http.clone(),
            raw: RawFrame {
                text: raw,
                exact: parsed.exact,
            },
            error: parsed.error,
            kind: parsed.kind,
            method: parsed.method,
            id: parsed.id,
            latency_ms: None,
            era: meta.era,
            revision: meta.revision,
            task,
        });
        Self { record, open }
    }
}

impl Recorder {
    /// A recorder that keeps at most `keep` records in memory (`None`: all) and, if `path` is
    /// given, appends every record to it.
    pub fn new(path: Option<&Path>, keep: Option<usize>) -> std::io::Result<Self> {
        let file = match path {
            Some(p) => Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)?,
            ),
            None => None,
        };
        Ok(Self {
            start: Instant::now(),
            wall_start: chrono::Utc::now(),
            latest: tokio::sync::watch::Sender::new(0),
            capturing: keep != Some(0) || file.is_some(),
            keep,
            inner: Mutex::new(Inner {
                seq: 0,
                records: VecDeque::new(),
                dropped: 0,
                file,
                open: Default::default(),
                negotiated: Default::default(),
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether records are kept in memory or written to a file; when not, callers may skip
    /// gathering what only a record would hold.
    pub fn capturing(&self) -> bool {
        self.capturing
    }

    /// Records one frame and returns its sequence number.
    pub fn record(&self, meta: &FrameMeta, raw: impl Into<Arc<str>>, parsed: Parsed) -> u64 {
        self.keep(meta, raw, parsed, || {
            Ok::<_, std::convert::Infallible>(None)
        })
        .0
    }

    /// Records an outgoing frame and runs `deliver` (which hands it to the transport) under the
    /// same lock, so the recorded order is the order frames reach the transport. A frame that
    /// could not be delivered (`deliver` returned `false`) is recorded with an `error` saying so.
    /// With nothing capturing there is no order to keep and the lock is not taken.
    pub fn record_and_deliver<E>(
        &self,
        meta: &FrameMeta,
        raw: Arc<str>,
        parsed: Parsed,
        deliver: impl FnOnce() -> Result<Option<Arc<str>>, E>,
    ) -> bool {
        self.keep(meta, raw, parsed, deliver).1
    }

    /// Both of the above: runs `deliver` and records the frame (with the SSE event id it got,
    /// or the failure) in one step under the lock; returns its `seq` and whether it was
    /// delivered. The frame text becomes an `Arc` only when something captures.
    fn keep<E>(
        &self,
        meta: &FrameMeta,
        raw: impl Into<Arc<str>>,
        parsed: Parsed,
        deliver: impl FnOnce() -> Result<Option<Arc<str>>, E>,
    ) -> (u64, bool) {
        if !self.capturing {
            let delivered = deliver().is_ok();
            return (self.count_only(), delivered);
        }
        // Everything that does not decide the order is built before the lock is taken.
        let draft = Draft::new(meta, raw.into(), parsed);
        let mut inner = self.lock();
        let delivered = deliver().map_err(|_| ());
        let ok = delivered.is_ok();
        let (seq, evicted) = self.commit(&mut inner, draft, delivered);
        drop(inner);
        drop(evicted); // freeing the oldest record need not hold the lock
        (seq, ok)
    }

    /// A frame seen while nothing captures: it only takes a `seq`.
    fn count_only(&self) -> u64 {
        let mut inner = self.lock();
        inner.seq += 1;
        inner.dropped += 1;
        self.announce(inner.seq);
        inner.seq
    }

    /// Tells waiters that `seq` was recorded; called under the lock. Skipped while nobody
    /// subscribes: a waiter subscribes before it reads `seq` under the lock, so it either is
    /// counted here or reads this `seq` itself ([`Recorder::wait_beyond`]).
    fn announce(&self, seq: u64) {
        if self.latest.receiver_count() > 0 {
            self.latest.send_replace(seq);
        }
    }

    /// Gives `draft` its place (`seq`, timestamps, the request it answers) and what its
    /// delivery gave (the SSE event id, or the failure), and keeps it; returns its `seq` and
    /// the record that fell off the front, for the caller to free after unlocking.
    fn commit(
        &self,
        inner: &mut Inner,
        mut draft: Draft,
        delivered: Result<Option<Arc<str>>, ()>,
    ) -> (u64, Option<Arc<Record>>) {
        // The time is taken under the lock so that `t_ns` never decreases along `seq`.
        let t_ns = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        inner.seq += 1;
        let seq = inner.seq;
        // Not shared yet: `Draft::new` made the only reference.
        if let Some(record) = Arc::get_mut(&mut draft.record) {
            record.seq = seq;
            record.ts = self.wall_start + chrono::TimeDelta::nanoseconds(t_ns as i64);
            record.t_ns = t_ns;
            match delivered {
                Ok(id) => record.event_id = id,
                Err(()) => {
                    record.error = Some("not delivered: the connection is closed".into());
                }
            }
            match draft.open {
                OpenStep::Start(key) => {
                    let method = record.method.clone().unwrap_or_else(|| "".into());
                    let opened = Opened {
                        t_ns,
                        method,
                        era: record.era,
                        revision: record.revision,
                        task: record.task.clone(),
                    };
                    inner.open.insert(key, opened);
                }
                OpenStep::Finish(key) => {
                    if let Some(opened) = inner.open.remove(&key) {
                        record.latency_ms = Some(t_ns.saturating_sub(opened.t_ns) as f64 / 1e6);
                        record.method = Some(opened.method);
                        record.era = record.era.or(opened.era);
                        record.revision = record.revision.or(opened.revision);
                        record.task = record.task.take().or(opened.task);
                    }
                }
                OpenStep::Forget(key) => {
                    inner.open.remove(&key);
                }
                OpenStep::Nothing => {}
            }
            Self::settle_revision(inner, record);
        }
        let record = draft.record;
        if let Some(file) = inner.file.as_mut() {
            let mut line = serde_json::to_vec(&*record).unwrap_or_default();
            line.push(b'\n');
            if let Err(e) = file.write_all(&line) {
                tracing::error!("traffic record file: write failed, recording to it stops: {e}");
                inner.file = None;
            }
        }
        self.announce(seq);
        if self.keep != Some(0) {
            inner.records.push_back(record);
        } else {
            inner.dropped += 1;
        }
        let mut evicted = None;
        if let Some(keep) = self.keep {
            while inner.records.len() > keep {
                evicted = inner.records.pop_front();
                inner.dropped += 1;
            }
        }
        (seq, evicted)
    }

    /// Gives a frame whose sender did not know its revision the one its connection negotiated,
    /// and learns a connection's revision from its `initialize` answer (the one frame that
    /// says it; parsed only for that method).
    fn settle_revision(inner: &mut Inner, record: &mut Record) {
        let initialize = ClientRequest::Initialize.as_str();
        if record.dir == Direction::Out
            && record.kind == Kind::Response
            && record.method.as_deref() == Some(initialize)
        {
            let agreed = serde_json::from_str::<Value>(&record.raw.text)
                .ok()
                .and_then(|m| {
                    m.pointer("/result/protocolVersion")
                        .and_then(Value::as_str)
                        .and_then(|v| v.parse::<Revision>().ok())
                });
            if let Some(revision) = agreed {
                record.revision = Some(revision);
                inner.negotiated.insert(record.conn.clone(), revision);
            }
        }
        if record.revision.is_none() {
            record.revision = inner.negotiated.get(&record.conn).copied();
        }
        if record.era.is_none() {
            record.era = record.revision.map(Era::of);
        }
    }

    /// Records a frame that was too large to keep: its first bytes and its size.
    pub fn record_oversized(
        &self,
        meta: &FrameMeta,
        prefix: &[u8],
        size: usize,
        error: String,
    ) -> u64 {
        let keep = &prefix[..prefix.len().min(OVERSIZED_PREFIX)];
        let raw = String::from_utf8_lossy(keep).into_owned();
        let error = format!("{error} (raw truncated to {} of {size} bytes)", keep.len());
        let parsed = Parsed {
            exact: false,
            error: Some(error),
            kind: Kind::Invalid,
            method: None,
            id: None,
        };
        self.record(meta, raw, parsed)
    }

    /// Resolves once a record with `seq > after` exists.
    pub async fn wait_beyond(&self, after: u64) {
        let mut rx = self.latest.subscribe();
        // `seq` is read from the recorder, not from the channel: frames recorded while nobody
        // subscribed were not announced on it.
        while self.len() <= after {
            if rx.changed().await.is_err() {
                return;
            }
        }
    }

    /// Forgets the open requests of a connection that ended (they will never be answered).
    pub fn forget_conn(&self, conn: &str) {
        let mut inner = self.lock();
        inner.open.retain(|(c, _, _), _| &**c != conn);
        inner.negotiated.remove(conn);
    }

    /// Records still in memory with `seq > after`, in order.
    pub fn since(&self, after: u64) -> Vec<Arc<Record>> {
        let inner = self.lock();
        let skip = usize::try_from(after.saturating_sub(inner.dropped)).unwrap_or(usize::MAX);
        inner.records.iter().skip(skip).cloned().collect()
    }

    /// How many frames were recorded (including those no longer in memory).
    pub fn len(&self) -> u64 {
        self.lock().seq
    }

    /// Whether nothing was recorded yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets the in-memory records (the file, if any, keeps them). `seq` keeps counting.
    pub fn clear(&self) {
        let mut inner = self.lock();
        inner.dropped += inner.records.len() as u64;
        inner.records.clear();
    }

    /// Syncs the record file's data to disk (each record is already written when it happens).
    pub fn flush(&self) {
        if let Some(f) = &self.lock().file {
            let _ = f.sync_data();
        }
    }
}

impl Direction {
    /// The other direction.
    pub fn reverse(self) -> Self {
        match self {
            Self::In => Self::Out,
            Self::Out => Self::In,
        }
    }
}

/// A record's frame text. Written as two fields: `raw`, and `msg`, the text parsed (or null).
/// Parsing when a record is read rather than keeping both halves a tape's memory and takes a
/// copy of every message off the request path.
#[derive(Debug, Clone)]
pub struct RawFrame {
    /// The frame text.
    pub text: Arc<str>,
    /// Whether `text` is the frame exactly ([`Parsed::exact`]); if not, `msg` is null.
    pub exact: bool,
}

impl RawFrame {
    /// The frame parsed (`None` when it is not exactly the frame, or not JSON).
    pub fn msg(&self) -> Option<Value> {
        self.exact
            .then(|| serde_json::from_str::<Value>(&self.text).ok())
            .flatten()
    }
}

impl Serialize for Record {
    fn serialize<S: serde::Serializer>(&self, out: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let msg = self.raw.msg();
        let task = self.task.as_deref().or_else(|| {
            msg.as_ref()
                .and_then(|m| task_of(self.kind, self.method.as_deref(), m))
        });
        let mut map = out.serialize_map(Some(20))?;
        map.serialize_entry("v", &self.v)?;
        map.serialize_entry("seq", &self.seq)?;
        map.serialize_entry("ts", &Rfc3339Micros(&self.ts))?;
        map.serialize_entry("t_ns", &self.t_ns)?;
        map.serialize_entry("dir", &self.dir)?;
        map.serialize_entry("transport", &self.transport)?;
        map.serialize_entry("conn", &*self.conn)?;
        map.serialize_entry("stream", &self.stream.as_deref())?;
        map.serialize_entry("event_id", &self.event_id.as_deref())?;
        map.serialize_entry("http", &self.http.as_deref())?;
        map.serialize_entry("raw", &*self.raw.text)?;
        map.serialize_entry("msg", &msg)?;
        map.serialize_entry("error", &self.error)?;
        map.serialize_entry("kind", &self.kind)?;
        map.serialize_entry("method", &self.method.as_deref())?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("latency_ms", &self.latency_ms)?;
        map.serialize_entry("era", &self.era)?;
        map.serialize_entry("revision", &self.revision)?;
        map.serialize_entry("task", &task)?;
        map.end()
    }
}

/// The task a frame is about (a record's `task`), read from the parsed frame: the `taskId` of
/// a `tasks/*` request or answer and of `notifications/tasks/status`; the task a
/// `CreateTaskResult` announces (the handshake era's `result.task`, the extension's flat
/// `resultType: "task"`); the related-task `_meta` of a handshake-era task's requests and of
/// its `tasks/result` answer.
pub fn task_of<'a>(kind: Kind, method: Option<&str>, msg: &'a Value) -> Option<&'a str> {
    const RELATED: &str = "/_meta/io.modelcontextprotocol~1related-task/taskId";
    debug_assert_eq!(
        RELATED.replace("~1", "/"),
        format!(
            "/_meta/{}/taskId",
            crate::protocol::capabilities::RELATED_TASK
        )
    );
    let about_tasks = method
        .is_some_and(|m| m.starts_with("tasks/") || m == NotificationMethod::TaskStatus.as_str());
    let id = match kind {
        Kind::Request | Kind::Notification => {
            let params = msg.get("params")?;
            about_tasks
                .then(|| params.get("taskId"))
                .flatten()
                .or_else(|| params.pointer(RELATED))
        }
        Kind::Response => {
            let result = msg.get("result")?;
            let created = result.get("resultType").and_then(Value::as_str) == Some("task");
            result
                .pointer("/task/taskId")
                .or_else(|| {
                    (created || about_tasks)
                        .then(|| result.get("taskId"))
                        .flatten()
                })
                .or_else(|| result.pointer(RELATED))
        }
        _ => None,
    };
    id.and_then(Value::as_str)
}

/// `ts` as written: RFC 3339, microseconds, `Z`.
struct Rfc3339Micros<'a>(&'a chrono::DateTime<chrono::Utc>);

impl Serialize for Rfc3339Micros<'_> {
    fn serialize<S: serde::Serializer>(&self, out: S) -> Result<S::Ok, S::Error> {
        out.collect_str(&self.0.format("%Y-%m-%dT%H:%M:%S%.6fZ"))
    }
}

impl Record {
    /// The record as one JSON line (no trailing newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn task_frames_name_their_task() {
        let of = |kind, method, msg: Value| task_of(kind, method, &msg).map(str::to_owned);
        let t = Some("t1".to_string());
        let related = json!({ "io.modelcontextprotocol/related-task": { "taskId": "t1" } });
        assert_eq!(
            of(
                Kind::Request,
                Some("tasks/get"),
                json!({ "params": { "taskId": "t1" } })
            ),
            t
        );
        let status = json!({ "params": { "taskId": "t1", "status": "working" } });
        assert_eq!(
            of(
                Kind::Notification,
                Some("notifications/tasks/status"),
                status
            ),
            t
        );
        let ask = json!({ "params": { "message": "?", "_meta": related } });
        assert_eq!(of(Kind::Request, Some("elicitation/create"), ask), t);
        let created = json!({ "result": { "task": { "taskId": "t1" } } });
        assert_eq!(of(Kind::Response, Some("tools/call"), created), t);
        let flat = json!({ "result": { "resultType": "task", "taskId": "t1" } });
        assert_eq!(of(Kind::Response, Some("tools/call"), flat), t);
        let result = json!({ "result": { "content": [], "_meta": related } });
        assert_eq!(of(Kind::Response, Some("tasks/result"), result), t);
        // Not about a task: a tool's own `taskId` argument or output is not a mark.
        let args = json!({ "params": { "name": "x", "arguments": { "taskId": "t1" } } });
        assert_eq!(of(Kind::Request, Some("tools/call"), args), None);
        let output = json!({ "result": { "taskId": "t1", "content": [] } });
        assert_eq!(of(Kind::Response, Some("tools/call"), output), None);
    }

    #[test]
    fn a_tasks_request_marks_its_answer() {
        let r = Recorder::new(None, None).unwrap();
        let ask = r#"{"jsonrpc":"2.0","id":7,"method":"tasks/update","params":{"taskId":"t9","inputResponses":{}}}"#;
        let request = parsed(Kind::Request, Some("tasks/update"), Some(7));
        r.record(&meta(Direction::In), ask, request);
        let answer = r#"{"jsonrpc":"2.0","id":7,"result":{}}"#;
        r.record(
            &meta(Direction::Out),
            answer,
            parsed(Kind::Response, None, Some(7)),
        );
        let written: Vec<Value> = r
            .since(0)
            .iter()
            .map(|rec| serde_json::from_str(&rec.to_json()).unwrap())
            .collect();
        assert_eq!(written[0]["task"], "t9");
        assert_eq!(written[1]["task"], "t9");
        assert_eq!(written[1]["method"], "tasks/update");
    }

    fn meta(dir: Direction) -> FrameMeta {
        FrameMeta {
            dir,
            transport: TransportKind::Stdio,
            conn: "c1".into(),
            stream: None,
            http: None,
            era: None,
            revision: None,
        }
    }

    #[test]
    fn responses_get_method_and_latency_of_their_request() {
        let r = Recorder::new(None, None).unwrap();
        let req = Parsed {
            exact: true,
            error: None,
            kind: Kind::Request,
            method: Some("tools/list".into()),
            id: Some(1.into()),
        };
        r.record(&meta(Direction::In), "{}", req);
        let resp = Parsed {
            exact: true,
            error: None,
            kind: Kind::Response,
            method: None,
            id: Some(1.into()),
        };
        r.record(&meta(Direction::Out), "{}", resp);
        let recs = r.since(0);
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].method.as_deref(), Some("tools/list"));
        assert!(recs[1].latency_ms.is_some());
        assert_eq!(r.since(1).len(), 1);
        let line: Value = serde_json::from_str(&recs[1].to_json()).unwrap();
        assert_eq!(line["seq"], 2);
        assert_eq!(line["dir"], "out");
        assert_eq!(line["kind"], "response");
        assert_eq!(line["stream"], Value::Null);
    }

    fn parsed(kind: Kind, method: Option<&str>, id: Option<i64>) -> Parsed {
        Parsed {
            exact: true,
            error: None,
            kind,
            method: method.map(Into::into),
            id: id.map(Into::into),
        }
    }

    #[test]
    fn frames_carry_the_era_and_revision_of_their_exchange() {
        let r = Recorder::new(None, None).unwrap();
        // A stateless request tagged by its envelope; its answer inherits the tag.
        let tagged = meta(Direction::In).with_revision(Some(Revision::V2026_07_28));
        r.record(
            &tagged,
            "{}",
            parsed(Kind::Request, Some("tools/list"), Some(1)),
        );
        r.record(
            &meta(Direction::Out),
            "{}",
            parsed(Kind::Response, None, Some(1)),
        );
        // A handshake connection learns its revision from the initialize answer; its later
        // untagged frames (a notification the session sends) get it.
        let mut other = meta(Direction::In);
        other.conn = "c2".into();
        let init = other.clone().with_revision(Some(Revision::V2025_06_18));
        r.record(
            &init,
            "{}",
            parsed(Kind::Request, Some("initialize"), Some(0)),
        );
        other.dir = Direction::Out;
        let answer = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}"#;
        r.record(&other, answer, parsed(Kind::Response, None, Some(0)));
        r.record(
            &other,
            "{}",
            parsed(Kind::Notification, Some("notifications/message"), None),
        );
        // Nothing known: null.
        r.record(&meta(Direction::In), "x", parsed(Kind::Invalid, None, None));
        let tags: Vec<(Option<Era>, Option<Revision>)> = r
            .since(0)
            .iter()
            .map(|rec| (rec.era, rec.revision))
            .collect();
        let stateless = (Some(Era::Stateless), Some(Revision::V2026_07_28));
        let handshake = (Some(Era::Handshake), Some(Revision::V2025_06_18));
        assert_eq!(
            tags,
            [
                stateless,
                stateless,
                handshake,
                handshake,
                handshake,
                (None, None)
            ]
        );
        let line: Value = serde_json::from_str(&r.since(0)[0].to_json()).unwrap();
        assert_eq!(
            (&line["era"], &line["revision"]),
            (&json!("stateless"), &json!("2026-07-28"))
        );
        assert_eq!(line["v"], 2);
        // A closed connection is forgotten.
        r.forget_conn("c2");
        r.record(&other, "{}", parsed(Kind::Notification, Some("x"), None));
        assert_eq!(r.since(6)[0].revision, None);
    }

    fn ping(r: &Recorder) -> u64 {
        let p = Parsed {
            exact: true,
            error: None,
            kind: Kind::Notification,
            method: Some("x".into()),
            id: None,
        };
        r.record(&meta(Direction::In), "{}", p)
    }

    #[test]
    fn since_counts_by_seq_after_clear_and_eviction() {
        let r = Recorder::new(None, None).unwrap();
        for _ in 0..4 {
            ping(&r);
        }
        r.clear();
        ping(&r);
        ping(&r);
        assert_eq!(r.since(4).iter().map(|x| x.seq).collect::<Vec<_>>(), [5, 6]);
        assert_eq!(r.since(5).iter().map(|x| x.seq).collect::<Vec<_>>(), [6]);
        assert_eq!(r.since(0).len(), 2);
        let r = Recorder::new(None, Some(2)).unwrap();
        for _ in 0..5 {
            ping(&r);
        }
        assert_eq!(r.since(0).iter().map(|x| x.seq).collect::<Vec<_>>(), [4, 5]);
        assert_eq!(r.len(), 5);
    }

    #[test]
    fn cancelled_and_closed_requests_are_forgotten() {
        let r = Recorder::new(None, None).unwrap();
        let req = |id: i64| Parsed {
            exact: true,
            error: None,
            kind: Kind::Request,
            method: Some("m".into()),
            id: Some(id.into()),
        };
        r.record(&meta(Direction::In), "{}", req(1));
        r.record(&meta(Direction::In), "{}", req(2));
        let cancel = Parsed {
            exact: true,
            error: None,
            kind: Kind::Notification,
            method: Some("notifications/cancelled".into()),
            id: None,
        };
        let text =
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
        r.record(&meta(Direction::In), text, cancel);
        assert_eq!(r.lock().open.len(), 1);
        r.forget_conn("c1");
        assert!(r.lock().open.is_empty());
    }
}

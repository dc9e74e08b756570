//! The traffic recorder: every frame in and out, in order, with its exact text, what it parsed
//! to, and timing. Records live in memory (for Python's `server.traffic`) and, with
//! `--record FILE`, are appended to a JSON-lines file one complete line per `write`, so a
//! SIGTERM or a crashing handler cannot lose a frame that was already seen.
//!
//! The format is documented (and versioned) in `docs/traffic-format.md`.

use crate::jsonrpc::{Message, RequestId};
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The version of the record format written in every record's `v` field.
pub const FORMAT_VERSION: u32 = 1;

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
}

/// The `http` field of a record: what the HTTP exchange looked like. A plain struct rather than
/// a JSON value because one is built for every HTTP request while the tape is on.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HttpMeta {
    /// The request's method (absent on outgoing frames).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The request's path (absent on outgoing frames).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The status answered.
    pub status: u16,
    /// The MCP-relevant request headers, in a fixed order (absent on outgoing frames).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "header_map")]
    pub headers: Option<Vec<(&'static str, String)>>,
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

/// `headers` as a JSON object.
fn header_map<S: serde::Serializer>(
    headers: &Option<Vec<(&'static str, String)>>,
    out: S,
) -> Result<S::Ok, S::Error> {
    out.collect_map(headers.iter().flatten().map(|(k, v)| (*k, v)))
}

/// What the engine made of a frame; given by the caller, who parsed it anyway. (The parsed
/// JSON itself is not kept: a record's `msg` is parsed from `raw` when the record is read.)
#[derive(Debug, Clone)]
pub struct Parsed {
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
            error: None,
            kind,
            method: message.method().map(Arc::from),
            id: message.id().cloned(),
        }
    }
}

/// One recorded frame. Field meanings are in `docs/traffic-format.md`.
#[derive(Debug, Clone, Serialize)]
pub struct Record {
    /// Format version ([`FORMAT_VERSION`]).
    pub v: u32,
    /// Position in the recording, from 1, without gaps.
    pub seq: u64,
    /// Wall-clock time; written as RFC 3339 with microseconds, UTC (formatted only when a
    /// record is read or written to a file, not on the hot path).
    #[serde(serialize_with = "rfc3339_micros")]
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
    #[serde(flatten)]
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
}

/// A request awaiting its response: (connection, direction of the request, id).
type OpenKey = (Arc<str>, Direction, RequestId);

/// The shared recorder. Cheap to call from any thread; one lock per frame.
pub struct Recorder {
    /// Zero point of `t_ns`.
    start: Instant,
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
    /// The last `seq`, for waiters (`wait_beyond`).
    latest: tokio::sync::watch::Sender<u64>,
}

struct Inner {
    /// The last `seq` given out.
    seq: u64,
    /// The records in memory; `records[i].seq == dropped + i + 1`.
    records: VecDeque<Arc<Record>>,
    /// How many records were dropped from the front (by `clear` or the `keep` limit).
    dropped: u64,
    /// The `--record` file.
    file: Option<File>,
    /// Requests awaiting a response, keyed by (connection, direction of the request, id):
    /// gives responses their `method` and `latency_ms`. Entries of cancelled requests and of
    /// closed connections are removed so this cannot grow without bound.
    open: HashMap<OpenKey, (u64, Arc<str>)>,
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
            latest: tokio::sync::watch::Sender::new(0),
            capturing: keep != Some(0) || file.is_some(),
            keep,
            inner: Mutex::new(Inner {
                seq: 0,
                records: VecDeque::new(),
                dropped: 0,
                file,
                open: HashMap::new(),
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
    pub fn record(&self, meta: &FrameMeta, raw: &str, parsed: Parsed) -> u64 {
        let mut inner = self.lock();
        let (seq, evicted) = self.append(&mut inner, meta, raw.into(), parsed, None);
        drop(inner);
        drop(evicted); // freeing the oldest record need not hold the lock
        seq
    }

    /// Records an outgoing frame and runs `deliver` (which hands it to the transport) under the
    /// same lock, so the recorded order is the order frames reach the transport. A frame that
    /// could not be delivered (`deliver` returned `false`) is recorded with an `error` saying so.
    pub fn record_and_deliver<E>(
        &self,
        meta: &FrameMeta,
        raw: Arc<str>,
        mut parsed: Parsed,
        deliver: impl FnOnce() -> Result<Option<Arc<str>>, E>,
    ) -> bool {
        let mut inner = self.lock();
        let delivered = deliver();
        let event_id = match &delivered {
            Ok(id) => id.clone(),
            Err(_) => {
                parsed.error = Some("not delivered: the connection is closed".into());
                None
            }
        };
        let (_, evicted) = self.append(&mut inner, meta, raw, parsed, event_id);
        drop(inner);
        drop(evicted); // freeing the oldest record need not hold the lock
        delivered.is_ok()
    }

    fn append(
        &self,
        inner: &mut Inner,
        meta: &FrameMeta,
        raw: Arc<str>,
        parsed: Parsed,
        event_id: Option<Arc<str>>,
    ) -> (u64, Option<Arc<Record>>) {
        if !self.capturing {
            inner.seq += 1;
            inner.dropped += 1;
            self.latest.send_replace(inner.seq);
            return (inner.seq, None);
        }
        // Timestamps are taken under the lock so that `t_ns` never decreases along `seq`.
        let ts = chrono::Utc::now();
        let t_ns = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        inner.seq += 1;
        let mut method = parsed.method;
        let mut latency_ms = None;
        match (&parsed.id, parsed.kind) {
            (Some(id), Kind::Request) => {
                let key = (meta.conn.clone(), meta.dir, id.clone());
                inner
                    .open
                    .insert(key, (t_ns, method.clone().unwrap_or_else(|| "".into())));
            }
            (Some(id), Kind::Response | Kind::Error) => {
                if let Some((t0, m)) =
                    inner
                        .open
                        .remove(&(meta.conn.clone(), meta.dir.reverse(), id.clone()))
                {
                    latency_ms = Some(t_ns.saturating_sub(t0) as f64 / 1e6);
                    method = Some(m);
                }
            }
            (None, Kind::Notification) if method.as_deref() == Some("notifications/cancelled") => {
                // A cancelled request is never answered: forget it.
                let cancelled = serde_json::from_str::<Value>(&raw).ok().and_then(|m| {
                    m.pointer("/params/requestId")
                        .and_then(RequestId::from_value)
                });
                if let Some(id) = cancelled {
                    inner.open.remove(&(meta.conn.clone(), meta.dir, id));
                }
            }
            _ => {}
        }
        let record = Record {
            v: FORMAT_VERSION,
            seq: inner.seq,
            ts,
            t_ns,
            dir: meta.dir,
            transport: meta.transport,
            conn: meta.conn.clone(),
            stream: meta.stream.clone(),
            event_id,
            http: meta.http.clone(),
            raw: RawFrame(raw),
            error: parsed.error,
            kind: parsed.kind,
            method,
            id: parsed.id,
            latency_ms,
        };
        if let Some(file) = inner.file.as_mut() {
            let mut line = serde_json::to_vec(&record).unwrap_or_default();
            line.push(b'\n');
            if let Err(e) = file.write_all(&line) {
                tracing::error!("traffic record file: write failed, recording to it stops: {e}");
                inner.file = None;
            }
        }
        let seq = record.seq;
        self.latest.send_replace(seq);
        if self.keep != Some(0) {
            inner.records.push_back(Arc::new(record));
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
            error: Some(error),
            kind: Kind::Invalid,
            method: None,
            id: None,
        };
        self.record(meta, &raw, parsed)
    }

    /// Resolves once a record with `seq > after` exists.
    pub async fn wait_beyond(&self, after: u64) {
        let mut rx = self.latest.subscribe();
        let _ = rx.wait_for(|latest| *latest > after).await;
    }

    /// Forgets the open requests of a connection that ended (they will never be answered).
    pub fn forget_conn(&self, conn: &str) {
        self.lock().open.retain(|(c, _, _), _| &**c != conn);
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
pub struct RawFrame(pub Arc<str>);

impl Serialize for RawFrame {
    fn serialize<S: serde::Serializer>(&self, out: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let msg = serde_json::from_str::<Value>(&self.0).ok();
        let mut map = out.serialize_map(Some(2))?;
        map.serialize_entry("raw", &*self.0)?;
        map.serialize_entry("msg", &msg)?;
        map.end()
    }
}

/// `ts` as written: RFC 3339, microseconds, `Z`.
fn rfc3339_micros<S: serde::Serializer>(
    ts: &chrono::DateTime<chrono::Utc>,
    out: S,
) -> Result<S::Ok, S::Error> {
    out.collect_str(&ts.format("%Y-%m-%dT%H:%M:%S%.6fZ"))
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

    fn meta(dir: Direction) -> FrameMeta {
        FrameMeta {
            dir,
            transport: TransportKind::Stdio,
            conn: "c1".into(),
            stream: None,
            http: None,
        }
    }

    #[test]
    fn responses_get_method_and_latency_of_their_request() {
        let r = Recorder::new(None, None).unwrap();
        let req = Parsed {
            error: None,
            kind: Kind::Request,
            method: Some("tools/list".into()),
            id: Some(1.into()),
        };
        r.record(&meta(Direction::In), "{}", req);
        let resp = Parsed {
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

    fn ping(r: &Recorder) -> u64 {
        let p = Parsed {
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
            error: None,
            kind: Kind::Request,
            method: Some("m".into()),
            id: Some(id.into()),
        };
        r.record(&meta(Direction::In), "{}", req(1));
        r.record(&meta(Direction::In), "{}", req(2));
        let cancel = Parsed {
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

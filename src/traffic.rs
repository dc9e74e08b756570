//! The traffic recorder: every frame in and out, in order, with its exact text, what it parsed
//! to, and timing. Records live in memory (for Python's `server.traffic`) and, with
//! `--record FILE`, are appended to a JSON-lines file one complete line per `write`, so a
//! SIGTERM or a crashing handler cannot lose a frame that was already seen.
//!
//! The format is documented (and versioned) in `docs/traffic-format.md`.

use crate::jsonrpc::{Message, RequestId};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The version of the record format written in every record's `v` field.
pub const FORMAT_VERSION: u32 = 1;

/// Raw text kept for a frame that is over the size limit (the rest is dropped, and said so).
const OVERSIZED_RAW_PREFIX: usize = 1024;

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
    /// HTTP method, path, status and the MCP-relevant headers, for HTTP frames.
    pub http: Option<Value>,
}

/// What the engine made of a frame; given by the caller, who parsed it anyway.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The parsed JSON (`None` when the frame was not JSON).
    pub msg: Option<Value>,
    /// Why the frame is invalid, if it is.
    pub error: Option<String>,
    /// The kind of message.
    pub kind: Kind,
    /// The method (for responses: of the request they answer, filled in by the recorder).
    pub method: Option<String>,
    /// The request id, for requests and responses.
    pub id: Option<RequestId>,
}

impl Parsed {
    /// The view of a valid message whose JSON is `msg`.
    pub fn of_message(msg: Value, message: &Message) -> Self {
        let kind = match message {
            Message::Request(_) => Kind::Request,
            Message::Notification(_) => Kind::Notification,
            Message::Response { .. } => Kind::Response,
            Message::Error { .. } => Kind::Error,
        };
        Self {
            msg: Some(msg),
            error: None,
            kind,
            method: message.method().map(str::to_string),
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
    /// Wall-clock time, RFC 3339 with microseconds, UTC.
    pub ts: String,
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
    /// HTTP metadata, or null.
    pub http: Option<Value>,
    /// The exact frame text (invalid UTF-8 replaced with U+FFFD).
    pub raw: String,
    /// The parsed JSON, or null.
    pub msg: Option<Value>,
    /// Why the frame was invalid, or null.
    pub error: Option<String>,
    /// What the frame was.
    pub kind: Kind,
    /// The method; for responses, the method of the request answered.
    pub method: Option<String>,
    /// The id, for requests and responses.
    pub id: Option<RequestId>,
    /// For responses: milliseconds since the request they answer was recorded.
    pub latency_ms: Option<f64>,
}

/// The shared recorder. Cheap to call from any thread; one lock per frame.
pub struct Recorder {
    /// Zero point of `t_ns`.
    start: Instant,
    /// Everything behind one lock so `seq` order, memory order and file order agree.
    inner: Mutex<Inner>,
}

struct Inner {
    seq: u64,
    records: Vec<Arc<Record>>,
    file: Option<File>,
    /// Requests awaiting a response, keyed by (connection, direction of the request, id):
    /// gives responses their `method` and `latency_ms`.
    open: HashMap<(Arc<str>, Direction, RequestId), (u64, String)>,
    /// Set when writing the file failed once; reported, then the file is dropped.
    file_error: Option<String>,
}

impl Recorder {
    /// A recorder that keeps records in memory and, if `path` is given, appends them to it.
    pub fn new(path: Option<&Path>) -> std::io::Result<Self> {
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
            inner: Mutex::new(Inner {
                seq: 0,
                records: Vec::new(),
                file,
                open: HashMap::new(),
                file_error: None,
            }),
        })
    }

    /// Records one frame and returns its sequence number.
    pub fn record(&self, meta: &FrameMeta, raw: &str, parsed: Parsed) -> u64 {
        let ts = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
        let t_ns = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.seq += 1;
        let mut method = parsed.method;
        let mut latency_ms = None;
        if let Some(id) = &parsed.id {
            match parsed.kind {
                Kind::Request => {
                    let key = (meta.conn.clone(), meta.dir, id.clone());
                    inner
                        .open
                        .insert(key, (t_ns, method.clone().unwrap_or_default()));
                }
                Kind::Response | Kind::Error => {
                    let other = match meta.dir {
                        Direction::In => Direction::Out,
                        Direction::Out => Direction::In,
                    };
                    if let Some((t0, m)) =
                        inner.open.remove(&(meta.conn.clone(), other, id.clone()))
                    {
                        latency_ms = Some((t_ns.saturating_sub(t0)) as f64 / 1e6);
                        method = Some(m);
                    }
                }
                _ => {}
            }
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
            http: meta.http.clone(),
            raw: raw.to_string(),
            msg: parsed.msg,
            error: parsed.error,
            kind: parsed.kind,
            method,
            id: parsed.id,
            latency_ms,
        };
        if inner.file.is_some() {
            let mut line = serde_json::to_vec(&record).unwrap_or_default();
            line.push(b'\n');
            if let Some(Err(e)) = inner.file.as_mut().map(|f| f.write_all(&line)) {
                tracing::error!("traffic record file: write failed, recording to it stops: {e}");
                inner.file_error = Some(e.to_string());
                inner.file = None;
            }
        }
        let seq = record.seq;
        inner.records.push(Arc::new(record));
        seq
    }

    /// Records a frame that was too large to keep: its first bytes and its size.
    pub fn record_oversized(
        &self,
        meta: &FrameMeta,
        prefix: &[u8],
        size: usize,
        error: String,
    ) -> u64 {
        let keep = &prefix[..prefix.len().min(OVERSIZED_RAW_PREFIX)];
        let raw = String::from_utf8_lossy(keep).into_owned();
        let parsed = Parsed {
            msg: None,
            error: Some(format!(
                "{error} (raw truncated to {} of {size} bytes)",
                keep.len()
            )),
            kind: Kind::Invalid,
            method: None,
            id: None,
        };
        self.record(meta, &raw, parsed)
    }

    /// Records with `seq > after`, in order.
    pub fn since(&self, after: u64) -> Vec<Arc<Record>> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let start = usize::try_from(after)
            .unwrap_or(usize::MAX)
            .min(inner.records.len());
        inner.records[start..].to_vec()
    }

    /// How many frames were recorded.
    pub fn len(&self) -> u64 {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).seq
    }

    /// Whether nothing was recorded yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets the in-memory records (the file, if any, keeps them). `seq` keeps counting.
    pub fn clear(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.records.clear();
    }

    /// Flushes the record file to the operating system (it is unbuffered; this syncs data).
    pub fn flush(&self) {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = &inner.file {
            let _ = f.sync_data();
        }
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
        let r = Recorder::new(None).unwrap();
        let req = Parsed {
            msg: Some(json!({})),
            error: None,
            kind: Kind::Request,
            method: Some("tools/list".into()),
            id: Some(1.into()),
        };
        r.record(&meta(Direction::In), "{}", req);
        let resp = Parsed {
            msg: Some(json!({})),
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
}

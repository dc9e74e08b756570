//! One recorded frame ([`Record`]) and its JSON line: the fields of `docs/traffic-format.md`,
//! written by a hand-made [`Serialize`] so that `msg` and `task` are worked out from the frame's
//! text as the record is written or read, never on the request path.

use super::frame::{Direction, FaultMark, FrameMeta, FrameSummary, HttpMeta, Kind, TransportKind};
use super::FORMAT_VERSION;
use crate::jsonrpc::RequestId;
use crate::protocol::method_names::NotificationMethod;
use crate::protocol::{Era, Revision};
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;

/// One recorded frame. Field meanings are in `docs/traffic-format.md`.
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
    pub raw: FrameText,
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
    /// The fault rule that acted on the frame (absent from the JSON when none did).
    pub fault: Option<Arc<FaultMark>>,
}

impl Record {
    /// The record of a frame not yet given its place: `seq`, `ts` and `t_ns` are zero, and what
    /// an answer takes from its request (latency, method, …) is not filled in yet.
    pub(super) fn unplaced(
        meta: &FrameMeta,
        text: Arc<str>,
        summary: FrameSummary,
        task: Option<Arc<str>>,
    ) -> Self {
        Self {
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
            raw: FrameText {
                text,
                exact: summary.exact,
            },
            error: summary.error,
            kind: summary.kind,
            method: summary.method,
            id: summary.id,
            latency_ms: None,
            era: meta.era,
            revision: meta.revision,
            task,
            fault: meta.fault.clone(),
        }
    }

    /// Bytes the record holds in memory, as the recorder's byte bound counts them: the record
    /// itself and what only it points to (its frame text, error and HTTP headers). An HTTP
    /// metadata shared with the previous POST's record is counted in each: the bound errs on
    /// the safe side.
    pub fn footprint(&self) -> usize {
        let id = match &self.id {
            Some(crate::jsonrpc::RequestId::String(id)) => id.len(),
            _ => 0,
        };
        std::mem::size_of::<Self>()
            + self.raw.text.len()
            + self.error.as_ref().map_or(0, String::len)
            + self.http.as_ref().map_or(0, |h| h.footprint())
            + id
            + self.method.as_ref().map_or(0, |m| m.len())
            + self.task.as_ref().map_or(0, |t| t.len())
    }

    /// The record as one JSON line (no trailing newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A record's frame text (not the parser's `jsonrpc::RawFrame`, which is a frame's parsed
/// JSON). Written as two fields: `raw`, and `msg`, the text parsed (or null). Parsing when a
/// record is read rather than keeping both halves a tape's memory and takes a copy of every
/// message off the request path.
#[derive(Debug, Clone)]
pub struct FrameText {
    /// The frame text.
    pub text: Arc<str>,
    /// Whether `text` is the frame exactly ([`FrameSummary::exact`]); if not, `msg` is null.
    pub exact: bool,
}

impl FrameText {
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
        if let Some(fault) = &self.fault {
            map.serialize_entry("fault", &**fault)?;
        }
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

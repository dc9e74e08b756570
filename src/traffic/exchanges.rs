//! The exchanges a recorder follows: the requests awaiting an answer and the revision each
//! handshake-era connection negotiated. They give an answer its request's method, latency, era,
//! revision and task, and a frame its sender did not tag its connection's revision.

use super::frame::{Direction, FrameMeta, FrameSummary, Kind};
use super::record::{task_of, Record};
use crate::jsonrpc::RequestId;
use crate::protocol::method_names::{ClientRequest, NotificationMethod};
use crate::protocol::{Era, Revision};
use serde_json::Value;
use std::sync::Arc;

/// A request awaiting its response: (connection, direction of the request, id).
type OpenKey = (Arc<str>, Direction, RequestId);

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

/// A frame's effect on the requests awaiting a response; worked out before the recorder's
/// lock is taken, applied under it ([`Exchanges::settle`]).
pub(super) enum OpenStep {
    /// A request: awaits its response from now.
    Start(OpenKey),
    /// A response or error: answers this request (gets its method and latency).
    Finish(OpenKey),
    /// `notifications/cancelled`: this request will never be answered.
    Forget(OpenKey),
    /// Anything else.
    Nothing,
}

impl OpenStep {
    /// What the frame `text` (described by `meta` and `summary`) does to the open requests.
    pub(super) fn of(meta: &FrameMeta, text: &str, summary: &FrameSummary) -> Self {
        match (&summary.id, summary.kind) {
            (Some(id), Kind::Request) => Self::Start((meta.conn.clone(), meta.dir, id.clone())),
            (Some(id), Kind::Response | Kind::Error) => {
                Self::Finish((meta.conn.clone(), meta.dir.reverse(), id.clone()))
            }
            (None, Kind::Notification)
                if summary.method.as_deref() == Some(NotificationMethod::Cancelled.as_str()) =>
            {
                serde_json::from_str::<Value>(text)
                    .ok()
                    .and_then(|m| {
                        m.pointer("/params/requestId")
                            .and_then(RequestId::from_value)
                    })
                    .map_or(Self::Nothing, |id| {
                        Self::Forget((meta.conn.clone(), meta.dir, id))
                    })
            }
            _ => Self::Nothing,
        }
    }
}

/// The task a request names, for its answer to inherit. Only `tasks/*` requests and server →
/// client requests are parsed here (both rare; every other frame pays a prefix check): their
/// answers, which need not name the task (`tasks/update`'s empty result, an error, the client's
/// elicitation answer), are marked with the task they belong to.
pub(super) fn task_of_request(
    meta: &FrameMeta,
    text: &str,
    summary: &FrameSummary,
) -> Option<Arc<str>> {
    match (summary.kind, summary.method.as_deref()) {
        (Kind::Request, Some(m)) if m.starts_with("tasks/") || meta.dir == Direction::Out => {
            serde_json::from_str::<Value>(text)
                .ok()
                .and_then(|v| task_of(Kind::Request, Some(m), &v).map(Arc::from))
        }
        _ => None,
    }
}

/// The requests awaiting an answer and each connection's negotiated revision. Entries of
/// cancelled requests and of closed connections are removed so neither can grow without bound.
#[derive(Default)]
pub(super) struct Exchanges {
    /// Requests awaiting a response, keyed by (connection, direction of the request, id):
    /// gives responses their `method`, `latency_ms`, era and revision.
    open: crate::fast_map::FastMap<OpenKey, Opened>,
    /// The revision each handshake-era connection negotiated (from its `initialize` answer):
    /// gives the frames its sink sends (notifications, server requests) their era and
    /// revision. Removed with the connection ([`Exchanges::forget_conn`]).
    negotiated: crate::fast_map::FastMap<Arc<str>, Revision>,
}

impl Exchanges {
    /// Applies `step` to the open requests for `record`, recorded at `t_ns` (an answer takes
    /// its request's method, latency, era, revision and task), then settles its revision.
    pub(super) fn settle(&mut self, record: &mut Record, step: OpenStep, t_ns: u64) {
        match step {
            OpenStep::Start(key) => {
                let method = record.method.clone().unwrap_or_else(|| "".into());
                let opened = Opened {
                    t_ns,
                    method,
                    era: record.era,
                    revision: record.revision,
                    task: record.task.clone(),
                };
                self.open.insert(key, opened);
            }
            OpenStep::Finish(key) => {
                if let Some(opened) = self.open.remove(&key) {
                    record.latency_ms = Some(t_ns.saturating_sub(opened.t_ns) as f64 / 1e6);
                    record.method = Some(opened.method);
                    record.era = record.era.or(opened.era);
                    record.revision = record.revision.or(opened.revision);
                    record.task = record.task.take().or(opened.task);
                }
            }
            OpenStep::Forget(key) => {
                self.open.remove(&key);
            }
            OpenStep::Nothing => {}
        }
        self.settle_revision(record);
    }

    /// Gives a frame whose sender did not know its revision the one its connection negotiated,
    /// and learns a connection's revision from its `initialize` answer (the one frame that
    /// says it; parsed only for that method).
    fn settle_revision(&mut self, record: &mut Record) {
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
                self.negotiated.insert(record.conn.clone(), revision);
            }
        }
        if record.revision.is_none() {
            record.revision = self.negotiated.get(&record.conn).copied();
        }
        if record.era.is_none() {
            record.era = record.revision.map(Era::of);
        }
    }

    /// Forgets the open requests and the revision of a connection that ended.
    pub(super) fn forget_conn(&mut self, conn: &str) {
        self.open.retain(|(c, _, _), _| &**c != conn);
        self.negotiated.remove(conn);
    }

    /// How many requests await an answer (for tests: that forgetting works).
    #[cfg(test)]
    pub(super) fn open_len(&self) -> usize {
        self.open.len()
    }
}

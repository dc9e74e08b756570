//! What a caller tells the recorder about a frame: where it went ([`FrameMeta`], with
//! [`HttpMeta`] for HTTP) and what it was ([`FrameSummary`]). Callers build both with the
//! constructors here, so each record field a caller does not know is left unset in one place.

use crate::jsonrpc::{Message, RequestId};
use crate::protocol::{Era, Revision};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::sync::Arc;

/// Which way a frame travelled: a record's `dir`, and half of how an answer finds its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Client → server.
    In,
    /// Server → client.
    Out,
}

impl Direction {
    /// The other direction: an answer travels opposite to its request.
    pub fn reverse(self) -> Self {
        match self {
            Self::In => Self::Out,
            Self::Out => Self::In,
        }
    }
}

/// The transport a frame used (a record's `transport`), so a reader can tell stdio from HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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

/// What a frame was, once parsed (a record's `kind`): what a reader filters on first.
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

/// Where a frame came from or went to; the parts of a record the transport knows. A sink keeps
/// one and stamps it on every frame it sends; the dispatcher builds one per incoming frame.
#[derive(Debug, Clone)]
pub struct FrameMeta {
    /// Which way it went.
    pub dir: Direction,
    /// Which transport carried it.
    pub transport: TransportKind,
    /// The connection (stdio, memory) or session (HTTP) it belongs to: answers are matched to
    /// requests within it.
    pub conn: Arc<str>,
    /// The SSE stream it travelled on, where there is one (a record's `stream`).
    pub stream: Option<Arc<str>>,
    /// HTTP method, path, status and the MCP-relevant headers, for HTTP frames. Shared: a
    /// stream's sink stamps the same metadata on every frame it records.
    pub http: Option<Arc<HttpMeta>>,
    /// The era the frame belongs to, where the sender knows it (a stateless request's sink;
    /// an incoming frame read by the dispatcher); otherwise the recorder works it out.
    pub era: Option<Era>,
    /// The revision the frame belongs to, likewise.
    pub revision: Option<Revision>,
    /// The fault rule that acted on the frame, if one did (a record's `fault`).
    pub fault: Option<Arc<FaultMark>>,
}

/// Which fault rule acted on a frame and how (a record's `fault`): what a test asserts to tell
/// a scripted failure from a real one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FaultMark {
    /// The rule's id.
    pub rule: Arc<str>,
    /// What it did (`error`, `drop`, `delay`, `http_status`).
    pub action: &'static str,
}

impl FrameMeta {
    /// A frame going `dir` on `conn` of `transport`, with nothing else known yet (no stream,
    /// no HTTP metadata, no era or revision: the recorder works those out).
    pub fn new(dir: Direction, transport: TransportKind, conn: Arc<str>) -> Self {
        Self {
            dir,
            transport,
            conn,
            stream: None,
            http: None,
            era: None,
            revision: None,
            fault: None,
        }
    }

    /// A frame arriving (client → server) on `conn`.
    pub fn inbound(transport: TransportKind, conn: Arc<str>) -> Self {
        Self::new(Direction::In, transport, conn)
    }

    /// A frame leaving (server → client) on `conn`.
    pub fn outbound(transport: TransportKind, conn: Arc<str>) -> Self {
        Self::new(Direction::Out, transport, conn)
    }

    /// The same frame description, with the HTTP exchange it was part of.
    pub fn with_http(mut self, http: Option<Arc<HttpMeta>>) -> Self {
        self.http = http;
        self
    }

    /// The same frame description, sent on SSE `stream` (an outlet says which).
    pub fn on_stream(mut self, stream: Option<Arc<str>>) -> Self {
        self.stream = stream;
        self
    }

    /// The same frame description, of `era` (when the revision alone may not say it: an
    /// envelope naming a revision the server does not know is still stateless).
    pub fn with_era(mut self, era: Era) -> Self {
        self.era = Some(era);
        self
    }

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
    /// Bytes it holds in memory ([`super::Record::footprint`]).
    pub fn footprint(&self) -> usize {
        let owned = |s: &Option<Cow<'static, str>>| match s {
            Some(Cow::Owned(s)) => s.capacity(),
            _ => 0,
        };
        std::mem::size_of::<Self>()
            + owned(&self.method)
            + owned(&self.path)
            + self.headers.as_ref().map_or(0, |h| h.text.capacity())
    }

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

/// What the engine made of a frame (its kind, method, id, why it is invalid); given by the
/// caller, who classified it anyway. (The parsed JSON itself is not kept: a record's `msg` is
/// parsed from `raw` when the record is read.)
#[derive(Debug, Clone)]
pub struct FrameSummary {
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

impl FrameSummary {
    /// A frame of `kind`, exactly as sent, with no method, id or error.
    pub fn of_kind(kind: Kind) -> Self {
        Self {
            exact: true,
            error: None,
            kind,
            method: None,
            id: None,
        }
    }

    /// The view of a valid message.
    pub fn of_message(message: &Message) -> Self {
        let kind = match message {
            Message::Request(_) => Kind::Request,
            Message::Notification(_) => Kind::Notification,
            Message::Response { .. } => Kind::Response,
            Message::Error { .. } => Kind::Error,
        };
        Self {
            method: message.method().map(method_name),
            id: message.id().cloned(),
            ..Self::of_kind(kind)
        }
    }

    /// A request for `method` with `id`.
    pub fn request(method: &str, id: RequestId) -> Self {
        Self {
            method: Some(method_name(method)),
            id: Some(id),
            ..Self::of_kind(Kind::Request)
        }
    }

    /// A notification of `method`.
    pub fn notification(method: &str) -> Self {
        Self {
            method: Some(method_name(method)),
            ..Self::of_kind(Kind::Notification)
        }
    }

    /// A success response to request `id` (its method is the request's, found by the recorder).
    pub fn response(id: RequestId) -> Self {
        Self {
            id: Some(id),
            ..Self::of_kind(Kind::Response)
        }
    }

    /// An error response, to request `id` when it is known.
    pub fn error_response(id: Option<RequestId>) -> Self {
        Self {
            id,
            ..Self::of_kind(Kind::Error)
        }
    }

    /// A JSON-RPC batch (one record for the whole array).
    pub fn batch() -> Self {
        Self::of_kind(Kind::Batch)
    }

    /// A frame that is not a valid message, and why (the text of the error sent back); `id` when
    /// the frame still named one.
    pub fn invalid(error: String, id: Option<RequestId>) -> Self {
        Self {
            error: Some(error),
            id,
            ..Self::of_kind(Kind::Invalid)
        }
    }

    /// An HTTP exchange without a JSON-RPC frame of its own; `error` when it was refused.
    pub fn http_exchange(error: Option<String>) -> Self {
        Self {
            error,
            ..Self::of_kind(Kind::Http)
        }
    }

    /// The same summary, its text the frame exactly or not (invalid UTF-8 replaced, cut).
    pub fn text_exact(mut self, exact: bool) -> Self {
        self.exact = exact;
        self
    }
}

/// A method name as a record holds it: one shared allocation per MCP method
/// ([`crate::protocol::method_names`]) for the whole process, a fresh one for any other name.
pub fn method_name(name: &str) -> Arc<str> {
    static SHARED: std::sync::LazyLock<crate::fast_map::FastMap<&'static str, Arc<str>>> =
        std::sync::LazyLock::new(|| {
            crate::protocol::method_names::all()
                .map(|m| (m, Arc::from(m)))
                .collect()
        });
    SHARED.get(name).cloned().unwrap_or_else(|| Arc::from(name))
}

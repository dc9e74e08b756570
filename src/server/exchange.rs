//! What an incoming frame is, decided once: [`Server::decode`] parses it and decides its
//! [`Exchange`] — the era that serves it, the stateless envelope it carries (read here, once),
//! and the era and revision its records name. The dispatcher, the recorder and the transport's
//! answer all read that one value; nothing else looks at a frame's `_meta` or a connection's
//! phase to tell the eras apart.
//!
//! The input is the frame and where it came from ([`Origin`]): a connection (its lifecycle
//! phase and negotiated revision), or nothing at all (an HTTP POST without a session, an
//! exchange of its own, with the revision its `MCP-Protocol-Version` header names).

use super::model::Server;
use super::session::{Phase, Session};
use crate::jsonrpc::{self, ErrorObject, Frame, Invalid, Message, Request};
use crate::protocol::envelope::{self, Envelope};
use crate::protocol::frame;
use crate::protocol::meta::RequestMeta;
use crate::protocol::method_names::ClientRequest;
use crate::protocol::revision::negotiate;
use crate::protocol::{Era, Revision};
use crate::traffic::{FrameMeta, TransportKind};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Where a frame came from, as far as the era decision and the records care.
#[derive(Clone, Copy)]
pub enum Origin<'a> {
    /// A connection: stdio, in-memory, the relay, a Streamable HTTP or legacy SSE session. Its
    /// phase decides the era of what it sends; its requests are registered in flight on it.
    Connection(&'a Arc<Session>),
    /// No connection: an HTTP POST without a session, one exchange of its own.
    Alone(&'a Alone),
}

/// A frame that arrived outside any connection (an HTTP POST without `Mcp-Session-Id`).
pub struct Alone {
    /// The name its records carry as `conn` (the TCP connection's, `http-<n>`).
    pub conn: Arc<str>,
    /// The transport it came on.
    pub transport: TransportKind,
    /// The revision its `MCP-Protocol-Version` header names, if it names one: a stateless one
    /// the server serves makes the frame stateless whatever its body says.
    pub version_header: Option<Revision>,
    /// Fired when the exchange's answer has ended (sent, or its stream dropped): its request,
    /// and anything its handler started on its context, stop. The exchange has no connection
    /// whose end would do it.
    pub ended: CancellationToken,
}

impl Origin<'_> {
    /// The connection name records carry.
    pub fn conn(&self) -> &Arc<str> {
        match self {
            Origin::Connection(s) => &s.id,
            Origin::Alone(a) => &a.conn,
        }
    }

    /// The transport the frame came on.
    pub fn transport(&self) -> TransportKind {
        match self {
            Origin::Connection(s) => s.transport,
            Origin::Alone(a) => a.transport,
        }
    }

    /// The connection's phase and negotiated revision (a frame alone: a new connection's).
    fn lifecycle(&self) -> (Phase, Option<Revision>) {
        match self {
            Origin::Connection(s) => s.read(|s| (s.phase, s.revision)),
            Origin::Alone(_) => (Phase::New, None),
        }
    }

    /// The recorder's description of a frame arriving from here (untagged).
    pub fn inbound_meta(&self, http: Option<Arc<crate::traffic::HttpMeta>>) -> FrameMeta {
        FrameMeta::inbound(self.transport(), self.conn().clone()).with_http(http)
    }
}

/// What one decoded frame is: the one decision every later step reads.
#[derive(Debug)]
pub struct Exchange {
    /// The era that serves it. A batch, and anything inside one, is of the handshake era (the
    /// stateless era has no batches).
    pub era: Era,
    /// Whether a single request or notification carries the 2026-07-28 envelope: a connection
    /// that sent `initialize` refuses such a request.
    pub carries_envelope: bool,
    /// A stateless request's envelope as read from its `_meta`, or the error that refuses it
    /// (`-32602`, `-32022`); answered only after its method is known to exist.
    pub envelope: Option<Result<Envelope, ErrorObject>>,
    /// The era its record names (`None`: the recorder works it out).
    pub record_era: Option<Era>,
    /// The revision its record names (`None`: the recorder works it out). Worked out only
    /// while something records.
    pub record_revision: Option<Revision>,
}

impl Exchange {
    /// A frame of the handshake era whose records the recorder tags itself: a batch, an
    /// element of one, an invalid frame.
    fn untagged(era: Era) -> Self {
        Self {
            era,
            carries_envelope: false,
            envelope: None,
            record_era: None,
            record_revision: None,
        }
    }

    /// `meta` tagged with the era and revision this exchange's records name.
    pub fn tag(&self, meta: FrameMeta) -> FrameMeta {
        match self.record_era {
            Some(era) => meta.with_era(era),
            None => meta,
        }
        .with_revision(self.record_revision)
    }

    /// The exchange of an element of an allowed batch (the handshake era's only).
    pub fn batch_item() -> Self {
        Self::untagged(Era::Handshake)
    }
}

/// One incoming frame, decoded and decided but not yet recorded or acted on. Transports that
/// must decide something first (HTTP: the status code, whether a session is needed) look at
/// it, then hand it to [`Server::accept`].
pub struct Decoded {
    /// The frame as text (invalid UTF-8 replaced), for the record (which keeps this very
    /// allocation).
    pub(super) text: Arc<str>,
    /// Whether `text` is the frame exactly (no invalid UTF-8 was replaced).
    pub(super) exact: bool,
    /// The decision: messages to handle, or the error to answer with.
    pub(super) frame: Result<Frame, Invalid>,
    /// What it is ([`Exchange`]).
    pub(super) exchange: Exchange,
}

impl Decoded {
    /// Whether the frame is a valid message (or an allowed batch).
    pub fn is_valid(&self) -> bool {
        self.frame.is_ok()
    }

    /// The era that serves the frame.
    pub fn era(&self) -> Era {
        self.exchange.era
    }

    /// Whether answering it takes a response: it holds a request, or it is invalid (its error
    /// is the answer). Notifications and responses alone are not answered.
    pub fn expects_reply(&self) -> bool {
        match &self.frame {
            Err(_) => true,
            Ok(Frame::Single(m)) => matches!(m, Message::Request(_)),
            Ok(Frame::Batch(items)) => items
                .iter()
                .any(|i| matches!(i, Ok(Message::Request(_)) | Err(_))),
        }
    }

    /// The frame as text (for recording a transport-level refusal of it).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The method of a single request or notification.
    pub fn method(&self) -> Option<&str> {
        match &self.frame {
            Ok(Frame::Single(m)) => m.method(),
            _ => None,
        }
    }

    /// The error a rejected frame is answered with.
    pub fn error(&self) -> Option<&ErrorObject> {
        self.frame.as_ref().err().map(|i| &*i.error)
    }

    /// The id of a rejected frame, when its id was readable.
    pub fn error_id(&self) -> Option<&crate::jsonrpc::RequestId> {
        self.frame.as_ref().err().and_then(|i| i.id.as_ref())
    }

    /// The frame's single request, if it is one: what a transport checks against its own
    /// metadata (the stateless era's HTTP headers) before the request is served.
    pub fn request(&self) -> Option<&Request> {
        match &self.frame {
            Ok(Frame::Single(Message::Request(r))) => Some(r),
            _ => None,
        }
    }

    /// Whether the frame is a single JSON-RPC response (a result or an error answering some
    /// request): the stateless era has no server requests to answer, so HTTP refuses these.
    pub fn is_response(&self) -> bool {
        matches!(
            &self.frame,
            Ok(Frame::Single(
                Message::Response { .. } | Message::Error { .. }
            ))
        )
    }
}

impl Server {
    /// The era a request's `MCP-Protocol-Version` header puts it in, when it names a revision
    /// this server serves in that era's way: `Some(Stateless)` for a served stateless revision
    /// (a POST is then stateless whatever its body says; a GET or DELETE has no meaning).
    pub fn era_of_header(&self, version_header: Option<Revision>) -> Option<Era> {
        version_header
            .filter(|r| !r.has_handshake() && self.serves_stateless())
            .map(|_| Era::Stateless)
    }

    /// Decodes one incoming frame from `origin` and decides what it is ([`Exchange`]).
    /// Batches are refused unless the connection's revision allows them (never outside a
    /// connection).
    pub fn decode(&self, origin: Origin<'_>, raw: &[u8]) -> Decoded {
        // UTF-8 is checked once: valid text is parsed as it is, invalid is refused by
        // `parse_json` (and recorded with the bad bytes replaced).
        let (text, exact, value) = match std::str::from_utf8(raw) {
            Ok(valid) => {
                let text = Arc::from(valid);
                let value = frame::parse_raw_str(&text);
                (text, true, value)
            }
            Err(_) => (
                Arc::from(String::from_utf8_lossy(raw)),
                false,
                jsonrpc::parse_json(raw).map(frame::RawFrame::from),
            ),
        };
        let (phase, revision) = origin.lifecycle();
        let header_says =
            matches!(origin, Origin::Alone(a) if self.era_of_header(a.version_header).is_some());
        let value = match value {
            Ok(v) => v,
            Err(invalid) => {
                let era = self.era_for(phase, header_says, false);
                return Decoded {
                    text,
                    exact,
                    frame: Err(invalid),
                    exchange: Exchange::untagged(era),
                };
            }
        };
        let refusal = if value.is_batch() {
            batch_refusal(revision)
        } else {
            None
        };
        let frame = match refusal {
            Some(e) => Err(Invalid::anonymous(ErrorObject::invalid_request(e))),
            None => value.classify(),
        };
        let exchange = match &frame {
            Ok(Frame::Single(message)) => {
                self.decide(origin, phase, revision, header_says, message)
            }
            Ok(Frame::Batch(_)) => Exchange::untagged(Era::Handshake),
            Err(_) => Exchange::untagged(self.era_for(phase, header_says, false)),
        };
        Decoded {
            text,
            exact,
            frame,
            exchange,
        }
    }

    /// The era of a frame from a connection in `phase` (a frame alone: [`Phase::New`]) that
    /// carries the envelope (`carries`) or arrived with a stateless version header
    /// (`header_says`): the stateless era when this server serves it and the connection
    /// already does, or nothing has been decided on it yet and the frame says so (a server
    /// serving only the stateless era serves everything so).
    fn era_for(&self, phase: Phase, header_says: bool, carries: bool) -> Era {
        let stateless = self.serves_stateless()
            && match phase {
                Phase::Stateless => true,
                Phase::New => !self.serves_handshake() || carries || header_says,
                Phase::Initializing | Phase::Ready => false,
            };
        if stateless {
            Era::Stateless
        } else {
            Era::Handshake
        }
    }

    /// The exchange of a single message from a connection in `phase` with `revision`.
    fn decide(
        &self,
        origin: Origin<'_>,
        phase: Phase,
        revision: Option<Revision>,
        header_says: bool,
        message: &Message,
    ) -> Exchange {
        let sent = envelope_meta(message);
        let carries_envelope = envelope::is_stateless(sent.as_deref());
        let era = self.era_for(phase, header_says, carries_envelope);
        // A stateless request's envelope is read once, here; its revision is also what its
        // records name.
        let envelope = match message {
            Message::Request(r) if era == Era::Stateless => {
                Some(envelope::read(r.meta.as_ref(), &self.config.revisions))
            }
            _ => None,
        };
        let mut exchange = Exchange {
            era,
            carries_envelope,
            envelope,
            record_era: None,
            record_revision: None,
        };
        if self.recorder.capturing() {
            let (record_era, record_revision) =
                self.record_tag(&exchange, origin, phase, revision, sent.as_deref(), message);
            exchange.record_era = record_era;
            exchange.record_revision = record_revision;
        }
        exchange
    }

    /// The era and revision the record of an incoming `message` names: a stateless request's
    /// envelope says it; `initialize` will get the revision negotiation picks; a stateless
    /// connection's frame without a usable envelope is still of that era; anything else
    /// belongs to the connection's negotiated revision (unknown before `initialize`).
    fn record_tag(
        &self,
        exchange: &Exchange,
        origin: Origin<'_>,
        phase: Phase,
        revision: Option<Revision>,
        sent: Option<&RequestMeta>,
        message: &Message,
    ) -> (Option<Era>, Option<Revision>) {
        let params = match message {
            Message::Request(r) => r.params.as_ref(),
            Message::Notification(n) => n.params.as_ref(),
            _ => None,
        }
        .and_then(Value::as_object);
        if params.is_some() && exchange.era == Era::Stateless {
            let revision = match &exchange.envelope {
                Some(Ok(e)) => Some(e.revision),
                _ => envelope::requested_revision(sent),
            };
            return (Some(Era::Stateless), revision);
        }
        if let Message::Request(r) = message {
            if r.method == ClientRequest::Initialize.as_str() {
                let requested = params
                    .and_then(|p| p.get("protocolVersion"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                return (None, negotiate(requested, &self.config.revisions));
            }
        }
        // A frame alone is served by the stateless rules once it is stateless at all.
        let stateless_conn = phase == Phase::Stateless
            || (matches!(origin, Origin::Alone(_)) && exchange.era == Era::Stateless);
        (stateless_conn.then_some(Era::Stateless), revision)
    }
}

/// Why a batch cannot be served under the negotiated `revision`, if it cannot.
fn batch_refusal(revision: Option<Revision>) -> Option<String> {
    match revision {
        None => Some("a JSON-RPC batch is not allowed before initialize (and initialize must not be batched)".into()),
        Some(r) if !r.allows_batches() => Some(format!(
            "JSON-RPC batches are not supported in protocol revision {r} (only 2025-03-26 allows them); send one message per frame"
        )),
        Some(_) => None,
    }
}

/// The `_meta` of a request or notification: a request's as the parser kept it; a
/// notification's (which keeps it in its params, for its hooks) read from its params.
fn envelope_meta(message: &Message) -> Option<Cow<'_, RequestMeta>> {
    match message {
        Message::Request(r) => r.meta.as_ref().map(Cow::Borrowed),
        Message::Notification(n) => n
            .params
            .as_ref()
            .and_then(RequestMeta::in_params)
            .map(Cow::Owned),
        _ => None,
    }
}

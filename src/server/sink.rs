//! Where outgoing messages go. A [`Sink`] serializes a message, records it, and hands the
//! frame to its [`Outlet`] (a stdio writer, an SSE stream, ...) under the recorder's lock, so
//! every frame that leaves is on the tape, in wire order.

use super::outgoing::encode_one;
pub use super::outgoing::Outgoing;
use super::seams::{OutVerdict, Outbound, OutboundFrame, Wire};
use crate::jsonrpc::Message;
use crate::protocol::Revision;
use crate::traffic::{FrameMeta, FrameSummary, HttpMeta, TransportKind};
use std::sync::Arc;
use tokio::sync::mpsc;

/// The frame could not be handed over: nobody will ever read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Undeliverable;

/// The transport end of a sink.
pub trait Outlet: Send + Sync {
    /// Takes one frame (JSON text, no newline). Returns the SSE event id it was given, if the
    /// transport numbers its frames.
    fn deliver(&self, frame: Arc<str>) -> Result<Option<Arc<str>>, Undeliverable>;

    /// Drops the current connection while keeping the stream resumable (SSE polling).
    /// Transports without resumable streams ignore it.
    fn disconnect(&self) {}

    /// The SSE stream this outlet feeds, as records name it (`"0"` for the standalone stream),
    /// or `None` for a transport without streams. The outlet says it, so a record cannot
    /// disagree with the stream its frame went on.
    fn stream(&self) -> Option<Arc<str>> {
        None
    }

    /// Whether frames may wait here for a connection (the standalone stream before its GET):
    /// the sink then offers them to [`Outlet::hold`] first.
    fn holds(&self) -> bool {
        false
    }

    /// Keeps `frame` unrecorded while no connection would take it now, and records it when it
    /// reaches the wire ([`Held::record`]); gives it back when it goes out at once.
    fn hold(&self, frame: Held) -> Result<(), Held> {
        Err(frame)
    }
}

/// A frame not recorded yet: its outlet records it when the frame reaches the wire, so record
/// order stays wire order for frames that wait for a connection. Boxed: it is passed back and
/// forth by value, and waits in the outlet's store.
pub struct Held(Box<HeldFrame>);

struct HeldFrame {
    sink: Sink,
    text: Arc<str>,
    parsed: FrameSummary,
}

impl Held {
    /// The frame's text.
    pub fn text(&self) -> &Arc<str> {
        &self.0.text
    }

    /// Records the frame as sent under SSE event id `event_id`, as its sink would have.
    pub fn record(self, event_id: Arc<str>) {
        let HeldFrame { sink, text, parsed } = *self.0;
        sink.wire
            .recorder
            .record_and_deliver(&sink.meta, text, parsed, || {
                Ok::<_, Undeliverable>(Some(event_id))
            });
    }
}

/// A channel to a writer task (stdio, in-memory connections, legacy SSE).
impl Outlet for mpsc::UnboundedSender<Arc<str>> {
    fn deliver(&self, frame: Arc<str>) -> Result<Option<Arc<str>>, Undeliverable> {
        self.send(frame).map(|()| None).map_err(|_| Undeliverable)
    }
}

/// A handle to one outgoing channel (a stdio connection, an SSE stream, ...).
#[derive(Clone)]
pub struct Sink {
    /// Takes the frames.
    outlet: Arc<dyn Outlet>,
    /// The outbound seam, then the recorder: every frame passes the seam and is recorded as
    /// it is handed to the outlet.
    wire: Arc<Wire>,
    /// Recorded with each frame.
    meta: FrameMeta,
}

impl Sink {
    /// A sink feeding `outlet`, recording under `conn` (and the outlet's stream, for SSE).
    pub fn new(
        outlet: Arc<dyn Outlet>,
        wire: Arc<Wire>,
        transport: TransportKind,
        conn: Arc<str>,
    ) -> Self {
        let meta = FrameMeta::outbound(transport, conn).on_stream(outlet.stream());
        Self { outlet, wire, meta }
    }

    /// The same connection recorded as an HTTP response body with `http` metadata: a body
    /// is not an SSE event, so its record names no stream.
    pub fn with_http(mut self, http: Option<HttpMeta>) -> Self {
        self.meta.http = http.map(Arc::new);
        self.meta.stream = None;
        self
    }

    /// The server's wire: its bounds and where they count (a session's requests to its client).
    pub fn wire(&self) -> &Wire {
        &self.wire
    }

    /// The revision this sink's frames are recorded as belonging to, if it was tagged with one.
    pub fn revision(&self) -> Option<Revision> {
        self.meta.revision
    }

    /// The same outlet, its frames recorded as belonging to `revision` (a stateless request's
    /// sink: its notifications and server requests are of the request's revision).
    pub fn tagged(mut self, revision: Revision) -> Self {
        self.meta = self.meta.with_revision(Some(revision));
        self
    }

    /// The outlet itself, for frames that were recorded already (a task's queued messages,
    /// handed to the `tasks/result` stream that finally carries them).
    pub fn outlet(&self) -> Arc<dyn Outlet> {
        self.outlet.clone()
    }

    /// Sends one message; `false` when the other side is gone.
    pub fn send(&self, message: &Message) -> bool {
        self.deliver(encode_one(message))
    }

    /// Ends the outlet's current connection, keeping its stream resumable (see [`Outlet::disconnect`]).
    pub fn disconnect(&self) {
        self.outlet.disconnect();
    }

    /// Records a message that the transport sends itself (an HTTP response body) and returns
    /// its text: what the outbound seam made of it (frames it replaced it with are the body
    /// line after line; a dropped one is an empty body).
    pub fn record_only(&self, out: &Outgoing) -> Arc<str> {
        let (text, parsed) = self.spoken(out.encode());
        let verdict = self.outbound_seam(&text, &parsed);
        match verdict.outbound {
            Outbound::Pass => {
                self.record_sent(&self.meta, text.clone(), parsed);
                text
            }
            Outbound::Drop => Arc::from(""),
            Outbound::Replace(frames) => {
                let meta = self.marked_by(verdict.mark).meta;
                for frame in &frames {
                    self.record_sent(&meta, frame.clone(), summary_of(frame));
                }
                Arc::from(frames.join("\n"))
            }
        }
    }

    /// Records `text` as handed over by the transport itself.
    fn record_sent(&self, meta: &FrameMeta, text: Arc<str>, parsed: FrameSummary) {
        self.wire
            .recorder
            .record_and_deliver(meta, text, parsed, || Ok::<_, Undeliverable>(None));
    }

    /// What the outbound seam decides for a frame (it passes while nothing is installed).
    fn outbound_seam(&self, text: &str, parsed: &FrameSummary) -> OutVerdict {
        if !self.wire.seams.armed() {
            return OutVerdict::PASS;
        }
        let frame = OutboundFrame {
            conn: &self.meta.conn,
            transport: self.meta.transport,
            revision: self.meta.revision,
            summary: parsed,
            text,
        };
        self.wire.seams.outbound(&frame)
    }

    /// The same sink, its frames recorded with a fault rule's mark (frames a rule sends or
    /// changed).
    pub fn marked_by(&self, mark: Option<Arc<crate::traffic::FaultMark>>) -> Self {
        let mut marked = self.clone();
        marked.meta.fault = mark;
        marked
    }

    /// Sends a message or a batch reply; `false` when the other side is gone.
    pub fn send_outgoing(&self, out: &Outgoing) -> bool {
        self.deliver(out.encode())
    }

    /// Passes an encoded frame through the outbound seam, then records it and hands it to the
    /// outlet, under the recorder's lock.
    fn deliver(&self, encoded: (Arc<str>, FrameSummary)) -> bool {
        let (text, parsed) = self.spoken(encoded);
        let verdict = self.outbound_seam(&text, &parsed);
        match verdict.outbound {
            Outbound::Pass => self.hand_over(text, parsed),
            // As if sent: the client simply never sees it.
            Outbound::Drop => true,
            Outbound::Replace(frames) => {
                let marked = self.marked_by(verdict.mark);
                // Every frame is handed over, even after one could not be.
                let sent: Vec<bool> = frames
                    .into_iter()
                    .map(|frame| {
                        let parsed = summary_of(&frame);
                        marked.hand_over(frame, parsed)
                    })
                    .collect();
                sent.into_iter().all(|s| s)
            }
        }
    }

    /// An encoded frame as the server's dialect writes it (the TypeScript SDK's member order).
    fn spoken(&self, (text, parsed): (Arc<str>, FrameSummary)) -> (Arc<str>, FrameSummary) {
        match self.wire.dialect.and_then(|d| d.written(&text)) {
            Some(written) => (Arc::from(written), parsed),
            None => (text, parsed),
        }
    }

    /// Records a frame and hands it to the outlet, under the recorder's lock (a frame that
    /// waits for a connection is recorded when it reaches the wire).
    fn hand_over(&self, text: Arc<str>, parsed: FrameSummary) -> bool {
        let (text, parsed) = if self.wire.recorder.capturing() && self.outlet.holds() {
            let held = Held(Box::new(HeldFrame {
                sink: self.clone(),
                text,
                parsed,
            }));
            match self.outlet.hold(held) {
                Ok(()) => return true,
                Err(Held(held)) => (held.text, held.parsed),
            }
        } else {
            (text, parsed)
        };
        let frame = text.clone();
        self.wire
            .recorder
            .record_and_deliver(&self.meta, text, parsed, || self.outlet.deliver(frame))
    }
}

/// How a frame a fault rule changed is recorded: its kind, method and id as its text now reads,
/// or invalid (not JSON, cut short, not a message) and why.
fn summary_of(text: &str) -> FrameSummary {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(value) => match crate::protocol::frame::classify(value) {
            Ok(message) => FrameSummary::of_message(&message),
            Err(invalid) => FrameSummary::invalid(invalid.error.message, invalid.id),
        },
        Err(e) => FrameSummary::invalid(format!("not JSON: {e}"), None),
    }
}

//! Where outgoing messages go. A [`Sink`] serializes a message, records it, and hands the
//! frame to its [`Outlet`] (a stdio writer, an SSE stream, ...) under the recorder's lock, so
//! every frame that leaves is on the tape, in wire order.

use super::stateless::Completed;
use crate::jsonrpc::Message;
use crate::protocol::Revision;
use crate::traffic::{FrameMeta, FrameSummary, HttpMeta, Recorder, TransportKind};
use std::sync::Arc;
use tokio::sync::mpsc;

/// What a request produced: one message, or (for a batch) an array of them.
#[derive(Debug, Clone)]
pub enum Outgoing {
    /// A single message.
    One(Message),
    /// A stateless result whose added members are written as it is encoded ([`Completed`]);
    /// it leaves as the same bytes as the response [`Completed::into_message`] makes of it.
    Completed(Completed),
    /// A batch reply: the responses to a JSON-RPC batch, sent as one JSON array.
    Batch(Vec<Message>),
}

impl Outgoing {
    /// Adds the messages to a batch's replies (a completed result as a plain response).
    pub fn add_to(self, replies: &mut Vec<Message>) {
        match self {
            Outgoing::One(m) => replies.push(m),
            Outgoing::Completed(c) => replies.push(c.into_message()),
            Outgoing::Batch(ms) => replies.extend(ms),
        }
    }

    /// The wire text and the recorder's view of it.
    pub fn encode(&self) -> (Arc<str>, FrameSummary) {
        match self {
            Outgoing::One(m) => encode_one(m),
            Outgoing::Completed(c) => {
                (Arc::from(c.to_json()), FrameSummary::response(c.id.clone()))
            }
            Outgoing::Batch(ms) => {
                // Written as an array of messages, not built as a value first.
                let text = Arc::from(crate::jsonrpc::to_json(ms));
                (text, FrameSummary::batch())
            }
        }
    }
}

/// One message's wire text and the recorder's view of it.
fn encode_one(message: &Message) -> (Arc<str>, FrameSummary) {
    (
        Arc::from(message.to_json()),
        FrameSummary::of_message(message),
    )
}

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
    /// Every frame is recorded as it is handed to the outlet.
    recorder: Arc<Recorder>,
    /// Recorded with each frame.
    meta: FrameMeta,
}

impl Sink {
    /// A sink feeding `outlet`, recording under `conn` (and the outlet's stream, for SSE).
    pub fn new(
        outlet: Arc<dyn Outlet>,
        recorder: Arc<Recorder>,
        transport: TransportKind,
        conn: Arc<str>,
    ) -> Self {
        let meta = FrameMeta::outbound(transport, conn).on_stream(outlet.stream());
        Self {
            outlet,
            recorder,
            meta,
        }
    }

    /// The same connection recorded as an HTTP response body with `http` metadata: a body
    /// is not an SSE event, so its record names no stream.
    pub fn with_http(mut self, http: Option<HttpMeta>) -> Self {
        self.meta.http = http.map(Arc::new);
        self.meta.stream = None;
        self
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
    /// its text.
    pub fn record_only(&self, out: &Outgoing) -> Arc<str> {
        let (text, parsed) = out.encode();
        self.recorder
            .record_and_deliver(&self.meta, text.clone(), parsed, || {
                Ok::<_, Undeliverable>(None)
            });
        text
    }

    /// Sends a message or a batch reply; `false` when the other side is gone.
    pub fn send_outgoing(&self, out: &Outgoing) -> bool {
        self.deliver(out.encode())
    }

    /// Records an encoded frame and hands it to the outlet, under the recorder's lock.
    fn deliver(&self, (text, parsed): (Arc<str>, FrameSummary)) -> bool {
        let frame = text.clone();
        self.recorder
            .record_and_deliver(&self.meta, text, parsed, || self.outlet.deliver(frame))
    }
}

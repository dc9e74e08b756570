//! Where outgoing messages go. A [`Sink`] serializes a message, records it, and hands the
//! frame to the transport's writer, so every byte that leaves is on the tape, in order.

use crate::jsonrpc::Message;
use crate::traffic::{Direction, FrameMeta, Kind, Parsed, Recorder, TransportKind};
use std::sync::Arc;
use tokio::sync::mpsc;

/// What a request produced: one message, or (for a batch) an array of them.
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    /// A single message.
    One(Message),
    /// A batch reply: the responses to a JSON-RPC batch, sent as one JSON array.
    Batch(Vec<Message>),
}

/// A handle to one outgoing channel (a stdio connection, an SSE stream, ...).
#[derive(Clone)]
pub struct Sink {
    /// The transport's writer reads frames (JSON text without trailing newline) from here.
    tx: mpsc::UnboundedSender<Arc<str>>,
    /// Every frame is recorded before it is handed to the writer.
    recorder: Arc<Recorder>,
    /// Recorded with each frame.
    meta: FrameMeta,
}

impl Sink {
    /// A sink feeding `tx`, recording under `conn` (and `stream`, for SSE).
    pub fn new(
        tx: mpsc::UnboundedSender<Arc<str>>,
        recorder: Arc<Recorder>,
        transport: TransportKind,
        conn: Arc<str>,
        stream: Option<Arc<str>>,
    ) -> Self {
        let meta = FrameMeta {
            dir: Direction::Out,
            transport,
            conn,
            stream,
            http: None,
        };
        Self { tx, recorder, meta }
    }

    /// Sends one message; `false` when the other side is gone.
    pub fn send(&self, message: &Message) -> bool {
        self.send_outgoing(&Outgoing::One(message.clone()))
    }

    /// Sends a message or a batch reply; `false` when the other side is gone.
    pub fn send_outgoing(&self, out: &Outgoing) -> bool {
        let (text, parsed) = match out {
            Outgoing::One(m) => {
                let value = m.to_value();
                (
                    Arc::<str>::from(value.to_string()),
                    Parsed::of_message(value, m),
                )
            }
            Outgoing::Batch(ms) => {
                let value = serde_json::Value::Array(ms.iter().map(Message::to_value).collect());
                let text = Arc::<str>::from(value.to_string());
                (
                    text,
                    Parsed {
                        msg: Some(value),
                        error: None,
                        kind: Kind::Batch,
                        method: None,
                        id: None,
                    },
                )
            }
        };
        let frame = text.clone();
        self.recorder
            .record_and_deliver(&self.meta, text, parsed, || self.tx.send(frame).is_ok())
    }
}

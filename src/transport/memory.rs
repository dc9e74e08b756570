//! An in-process connection: frames in and out through channels. Used by tests (Rust and
//! Python) to talk to a server without a subprocess, and by relays that carry frames from
//! elsewhere (a stdio relay child, a socket).

use super::{drive, Inbound};
use crate::server::Server;
use crate::traffic::{TransportKind, OVERSIZED_PREFIX};
use std::sync::Arc;
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The client end of an in-process connection.
pub struct MemoryConnection {
    /// The session id (the `conn` of its traffic records).
    pub id: Arc<str>,
    /// Frames to the server; dropping it closes the connection.
    pub to_server: Option<mpsc::UnboundedSender<Vec<u8>>>,
    /// Frames from the server (one JSON text each).
    pub from_server: mpsc::UnboundedReceiver<Arc<str>>,
    /// Ends the connection from the server side.
    pub shutdown: CancellationToken,
}

/// Opens a connection to `server`, served on `runtime`.
pub fn connect(server: &Arc<Server>, runtime: &Handle) -> MemoryConnection {
    let (out_tx, out_rx) = mpsc::unbounded_channel::<Arc<str>>();
    let (in_tx, in_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let session = server.open_session(TransportKind::Memory, Arc::new(out_tx));
    let id = session.id.clone();
    let shutdown = CancellationToken::new();
    let limit = server.config.max_message_bytes;
    let frames = futures::stream::unfold(in_rx, move |mut rx| async move {
        let bytes = rx.recv().await?;
        let inbound = if bytes.len() > limit {
            Inbound::Oversized {
                prefix: bytes[..OVERSIZED_PREFIX.min(bytes.len())].to_vec(),
                size: bytes.len(),
            }
        } else {
            Inbound::Frame(bytes)
        };
        Some((inbound, rx))
    });
    runtime.spawn(drive(server.clone(), session, frames, shutdown.clone()));
    MemoryConnection {
        id,
        to_server: Some(in_tx),
        from_server: out_rx,
        shutdown,
    }
}
